"""The step loop in one process: peak, growth, time of a step function, in RSS and in the
heap (what the step's allocations hold, tfbench.measure.heap), with Python's collector
read apart (tfbench.measure.collector): what a step keeps for good, the garbage a
collection frees, and the heap's growth between full collections.

Peaks are read from before the first iteration (warm-up included): glibc keeps freed
memory, so a baseline taken after warm-up hides transient peaks. Growth is fitted only
after warm-up, when caches, traces and allocator pools have settled.
"""

from __future__ import annotations

import array
import gc
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypedDict

import numpy as np

from tfbench.measure import collector, growth, heap
from tfbench.measure.growth import (
    confirming,
    leak_verdict,
    per_call,
    retained_verdict,
    theil_sen_interval,
    theil_sen_slope,
)
from tfbench.measure.meter import PeakMeter, rss_bytes, trim_heap

# The readings are preallocated (8 bytes each, twice): past this, the tool's own arrays
# would be a measurable part of the memory it reads.
MAX_ITERATIONS = 10_000_000


class Confirmation(TypedDict):
    """The rounds read after a window that grew a little (tfbench.measure.growth): their
    calls in all, and each round's calls and what it kept a call, with its 95% interval."""

    calls: int
    rounds: list[dict[str, Any]]  # {calls, bytes_per_iteration, interval}


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
    rss_leak: bool | None  # what RSS alone says (None: too few measured iterations)
    # The heap (tfbench.measure.heap): what the step keeps (after a full collection), the
    # garbage collections free, the heap's growth between full collections, and its exact
    # high-water mark; None where the heap cannot be read (heap_note says why).
    retained_bytes_per_iteration: float | None
    retained_interval: tuple[float, float] | None
    garbage_bytes_per_iteration: float | None
    garbage_interval: tuple[float, float] | None
    garbage_objects_per_iteration: float | None
    heap_growth_bytes_per_iteration: float | None
    confirmation: Confirmation | None  # where the window's small growth was confirmed
    collector: collector.Collector | None
    heap_peak_increase_bytes: int | None
    heap_note: str | None
    leak: bool | None  # from retained bytes where read, else from RSS (leak_basis)
    leak_basis: str  # "heap" or "rss"
    method: str
    baseline_rss_bytes: int
    status: str  # "ok" or "over_budget"
    rss_bytes: list[int]  # after each measured iteration
    warmup_rss_bytes: list[int]  # after each warm-up iteration
    heap_bytes: list[int]  # heap in use after each measured iteration (no collection)
    kept_heap_bytes: list[int]  # heap in use after each full collection (the window's points)


class _Series:
    """Readings after each iteration, preallocated (no growth of ours), warm-up apart."""

    def __init__(self, iterations: int, warmup: int) -> None:
        self.warmup = warmup
        self.rss = array.array("q", bytes(8 * iterations))
        self.heap = array.array("q", bytes(8 * iterations))
        self.seconds = array.array("d", bytes(8 * iterations))
        self.early = array.array("q", bytes(8 * warmup))
        self.done = self.ran = 0

    def add(self, k: int, seconds: float, rss: int, in_use: int | None) -> None:
        self.ran += 1
        if k < self.warmup:
            self.early[k] = rss
            return
        self.seconds[self.done], self.rss[self.done] = seconds, rss
        self.heap[self.done] = in_use or 0
        self.done += 1

    def measured(self, which: array.array) -> np.ndarray:
        return np.frombuffer(which, dtype=np.int64)[: self.done].astype(np.float64)

    def warmed(self) -> np.ndarray:
        return np.frombuffer(self.early, dtype=np.int64)[: min(self.ran, self.warmup)].astype(
            np.float64
        )


def measure(
    step: Callable[[], object],
    iterations: int,
    warmup: int,
    budget_bytes: int,
    meter: PeakMeter | None = None,
    confirm: bool = True,
) -> Reading:
    """Run `step` warmup + iterations times in this process and read its memory and time;
    where the window grew a little, rounds of calls confirm it unless `confirm` is False.

    Stops early with status "over_budget" once this process's RSS passes budget_bytes.
    """
    if iterations < 1 or warmup < 0:
        raise ValueError("iterations must be >= 1 and warmup >= 0")
    if iterations + warmup > MAX_ITERATIONS:
        raise ValueError(f"iterations + warmup must be at most {MAX_ITERATIONS}")
    meter, counter = meter or PeakMeter(), heap.PeakCounter()
    series = _Series(iterations, warmup)
    read_heap = heap.in_use if heap.in_use() is not None else lambda: None
    window = _window(counter, iterations)
    gc.collect()
    trim_heap()
    baseline, heap_baseline = rss_bytes(), counter.in_use()
    meter.reset()
    counter.reset()
    status, spent = "ok", 0.0
    collected = None
    try:
        for k in range(warmup + iterations):
            if k == warmup and window:
                window.start()
            start = time.perf_counter()
            step()
            elapsed = time.perf_counter() - start
            rss = rss_bytes()
            series.add(k, elapsed, rss, read_heap())
            if window and k >= warmup:
                spent += elapsed
                if window.due(k + 1 - warmup):
                    window.point()
            if rss > budget_bytes:
                status = "over_budget"
                break
        peak, heap_peak = meter.peak(), counter.peak()
        if window and window.points and status == "ok":  # after the peaks: not of the window
            _after(window, step, iterations, spent, lambda: rss_bytes() > budget_bytes, confirm)
    finally:
        meter.close()
        if window and window.points:  # Python's collector as it was, whatever happened
            collected = window.stop()
    return _reading(
        series, status, baseline, peak, heap_baseline, heap_peak, meter.method, collected
    )


def _after(
    window: collector.Window,
    step: Callable[[], object],
    iterations: int,
    spent: float,
    over: Callable[[], bool],
    confirm: bool,
) -> None:
    """After a whole window: its small growth confirmed where it grew (growth.confirming)
    and `confirm` asks it, then the tail of a user's loop."""
    if confirm and confirming(np.asarray(window.kept()), window.stride):
        window.confirm(step, iterations, over)
    window.tail(step, iterations, collector.TAIL_SHARE * spent, over)


def _window(counter: heap.PeakCounter, iterations: int) -> collector.Window | None:
    """The window's collector where the heap is read: mallinfo2 at its points; at each
    collection the preloaded counter (O(1)) where it is, else mallinfo2."""
    if heap.in_use() is None:
        return None
    cheap = counter.in_use if counter.in_use() is not None else heap.in_use
    return collector.Window(heap.in_use, cheap, iterations)  # type: ignore[arg-type]


def _over(peak: int | None, baseline: int | None) -> int | None:
    return None if peak is None or baseline is None else max(0, peak - baseline)


def _kept(collected: collector.Collected | None, done: int) -> dict[str, Any]:
    """The heap's figures of a window: kept (the slope after full collections), garbage
    (what collections freed, per call, and its interval over the points), the heap's growth
    between full collections (kept, and what only a full collection frees), the collector."""
    none: dict[str, Any] = dict.fromkeys(
        (
            "retained",
            "interval",
            "verdict",
            "confirmation",
            "garbage",
            "garbage_interval",
            "objects",
            "growth",
        )
    )
    if collected is None or len(collected.kept) < 2 or not done:
        return dict(none, kept=[], collector=collected and collected.collector)
    points, stride = np.asarray(collected.kept, dtype=np.float64), collected.stride
    slope, interval = per_call(points, stride)
    freed = np.asarray(collected.garbage, dtype=np.float64) / stride
    garbage = float(freed.mean())
    spread = (
        1.96 * float(freed.std(ddof=1)) / math.sqrt(len(freed)) if len(freed) > 1 else math.inf
    )
    old = collected.collector["old_garbage_per_call"]
    return {
        "retained": slope,
        "interval": interval,
        "verdict": retained_verdict(points, stride, collected.rounds),
        "confirmation": _confirmation(collected.rounds),
        "garbage": garbage,
        "garbage_interval": (garbage - spread, garbage + spread),
        "objects": collected.garbage_objects / (len(freed) * stride),
        "growth": slope + (old or 0.0),
        "kept": [int(h) for h in points],
        "collector": collected.collector,
    }


def _confirmation(rounds: list[growth.Round]) -> Confirmation | None:
    """The rounds read after the window, as a record keeps them; None where none was."""
    if not rounds:
        return None
    return Confirmation(
        calls=sum(r.calls for r in rounds),
        rounds=[
            {"calls": r.calls, "bytes_per_iteration": r.rate, "interval": [r.low, r.high]}
            for r in rounds
        ],
    )


def _reading(
    series: _Series,
    status: str,
    baseline: int,
    peak: int,
    heap_baseline: int | None,
    heap_peak: int | None,
    method: str,
    collected: collector.Collected | None = None,
) -> Reading:
    done, rss, warmed = series.done, series.measured(series.rss), series.warmed()
    slope = theil_sen_slope(rss if done else warmed)
    rss_leak = leak_verdict(rss, slope)
    note = heap.why_not()
    kept = _kept(collected, done)
    retained = kept["retained"]
    return Reading(
        iterations=done,
        warmup=series.warmup,
        warmup_run=len(warmed),
        seconds_per_iteration=float(sum(series.seconds[:done]) / done) if done else None,
        peak_increase_bytes=max(0, peak - baseline),
        growth_bytes_per_iteration=slope,
        growth_interval=theil_sen_interval(rss if done else warmed),
        rss_leak=rss_leak,
        retained_bytes_per_iteration=retained,
        retained_interval=kept["interval"],
        garbage_bytes_per_iteration=kept["garbage"],
        garbage_interval=kept["garbage_interval"],
        garbage_objects_per_iteration=kept["objects"],
        heap_growth_bytes_per_iteration=kept["growth"],
        confirmation=kept["confirmation"],
        collector=kept["collector"],
        heap_peak_increase_bytes=_over(heap_peak, heap_baseline),
        heap_note=note or heap.why_not(peak=True),
        leak=rss_leak if retained is None else kept["verdict"],
        leak_basis="rss" if retained is None else "heap",
        method=method,
        baseline_rss_bytes=baseline,
        status=status,
        rss_bytes=[int(r) for r in rss],
        warmup_rss_bytes=[int(r) for r in warmed],
        heap_bytes=[int(h) for h in series.measured(series.heap)] if retained is not None else [],
        kept_heap_bytes=kept["kept"],
    )
