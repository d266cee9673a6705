"""The measured record: what a child writes, the CLI prints, the benchmarks read and every
kept file holds. FIELDS declares it once: each key's form as kept (tfbench.keptfiles.fields
checks each form), whether a probe's repeat keeps it beside asv's results, how a point's
repeats combine it, and what it holds. A figure's key comes from its row of the figure table
(tfbench.figures), its kind deciding the rest; docs/formats.md's table of the record is
this declaration's (a test holds them the same)."""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any

from tfbench import figures

Record = dict[str, Any]  # a JSON object of FIELDS' keys; None where the run read nothing

# The forms of kept values a field takes (tfbench.keptfiles.fields holds each one's check).
TEXT = "text"  # free text, shown escaped
NUMBER = "number"  # finite, within the grammar's range
AMOUNT = "amount"  # a count, a size or a time: a number not below 0
SERIES = "series"  # a footprint's number, or a step's list (after each iteration)
BOOLEAN = "boolean"
INTERVAL = "interval"  # a 95% interval: low and high
STATUS = "status"  # one of STATUSES
PARAMS = "params"  # param name -> a plain value
DEVICE = "device"
COUNTERS = "counters"  # name -> a count
COLLECTOR = "collector"  # Python's collector as a window found it (collector.Collector)
CONFIRMATION = "confirmation"  # the rounds read after a window that grew a little

# How a point's repeats, each a fresh process, combine into its record (combine).
MEDIAN = "median"
MAJORITY = "majority"  # a tie is no verdict


@dataclass(frozen=True)
class Field:
    name: str
    form: str | None  # None: the run's own, never read back from a kept file
    what: str
    kept: bool = False  # each probe repeat keeps it beside asv's results (kept)
    combined: str | None = None  # MEDIAN or MAJORITY over a point's repeats
    carried: bool = False  # every record carries it (blank), None until read


def _figure(figure: figures.Figure) -> Field:
    """The record's key of a figure, as its kind keeps it: a footprint's RSS and heap are
    its own process's (never a probe's repeat), a verdict goes by the majority, the rest by
    the median."""
    assert figure.field is not None
    if figure.kind == figures.FOOTPRINT:
        return Field(figure.field, SERIES, f"{figure.what}; a step's: after each iteration")
    verdict = figure.kind == figures.VERDICT
    form, combined = (BOOLEAN, MAJORITY) if verdict else (NUMBER, MEDIAN)
    return Field(figure.field, form, figure.what, kept=True, combined=combined, carried=True)


def _interval(figure: figures.Figure) -> Field:
    assert figure.interval is not None
    return Field(figure.interval, INTERVAL, f"{figure.label}'s 95% interval", kept=True)


FIELDS = (
    Field("scenario", None, "a catalog id, or path::function"),
    Field("params", PARAMS, "the point's params"),
    Field("device", DEVICE, "CPU or GPU"),
    Field("tf_version", TEXT, "the TensorFlow that ran it"),
    Field("release", TEXT, "the release or nightly build it was read on (bisect, the watch)"),
    Field("status", STATUS, "how the run ended", kept=True),
    Field("error", TEXT, "why the status is not ok", kept=True),
    Field("traceback", None, "where the pattern itself failed"),
    Field("budget_bytes", AMOUNT, "the run's memory budget"),
    Field("warmup", AMOUNT, "warm-up iterations asked"),
    Field(
        "warmup_run",
        AMOUNT,
        "warm-up iterations run: fewer than asked when stopped in warm-up",
        kept=True,
    ),
    Field("iterations", AMOUNT, "measured iterations", kept=True, carried=True),
    # every figure a measured record holds (figures.Figure.recorded), in the table's order
    *(_figure(f) for f in figures.FIGURES if f.recorded),
    *(_interval(f) for f in figures.FIGURES if f.interval),
    Field(
        "method",
        TEXT,
        "how the peak was read: vmhwm, psutil-sampling (+unprimed)",
        kept=True,
        carried=True,
    ),
    Field(
        "rss_leak",
        BOOLEAN,
        "the verdict of RSS alone",
        kept=True,
        combined=MAJORITY,
    ),
    Field(
        "leak_basis", TEXT, "what the verdict rests on: heap (retained bytes) or rss", kept=True
    ),
    Field(
        "garbage_objects_per_iteration",
        AMOUNT,
        "the objects Python's collections free, per call",
        kept=True,
        combined=MEDIAN,
    ),
    Field("collector", COLLECTOR, "Python's collector and a loop's sawtooth", kept=True),
    Field(
        "confirmation",
        CONFIRMATION,
        "the rounds read after a window that grew a little (steps.Confirmation: their calls, "
        "each round's calls and bytes a call with its interval; absent before it)",
        kept=True,
    ),
    Field("heap_note", TEXT, "why the heap could not be read", kept=True),
    Field(
        "counters",
        COUNTERS,
        "graph_ops, traces, ... where the pattern is about them",
        kept=True,
    ),
    Field("baseline_rss_bytes", None, "RSS before the first iteration"),
    Field("warmup_rss_bytes", None, "RSS after each warm-up iteration"),
    Field("kept_heap_bytes", None, "the heap in use after each full collection of the window"),
    Field("import_seconds", AMOUNT, "a footprint's `import tensorflow`, in seconds"),
    Field("repeats", AMOUNT, "fresh processes a point was read in (combine)"),
    Field("measured", AMOUNT, "those of them that measured"),
)
STATUSES = ("ok", "over_budget", "timeout", "skipped", "error", "bad_input")
CARRIED = tuple(f.name for f in FIELDS if f.carried)
MEDIANS = tuple(f.name for f in FIELDS if f.combined == MEDIAN)
VERDICTS = tuple(f.name for f in FIELDS if f.combined == MAJORITY)
KEPT = tuple(f.name for f in FIELDS if f.kept)  # its per-iteration lists stay out


def blank(scenario: str, params: dict[str, Any], device: str, tf_version: str | None) -> Record:
    """A record with its identity and no figures yet."""
    record = Record(scenario=scenario, params=params, device=device, tf_version=tf_version)
    record.update(dict.fromkeys(CARRIED))
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


RSS_ONLY = "RSS grows, nothing retained: allocator caching or fragmentation, not a leak"


def rss_only_growth(record: Record) -> bool:
    """RSS calls it a leak and the heap, read, does not: the process grows without the
    step keeping anything (RSS_ONLY)."""
    return bool(record.get("rss_leak")) and record.get("leak") is False


def kept(record: Record) -> dict[str, Any]:
    """The part of a record kept for each repeat beside asv's results."""
    return {k: record[k] for k in KEPT if k in record}


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
