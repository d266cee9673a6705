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
# third, so a one-off step (a pool filling) is not a leak. The heap's (retained_verdict)
# needs the lower end of the slope's interval to reach LEAK_MIN_BYTES over the window, and
# the same sustained growth. Over a short window the heap of a pattern that does not leak
# still grows by what its caches fill, up to about 0.3 MiB (a tf.function called with new
# tensors, 300 calls; docs/measuring.md).
LEAK_MIN_BYTES = 1 * MiB
NOISE_FACTOR = 3
MIN_READINGS = 9
# Theil-Sen over at most this many readings (pairs grow with the square).
FIT_POINTS = 400


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


def retained_verdict(
    readings: np.ndarray, slope: float, interval: tuple[float, float]
) -> bool | None:
    """Whether the heap in use, read after each iteration, grows without bound: the lower
    end of its slope's 95% interval over the window reaches LEAK_MIN_BYTES, and the growth
    is sustained. The interval, not the readings' scatter, carries the noise: what a step
    keeps is read to the byte, while what it drops awaits Python's collector (a Keras
    predict's heap swings by 0.6 MiB between calls around a steady 18.5 KiB/call). None,
    no verdict, from fewer than MIN_READINGS readings."""
    readings = np.asarray(readings, dtype=np.float64)
    if len(readings) < MIN_READINGS:
        return None
    surely = interval[0] * (len(readings) - 1)
    return surely >= LEAK_MIN_BYTES and _sustained(readings, slope)
