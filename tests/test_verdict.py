"""The growth fit and the leak verdict on synthetic series: no process, no TensorFlow."""

import math

import numpy as np
import pytest

from tfbench.measure.growth import LEAK_MIN_BYTES, MIN_READINGS, leak_verdict, theil_sen_slope
from tfbench.units import MiB

RNG = np.random.default_rng(0)


def verdict(series):
    return leak_verdict(series, theil_sen_slope(series))


def test_theil_sen_reads_a_ramp_exactly_and_ignores_outliers():
    ramp = 100e6 + 4096.0 * np.arange(200)
    assert theil_sen_slope(ramp) == pytest.approx(4096)
    spiky = ramp.copy()
    spiky[::10] += 50 * MiB  # one reading in ten far off
    assert theil_sen_slope(spiky) == pytest.approx(4096, rel=0.01)


def test_theil_sen_of_too_few_readings_is_zero():
    assert theil_sen_slope([]) == 0.0 and theil_sen_slope([5.0]) == 0.0


def test_a_steady_ramp_is_a_leak():
    assert verdict(100e6 + 64 * 1024.0 * np.arange(100))  # 64 KiB/it, 6.2 MiB in all


def test_a_ramp_below_the_minimum_is_not():
    total = 0.5 * LEAK_MIN_BYTES
    assert not verdict(100e6 + np.linspace(0, total, 100))


def test_a_one_off_step_is_not_a_leak():
    """A pool that fills once: flat, a 20 MiB step, flat again. The fit sees growth; only
    the 'sustained' clause (every third above the last) tells it from a leak."""
    series = np.r_[np.full(50, 100e6), np.full(50, 120e6)]
    slope = theil_sen_slope(series)
    assert slope * (len(series) - 1) >= LEAK_MIN_BYTES  # the fit alone would call it a leak
    assert not leak_verdict(series, slope)


def test_noise_is_not_a_leak_20_of_20():
    for _ in range(20):
        assert not verdict(100e6 + RNG.normal(0, 1.5 * MiB, 200))


def test_a_leak_must_stand_out_of_the_noise():
    noisy = 100e6 + 8 * 1024.0 * np.arange(200) + RNG.normal(0, 5 * MiB, 200)
    assert not verdict(noisy)  # 1.6 MiB of growth inside +-5 MiB of scatter
    clear = 100e6 + 8 * 1024.0 * np.arange(200) + RNG.normal(0, 50 * 1024, 200)
    assert verdict(clear)


def test_too_few_readings_give_no_verdict():
    short = 100e6 + 10 * MiB * np.arange(MIN_READINGS - 1)
    assert verdict(short) is None  # neither leak nor flat
    assert verdict(100e6 + 10 * MiB * np.arange(MIN_READINGS))


def test_the_slope_interval_holds_the_true_slope_and_narrows_with_readings():
    from tfbench.measure.growth import theil_sen_interval

    hits = 0
    for _ in range(100):
        series = 100e6 + 4096.0 * np.arange(100) + RNG.normal(0, 64 * 1024, 100)
        low, high = theil_sen_interval(series)
        hits += low <= 4096 <= high
    assert hits >= 90  # a 95% interval: about 95 of 100
    long = 100e6 + 4096.0 * np.arange(400) + RNG.normal(0, 64 * 1024, 400)
    short_width = np.subtract(*theil_sen_interval(series)[::-1])
    assert np.subtract(*theil_sen_interval(long)[::-1]) < short_width


def test_repeats_combine_to_medians_and_the_majority_verdict():
    from tfbench.measure.record import combine

    def run(peak, leak, status="ok", traces=1):
        return {
            "status": status,
            "iterations": 10,
            "peak_increase_bytes": peak,
            "leak": leak,
            "growth_bytes_per_iteration": 0.0,
            "seconds_per_iteration": 0.001,
            "allocator_peak_bytes": None,
            "counters": {"traces": traces},
        }

    both = combine([run(10 * MiB, True), run(30 * MiB, False), run(12 * MiB, True)])
    assert both["peak_increase_bytes"] == 12 * MiB and both["leak"] is True
    assert both["repeats"] == 3 and both["measured"] == 3 and both["counters"] == {"traces": 1}
    tie = combine([run(1, True), run(1, False), {"status": "error", "error": "boom"}])
    assert tie["leak"] is None and tie["measured"] == 2  # a tie is no verdict
    failed = combine([{"status": "error", "error": "boom"}] * 3)
    assert failed["status"] == "error" and failed["error"] == "boom" and failed["measured"] == 0


WINDOW, STRIDE = 100, 2  # a user's step: 100 calls, the heap read every 2 (51 points)


def kept(per_call, calls=WINDOW, start=0, base=200 * MiB, noise=0.0, rng=None):
    """The heap after full collections at each point of `calls` calls from call `start`:
    base plus what `per_call(call)` keeps, summed, plus noise."""
    at = np.arange(start, start + calls + 1, STRIDE)
    grown = np.cumsum([per_call(c) for c in range(start + calls + 1)])[at]
    wobble = rng.normal(0, noise, len(at)) if rng is not None else 0.0
    return base + grown + wobble


def heap_verdict(per_call, noise=0.0, rng=None):
    """The verdict as a measurement reaches it: the window, and where it asks for them, the
    rounds after it (each twice the calls of the one before, as many points), until they
    settle it; and how many rounds were read."""
    from tfbench.measure import growth

    window = kept(per_call, noise=noise, rng=rng)
    if not growth.confirming(window, STRIDE):
        return growth.retained_verdict(window, STRIDE), 0
    first, start, rounds = growth.round_of(window, STRIDE), WINDOW, []
    for k in range(growth.ROUNDS):
        calls, stride = WINDOW << k, STRIDE << k
        at = np.arange(start, start + calls + 1, stride)
        grown = np.cumsum([per_call(c) for c in range(start + calls + 1)])[at]
        points = grown + (rng.normal(0, noise, len(at)) if rng is not None else 0.0)
        rounds.append(growth.round_of(points, stride))
        start += calls
        if growth.settled(first, rounds, k == growth.ROUNDS - 1) is not None:
            break
    return growth.retained_verdict(window, STRIDE, rounds), len(rounds)


@pytest.mark.parametrize("size", [64, 512, 4 * 1024, 64 * 1024])
def test_a_leak_of_any_size_is_a_leak_at_the_default_window(size):
    found, rounds = heap_verdict(lambda call: size)
    assert found is True
    if size * WINDOW >= MiB:
        assert rounds == 0  # a leak of a MiB a window needs none
    else:  # read until a MiB is kept, or every round
        from tfbench.measure.growth import ROUNDS

        assert rounds == min(ROUNDS, math.ceil(math.log2(MiB / (size * WINDOW) + 1)))


def test_a_cache_that_fills_once_and_stops_is_flat_after_one_round():
    """4 KiB a call for the first 54 calls of the window, then none: it grows through half
    the window; the round after it reads 0."""
    assert heap_verdict(lambda call: 4096 if call < 54 else 0) == (False, 1)


def test_caches_that_fill_ever_slower_are_flat():
    """TensorFlow's: a tf.while_loop in a tf.function under a tape kept 783 B/call over its
    window, 395 B/call 100 calls later, 12 B/call 1,000 calls later. A rate falling as 1/t or
    faster, or as slowly as t**-0.5, is flat; so is one that holds for 1,000 calls, then
    falls (the slowest of the suite's caches, seed 000 example 2)."""
    assert heap_verdict(lambda call: 900 * 20 / (20 + call))[0] is False
    assert heap_verdict(lambda call: 2000 * np.exp(-call / 60))[0] is False
    assert heap_verdict(lambda call: 800 / np.sqrt(1 + call))[0] is False
    assert heap_verdict(lambda call: 160 if call < 1000 else 160 * 1000 / call)[0] is False


def test_a_small_leak_beside_a_filling_cache_is_a_leak():
    """tensorflow#68196's 421 B/call under a cache that fills at first (±40 B of noise)."""
    rng = np.random.default_rng(0)
    found = [
        heap_verdict(lambda call: 421 + 2000 * np.exp(-call / 30), noise=40, rng=rng)[0]
        for _ in range(20)
    ]
    assert found == [True] * 20


def test_noise_a_one_off_pool_and_too_few_points_are_no_leak():
    from tfbench.measure.growth import retained_verdict

    rng = np.random.default_rng(1)
    assert [heap_verdict(lambda call: 0, noise=200, rng=rng)[0] for _ in range(20)] == [False] * 20
    pool = kept(lambda call: 2 * MiB if call == 50 else 0)  # one pool of 2 MiB, once
    assert retained_verdict(pool, STRIDE) is False
    assert retained_verdict(np.full(8, 1.0), STRIDE) is None


def test_a_leak_of_a_mib_a_window_needs_no_confirmation_under_a_swinging_collector():
    """Keras' predict on Keras 2: 18.5 KiB/call kept, the heap swinging 0.6 MiB around it
    as Python's collector runs; read in 100 calls, every time."""
    from tfbench.measure.growth import confirming, retained_verdict

    rng = np.random.default_rng(0)
    verdicts = []
    for _ in range(20):
        swing = rng.uniform(0, 1.2 * MiB, 51) * (rng.random(51) < 0.5)
        heap = kept(lambda call: 18.5 * 1024) + swing
        assert not confirming(heap, STRIDE)
        verdicts.append(retained_verdict(heap, STRIDE))
    assert verdicts == [True] * 20


def test_without_a_confirmation_the_windows_later_half_is_read():
    """Stopped by the budget or the clock: the window's own later half stands in."""
    from tfbench.measure.growth import retained_verdict

    assert retained_verdict(kept(lambda call: 421), STRIDE) is True
    assert retained_verdict(kept(lambda call: 4096 if call < 40 else 0), STRIDE) is False
