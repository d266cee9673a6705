"""Growth per iteration and the leak verdict, from RSS readings taken after each iteration.

Pure arithmetic on a series: the unit tests feed it synthetic ramps, steps and noise.
"""

from __future__ import annotations

import math

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
# caches fill at first and then ever slower (a loop of tf.matmul under a tape kept 629 B/call
# over its first 80 calls, 192 over the next 80, 83 over calls 320-400), a leak does not;
# so where the window grows by less than LEAK_MIN_BYTES, a confirmation of CONFIRM times the
# window's calls follows it, and its later half must still grow at STEADY_SHARE of its first
# half's rate or more (a rate falling as 1/t reads 0.46; a leak beside a cache filling ~1),
# the lower end of its slope above KEPT_FLOOR: half the smallest planted leak (64 B/call);
# the slowest caches of the suite keep 9-13 B/call after 2,000-4,000 calls
# (docs/validation/verdict.md).
KEPT_FLOOR = 32
STEADY_SHARE = 0.75
CONFIRM = 4


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


def retained_verdict(
    points: np.ndarray, stride: int, confirmed: np.ndarray | None = None
) -> bool | None:
    """Whether what a step keeps (the heap after full collections, read at `points` of the
    window, `stride` calls apart) grows without bound: a leak at any size that keeps
    growing by about the same bytes a call. Flat where the window's slope is not surely
    above KEPT_FLOOR; a leak where it keeps LEAK_MIN_BYTES (sustained); else as the
    `confirmed` points read after the window (the same stride) say: their later half grows
    at STEADY_SHARE of their first half's rate or more, the lower end of its slope above
    KEPT_FLOOR. Without a confirmation (stopped by the budget or the clock), the window's
    own halves are read the same way. None, no verdict, from fewer than MIN_READINGS points."""
    points = np.asarray(points, dtype=np.float64)
    if len(points) < MIN_READINGS:
        return None
    slope, (low, _) = per_call(points, stride)
    if low <= KEPT_FLOOR:
        return False
    if _sure(points, slope, low, stride):
        return True
    read = np.asarray(confirmed if confirmed is not None else [], dtype=np.float64)
    if len(read) < MIN_READINGS:
        read = points
    half = len(read) // 2
    early, _ = per_call(read[: half + 1], stride)
    late, (late_low, _) = per_call(read[half:], stride)
    return late_low > KEPT_FLOOR and late >= STEADY_SHARE * early
