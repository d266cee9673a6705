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

from tfbench.measure.meter import PeakMeter, rss_bytes, trim_heap
from tfbench.measure.verdict import leak_verdict, theil_sen_interval, theil_sen_slope

# The readings are preallocated (8 bytes each, twice): past this, the tool's own arrays
# would be a measurable part of the memory it reads.
MAX_ITERATIONS = 10_000_000


@dataclass
class Reading:
    iterations: int  # measured iterations actually run (after warm-up)
    warmup: int  # warm-up iterations asked for
    warmup_run: int  # warm-up iterations actually run (fewer when stopped in warm-up)
    seconds_per_iteration: float | None  # None when stopped before any measured iteration
    peak_increase_bytes: int
    # fitted over the measured iterations; over the warm-up when stopped before them
    growth_bytes_per_iteration: float
    growth_interval: tuple[float, float]  # its 95% confidence interval (Sen's)
    leak: bool | None  # None: too few measured iterations for a verdict (verdict.MIN_READINGS)
    method: str
    baseline_rss_bytes: int
    status: str  # "ok" or "over_budget"
    rss_bytes: list[int]  # after each measured iteration
    warmup_rss_bytes: list[int]  # after each warm-up iteration


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
    if iterations + warmup > MAX_ITERATIONS:
        raise ValueError(f"iterations + warmup must be at most {MAX_ITERATIONS}")
    meter = meter or PeakMeter()
    readings = array.array("q", bytes(8 * iterations))  # preallocated: no growth of ours
    durations = array.array("d", bytes(8 * iterations))
    early = array.array("q", bytes(8 * warmup))
    gc.collect()
    trim_heap()
    baseline = rss_bytes()
    meter.reset()
    status, done, ran = "ok", 0, 0
    try:
        for k in range(warmup + iterations):
            start = time.perf_counter()
            step()
            elapsed = time.perf_counter() - start
            rss, ran = rss_bytes(), ran + 1
            if k >= warmup:
                durations[done], readings[done] = elapsed, rss
                done += 1
            else:
                early[k] = rss
            if rss > budget_bytes:
                status = "over_budget"
                break
        peak = meter.peak()
    finally:
        meter.close()
    measured = np.frombuffer(readings, dtype=np.int64)[:done].astype(np.float64)
    warmed = np.frombuffer(early, dtype=np.int64)[: min(ran, warmup)].astype(np.float64)
    slope = theil_sen_slope(measured if done else warmed)
    return Reading(
        iterations=done,
        warmup=warmup,
        warmup_run=len(warmed),
        seconds_per_iteration=float(sum(durations[:done]) / done) if done else None,
        peak_increase_bytes=max(0, peak - baseline),
        growth_bytes_per_iteration=slope,
        growth_interval=theil_sen_interval(measured if done else warmed),
        leak=leak_verdict(measured, slope),
        method=meter.method,
        baseline_rss_bytes=baseline,
        status=status,
        rss_bytes=[int(r) for r in measured],
        warmup_rss_bytes=[int(r) for r in warmed],
    )
