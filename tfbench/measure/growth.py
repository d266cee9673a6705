"""Growth per iteration and the leak verdict, from RSS readings taken after each iteration.

Pure arithmetic on a series: the unit tests feed it synthetic ramps, steps and noise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from tfbench.units import MiB

# RSS's leak verdict needs the fitted growth over the measured window to reach
# LEAK_MIN_BYTES and NOISE_FACTOR times the readings' own scatter around the fit
# (TensorFlow's RSS swings by megabytes between iterations), and to be sustained: each third
# of the readings sits above the one before by at least a quarter of the fitted growth per
# third, so a one-off step (a pool filling) is not a leak.
LEAK_MIN_BYTES = 1 * MiB
NOISE_FACTOR = 3
MIN_READINGS = 9
# Theil-Sen over at most this many readings (pairs grow with the square).
FIT_POINTS = 400
# What the step keeps (the heap after full collections, read to the byte) is a leak at any
# size that keeps growing by about the same bytes a call: retained_verdict. TensorFlow's
# caches fill at first and then ever slower, for thousands of calls (a tf.while_loop in a
# tf.function under a tape kept 783 B/call over its 40-call window, 395 B/call 100 calls
# later, 12 B/call 1,000 calls later), a leak does not. So where the window grows by less
# than LEAK_MIN_BYTES, rounds follow it, each of twice the calls of the one before (the
# window's first; a round the clock cuts short counts for nothing), ROUNDS at most: it is
# flat once a round surely keeps KEPT_FLOOR or less a call, or once two rounds in a row
# surely keep less than STEADY_SHARE of the rate before them at a pace that brings it under
# KEPT_FLOOR by the last round; a leak once a round is steady (keeps STEADY_SHARE of the rate
# before it a doubling, `settled`) and LEAK_MIN_BYTES have been kept since the window
# started, or, at the last round, where it is steady, the lower end of its rate above
# KEPT_FLOOR. KEPT_FLOOR is half the smallest planted leak (64 B/call);
# the slowest caches of the suite keep 1-13 B/call after 4,000 calls
# (docs/validation/verdict.md).
KEPT_FLOOR = 32
STEADY_SHARE = 0.75
ROUNDS = 5  # 31 times the window's calls at most


@dataclass(frozen=True)
class Round:
    """A round of calls read after the window: what it kept a call, with its interval."""

    calls: int
    rate: float
    low: float
    high: float
    grown: float  # the heap's growth over the round


def theil_sen_slope(y: np.ndarray) -> float:
    """Median of pairwise slopes of y against its index: robust to outliers and steps."""
    y = np.asarray(y, dtype=np.float64)
    if len(y) < 2:
        return 0.0
    x = np.linspace(0, len(y) - 1, min(len(y), FIT_POINTS))
    ys = y[x.round().astype(int)]
    i, j = np.triu_indices(len(x), k=1)
    return float(np.median((ys[j] - ys[i]) / (x[j] - x[i])))


def theil_sen_interval(y: np.ndarray, z: float = 1.96) -> tuple[float, float]:
    """Sen's confidence interval of the slope (95% for z=1.96): the order statistics of the
    pairwise slopes that Kendall's rank statistic puts at +-z standard deviations."""
    y = np.asarray(y, dtype=np.float64)
    if len(y) < 3:
        return (-math.inf, math.inf)
    x = np.linspace(0, len(y) - 1, min(len(y), FIT_POINTS))
    ys = y[x.round().astype(int)]
    n = len(x)
    i, j = np.triu_indices(n, k=1)
    slopes = np.sort((ys[j] - ys[i]) / (x[j] - x[i]))
    half = z * math.sqrt(n * (n - 1) * (2 * n + 5) / 18) / 2
    low, high = int(math.floor(len(slopes) / 2 - half)), int(math.ceil(len(slopes) / 2 + half))
    return (float(slopes[max(low, 0)]), float(slopes[min(high, len(slopes) - 1)]))


def leak_verdict(readings: np.ndarray, slope: float) -> bool | None:
    """Whether readings that grow by `slope` per iteration are a leak (see the constants);
    None, no verdict, from fewer than MIN_READINGS readings."""
    readings = np.asarray(readings, dtype=np.float64)
    if len(readings) < MIN_READINGS:
        return None
    fitted = slope * (len(readings) - 1)
    residuals = readings - slope * np.arange(len(readings))
    scatter = 1.4826 * np.median(np.abs(residuals - np.median(residuals)))
    noisy = fitted < max(LEAK_MIN_BYTES, NOISE_FACTOR * scatter)
    return not noisy and _sustained(readings, slope)


def _sustained(readings: np.ndarray, slope: float) -> bool:
    """Each third of the readings above the one before by at least a quarter of the whole
    window's fitted growth per third: growth throughout, not one step (a pool filling)."""
    first, middle, last = (np.median(t) for t in np.array_split(readings, 3))
    return bool(min(middle - first, last - middle) >= slope * (len(readings) - 1) / 3 / 4)


def per_call(points: np.ndarray, stride: int) -> tuple[float, tuple[float, float]]:
    """The kept heap's slope per call, read at points `stride` calls apart, and its 95%
    interval."""
    low, high = theil_sen_interval(points)
    return theil_sen_slope(points) / stride, (low / stride, high / stride)


def confirming(points: np.ndarray, stride: int) -> bool:
    """Whether the window's kept heap calls for a confirmation (retained_verdict): it grows,
    the lower end of its slope above KEPT_FLOOR, and by less than a leak no cache reaches."""
    points = np.asarray(points, dtype=np.float64)
    if len(points) < MIN_READINGS:
        return False
    slope, (low, _) = per_call(points, stride)
    return low > KEPT_FLOOR and not _sure(points, slope, low, stride)


def _sure(points: np.ndarray, slope: float, low: float, stride: int) -> bool:
    """A leak without a confirmation: the lower end of the window's slope keeps
    LEAK_MIN_BYTES over it, grown throughout (no cache of the suite reaches a MiB in a
    window; a confirmation would hold four times as much)."""
    return low * stride * (len(points) - 1) >= LEAK_MIN_BYTES and _sustained(
        points, slope * stride
    )


def round_of(points: np.ndarray, stride: int) -> Round:
    """A round read at `points` (its start first), `stride` calls apart."""
    points = np.asarray(points, dtype=np.float64)
    rate, (low, high) = per_call(points, stride)
    grown = float(points[-1] - points[0])
    return Round((len(points) - 1) * stride, rate, low, high, grown)


def settled(window: Round, rounds: list[Round], last: bool) -> bool | None:
    """The verdict once the latest of `rounds` is read after the `window` (see the
    constants), or None: read another round (none is `last`). A round is steady where it
    keeps STEADY_SHARE of the rate of the one before it, compared over two rounds (the share
    squared) where there are two: one round's rate moves by a sixth from one process to the
    next."""
    read = [window, *rounds]
    latest = read[-1]
    if latest.high <= KEPT_FLOOR:
        return False  # it stopped
    base, share = (read[-3], STEADY_SHARE**2) if len(read) > 2 else (window, STEADY_SHARE)
    steady = latest.low > KEPT_FLOOR and latest.rate >= share * base.rate
    if steady and sum(r.grown for r in read) >= LEAK_MIN_BYTES:
        return True
    if last:
        return steady
    return False if _fading(read) else None


def _fading(read: list[Round]) -> bool:
    """The last two of `read` (the window, then its rounds) each surely keep less than
    STEADY_SHARE of the rate before them, at a pace that brings the rate under KEPT_FLOOR by
    the last round: a cache filling, read no further."""
    if len(read) < 3:
        return False
    a, b, c = read[-3:]
    if not (b.high < STEADY_SHARE * a.low and c.high < STEADY_SHARE * b.low):
        return False
    left = ROUNDS - (len(read) - 1)
    return c.rate * (c.rate / b.rate) ** left < KEPT_FLOOR


def retained_verdict(
    points: np.ndarray, stride: int, rounds: list[Round] | None = None
) -> bool | None:
    """Whether what a step keeps (the heap after full collections, read at `points` of the
    window, `stride` calls apart) grows without bound: a leak at any size that keeps
    growing by about the same bytes a call. Flat where the window's slope is not surely
    above KEPT_FLOOR; a leak where it keeps LEAK_MIN_BYTES (sustained); else as the
    `rounds` read after the window settle it (`settled`). Without a round (stopped by the
    budget or the clock), the window's later half stands for one. None, no verdict, from
    fewer than MIN_READINGS points."""
    points = np.asarray(points, dtype=np.float64)
    if len(points) < MIN_READINGS:
        return None
    slope, (low, _) = per_call(points, stride)
    if low <= KEPT_FLOOR:
        return False
    if _sure(points, slope, low, stride):
        return True
    window = round_of(points, stride)
    if not rounds:
        half = len(points) // 2
        window, rounds = round_of(points[: half + 1], stride), [round_of(points[half:], stride)]
    for k in range(len(rounds)):
        found = settled(window, rounds[: k + 1], k == len(rounds) - 1)
        if found is not None:
            return found
    return False
