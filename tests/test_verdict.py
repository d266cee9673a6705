"""The growth fit and the leak verdict on synthetic series: no process, no TensorFlow."""

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


def test_the_heaps_verdict_reads_a_steady_leak_under_a_swinging_collector():
    """Keras' predict: 18.5 KiB/call kept, the heap swinging 0.6 MiB around it as Python's
    collector runs; read in 100 calls, every time. RSS's rule (3x the scatter) split such
    a point's three processes 2 to 1."""
    from tfbench.measure.growth import retained_verdict, theil_sen_interval, theil_sen_slope

    rng = np.random.default_rng(0)
    verdicts = []
    for _ in range(20):
        swing = rng.uniform(0, 1.2 * MiB, 100) * (rng.random(100) < 0.5)
        heap = 200 * MiB + 18.5 * 1024 * np.arange(100) + swing
        slope = theil_sen_slope(heap)
        verdicts.append(retained_verdict(heap, slope, theil_sen_interval(heap)))
    assert verdicts == [True] * 20


def test_the_heaps_verdict_leaves_filling_caches_steps_and_short_windows_alone():
    from tfbench.measure.growth import retained_verdict, theil_sen_interval, theil_sen_slope

    def verdict(heap):
        heap = np.asarray(heap, dtype=np.float64)
        return retained_verdict(heap, theil_sen_slope(heap), theil_sen_interval(heap))

    calls = np.arange(300)
    filling = 200 * MiB + 0.3 * MiB * (1 - np.exp(-calls / 100))  # a cache: 0.3 MiB, bounded
    assert verdict(filling) is False
    step = 200 * MiB + 2 * MiB * (calls >= 150)  # one pool of 2 MiB, once
    assert verdict(step) is False
    small = 200 * MiB + 900 * calls  # 0.26 MiB over the window: read, not a verdict
    assert verdict(small) is False
    assert verdict(200 * MiB + 64 * 1024 * np.arange(40)) is True
    assert verdict([1.0] * 8) is None
