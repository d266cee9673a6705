"""The step loop in one process: peak, growth, time of a step function.

Peak increase is read from before the first iteration (warm-up included): glibc keeps
freed memory, so a baseline taken after warm-up hides transient peaks. Growth is fitted
only after warm-up, when caches, traces and allocator pools have settled.
"""

from __future__ import annotations

import array
import gc
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from tfbench.measure.meter import PeakMeter, rss_bytes
from tfbench.measure.verdict import leak_verdict, theil_sen_slope


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


def measure(
    step: Callable[[], object],
    iterations: int,
    warmup: int,
    budget_bytes: int,
    meter: PeakMeter | None = None,
) -> Reading:
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
