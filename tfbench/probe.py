"""The in-process measurement of a step function: peak, growth, time.

Peak increase is read from before the first iteration (warm-up included): glibc keeps
freed memory, so a baseline taken after warm-up hides transient peaks. Growth is fitted
only after warm-up, when caches, traces and allocator pools have settled.
"""

from __future__ import annotations

import array
import gc
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np

from tfbench.memory import PeakMeter, rss_bytes

MiB = 1 << 20
# A leak verdict needs the fitted growth over the measured window to reach LEAK_MIN_BYTES
# and NOISE_FACTOR times the readings' own scatter around the fit (TensorFlow's RSS swings
# by megabytes between iterations), and to be sustained: each third of the readings sits
# above the one before by at least a quarter of the fitted growth per third, so a one-off
# step (a pool filling) is not a leak.
LEAK_MIN_BYTES = 1 * MiB
NOISE_FACTOR = 3
# Theil-Sen over at most this many readings (pairs grow with the square).
FIT_POINTS = 400


@dataclass
class Reading:
    iterations: int  # measured iterations actually run (after warm-up)
    warmup: int
    seconds_per_iteration: float | None  # None when stopped before any measured iteration
    peak_increase_bytes: int
    growth_bytes_per_iteration: float
    leak: bool
    method: str
    baseline_rss_bytes: int
    status: str  # "ok" or "over_budget"
    rss_bytes: list[int]  # after each measured iteration


def theil_sen_slope(y: np.ndarray) -> float:
    """Median of pairwise slopes of y against its index: robust to outliers and steps."""
    y = np.asarray(y, dtype=np.float64)
    if len(y) < 2:
        return 0.0
    x = np.linspace(0, len(y) - 1, min(len(y), FIT_POINTS))
    ys = y[x.round().astype(int)]
    i, j = np.triu_indices(len(x), k=1)
    return float(np.median((ys[j] - ys[i]) / (x[j] - x[i])))


def leak_verdict(readings: np.ndarray, slope: float) -> bool:
    if len(readings) < 9:
        return False
    fitted = slope * (len(readings) - 1)
    residuals = readings - slope * np.arange(len(readings))
    scatter = 1.4826 * np.median(np.abs(residuals - np.median(residuals)))
    first, middle, last = (np.median(t) for t in np.array_split(readings, 3))
    sustained = min(middle - first, last - middle) >= fitted / 3 / 4
    return bool(fitted >= max(LEAK_MIN_BYTES, NOISE_FACTOR * scatter) and sustained)


def measure(step: Callable[[], object], iterations: int, warmup: int,
            budget_bytes: int, meter: PeakMeter | None = None) -> Reading:
    """Run `step` warmup + iterations times in this process and read its memory and time.

    Stops early with status "over_budget" once this process's RSS passes budget_bytes.
    """
    if iterations < 1 or warmup < 0:
        raise ValueError("iterations must be >= 1 and warmup >= 0")
    meter = meter or PeakMeter()
    readings = array.array("q", bytes(8 * iterations))  # preallocated: no growth of ours
    durations = array.array("d", bytes(8 * iterations))
    gc.collect()
    baseline = rss_bytes()
    meter.reset()
    status, done = "ok", 0
    try:
        for k in range(warmup + iterations):
            start = time.perf_counter()
            step()
            elapsed = time.perf_counter() - start
            rss = rss_bytes()
            if k >= warmup:
                durations[done], readings[done] = elapsed, rss
                done += 1
            if rss > budget_bytes:
                status = "over_budget"
                break
        peak = meter.peak()
    finally:
        meter.close()
    measured = np.frombuffer(readings, dtype=np.int64)[:done].astype(np.float64)
    slope = theil_sen_slope(measured)
    return Reading(
        iterations=done,
        warmup=warmup,
        seconds_per_iteration=float(sum(durations[:done]) / done) if done else None,
        peak_increase_bytes=max(0, peak - baseline),
        growth_bytes_per_iteration=slope,
        leak=leak_verdict(measured, slope),
        method=meter.method,
        baseline_rss_bytes=baseline,
        status=status,
        rss_bytes=[int(r) for r in measured],
    )
