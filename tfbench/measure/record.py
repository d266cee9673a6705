"""The measured record: what a child writes, the CLI prints and the benchmarks read."""

from __future__ import annotations

import statistics
from typing import Any

# A record is a JSON object; its keys (None where the run produced no reading):
#   scenario: str  # a catalog id, or path::function
#   params: dict[str, Any]
#   device: str
#   tf_version: str | None
#   status: str  # one of STATUSES
#   error: str  # why the status is not "ok"
#   traceback: str  # where the pattern itself failed
#   budget_bytes: int
#   # the figures (None where the run produced no reading)
#   iterations: int | None
#   warmup: int
#   warmup_run: int  # warm-up iterations run: fewer than `warmup` when stopped in warm-up
#   seconds_per_iteration: float | None
#   peak_increase_bytes: int | None
#   growth_bytes_per_iteration: float | None  # the warm-up's when stopped in warm-up
#   growth_interval: list[float]  # its 95% confidence interval, low and high
#   rss_leak: bool | None  # the verdict of RSS alone
#   # the heap (tfbench.measure.heap): None where it cannot be read, heap_note says why
#   retained_bytes_per_iteration: float | None  # kept: the slope of the heap in use after
#                                               # full collections (tfbench.measure.collector)
#   retained_interval: list[float] | None  # its 95% confidence interval
#   garbage_bytes_per_iteration: float | None  # what Python's collections free, per call
#   garbage_interval: list[float] | None  # its 95% confidence interval
#   garbage_objects_per_iteration: float | None  # the objects they free, per call
#   heap_growth_bytes_per_iteration: float | None  # the heap's growth between full
#                                                  # collections: kept and what piles for one
#   collector: dict | None  # Python's collector and a loop's sawtooth (collector.Collector)
#   heap_peak_increase_bytes: int | None  # the heap's exact high-water over its start
#   heap_note: str | None
#   leak: bool | None  # None: no verdict (too few measured iterations)
#   leak_basis: str  # heap (retained bytes) or rss
#   method: str | None  # how the peak was read: vmhwm, psutil-sampling (+unprimed)
#   allocator_peak_bytes: int | None  # GPU only
#   baseline_rss_bytes: int
#   rss_bytes: list[int]  # after each measured iteration
#   warmup_rss_bytes: list[int]  # after each warm-up iteration
#   heap_bytes: list[int]  # heap in use after each measured iteration
#   kept_heap_bytes: list[int]  # heap in use after each full collection of the window
#   counters: dict[str, int]  # graph_ops, traces, ... where the pattern is about them
Record = dict[str, Any]


STATUSES = ("ok", "over_budget", "timeout", "skipped", "error", "bad_input")
# Every record carries these keys; None where the run produced no reading.
FIGURES = (
    "iterations",
    "seconds_per_iteration",
    "peak_increase_bytes",
    "growth_bytes_per_iteration",
    "retained_bytes_per_iteration",
    "garbage_bytes_per_iteration",
    "heap_growth_bytes_per_iteration",
    "heap_peak_increase_bytes",
    "leak",
    "method",
    "allocator_peak_bytes",
)
# The figures a point's repeats are combined into by their median.
MEDIANS = (
    "seconds_per_iteration",
    "peak_increase_bytes",
    "growth_bytes_per_iteration",
    "retained_bytes_per_iteration",
    "garbage_bytes_per_iteration",
    "garbage_objects_per_iteration",
    "heap_growth_bytes_per_iteration",
    "heap_peak_increase_bytes",
    "allocator_peak_bytes",
)
VERDICTS = ("leak", "rss_leak")


def blank(scenario: str, params: dict[str, Any], device: str, tf_version: str | None) -> Record:
    """A record with its identity and no figures yet."""
    record = Record(scenario=scenario, params=params, device=device, tf_version=tf_version)
    record.update(dict.fromkeys(FIGURES))
    return record


FOOTPRINT = "footprint"  # tfbench.scenarios.footprint's record: figures, no iterations


def measured(record: Record) -> bool:
    """Whether the record has figures: measured iterations, and so a leak verdict (an
    over-budget run may: it stops, keeping its readings), or TensorFlow's footprint."""
    if record.get("scenario") == FOOTPRINT:
        return record["status"] == "ok"
    return record["status"] in ("ok", "over_budget") and bool(record.get("iterations"))


def stopped_in_warmup(record: Record) -> bool:
    """Stopped at the budget before any measured iteration: figures of the warm-up only."""
    return (
        record["status"] == "over_budget"
        and not record.get("iterations")
        and bool(record.get("warmup_run"))
    )


# What a repeat keeps beside the results (its per-iteration RSS lists stay out).
KEPT_KEYS = (
    "status",
    "error",
    *FIGURES,
    "warmup_run",
    "growth_interval",
    "retained_interval",
    "garbage_interval",
    "garbage_objects_per_iteration",
    "collector",
    "rss_leak",
    "leak_basis",
    "heap_note",
    "counters",
)


RSS_ONLY = "RSS grows, nothing retained: allocator caching or fragmentation, not a leak"


def rss_only_growth(record: Record) -> bool:
    """RSS calls it a leak and the heap, read, does not: the process grows without the
    step keeping anything (RSS_ONLY)."""
    return bool(record.get("rss_leak")) and record.get("leak") is False


def kept(record: Record) -> dict[str, Any]:
    """The part of a record kept for each repeat beside asv's results."""
    return {k: record[k] for k in KEPT_KEYS if k in record}


def combine(repeats: list[Record]) -> Record:
    """One record for a point measured in several fresh processes: the median of each
    figure over the repeats that measured, each verdict of the majority (a tie is no
    verdict), the first repeat's reason when none measured."""
    done = [r for r in repeats if measured(r)]
    if not done:
        return dict(repeats[0], repeats=len(repeats), measured=0)
    out = dict(done[0], repeats=len(repeats), measured=len(done))
    for figure in MEDIANS:
        values = [r[figure] for r in done if r.get(figure) is not None]
        out[figure] = statistics.median(values) if values else None
    for verdict in VERDICTS:
        verdicts = [r[verdict] for r in done if r.get(verdict) is not None]
        leaks = sum(verdicts)
        tie = not verdicts or 2 * leaks == len(verdicts)
        out[verdict] = None if tie else 2 * leaks > len(verdicts)
    names = {name for r in done for name in r.get("counters", {})}
    out["counters"] = {
        n: statistics.median(r["counters"][n] for r in done if n in r.get("counters", {}))
        for n in names
    }
    return out
