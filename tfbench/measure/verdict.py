"""Growth per iteration and the leak verdict, from RSS readings taken after each iteration.

Pure arithmetic on a series: the unit tests feed it synthetic ramps, steps and noise.
"""

from __future__ import annotations

import math

import numpy as np

from tfbench.units import MiB

# A leak verdict needs the fitted growth over the measured window to reach LEAK_MIN_BYTES
# and NOISE_FACTOR times the readings' own scatter around the fit (TensorFlow's RSS swings
# by megabytes between iterations), and to be sustained: each third of the readings sits
# above the one before by at least a quarter of the fitted growth per third, so a one-off
# step (a pool filling) is not a leak.
# The same rule reads RSS and the heap in use (tfbench.measure.steps); over a short window
# the heap of a pattern that does not leak still grows by what its caches fill, up to about
# 0.3 MiB (a tf.function called with new tensors, 300 calls; docs/measuring.md).
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
    first, middle, last = (np.median(t) for t in np.array_split(readings, 3))
    sustained = min(middle - first, last - middle) >= fitted / 3 / 4
    return bool(fitted >= max(LEAK_MIN_BYTES, NOISE_FACTOR * scatter) and sustained)
