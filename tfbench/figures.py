"""Every figure tfbench reads, once: its short name (the CLI's --metric, a bisection's
metric, the report's), the asv benchmark method that reports it, the measured record's
field, its unit, its label in text, how far apart two readings must be to count as a
change (tfbench.floors), and what it counts. The probe, the gate, bisect, the report, the
nightly bisection and the CLI derive what they need from FIGURES; a new figure is a row
here (and, for asv, `track_NAME = common.track("track_NAME")` on the classes that report
it)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from tfbench import floors

Floor = Callable[[list[float]], float]

# What kind of number a figure is, which decides how its readings are compared.
SLOPE = "slope"  # bytes a call: a fitted slope with its 95% interval
PEAK = "peak"  # bytes over a run's start (or a process's)
VERDICT = "verdict"  # leak (1) or flat (0)
TIME = "time"  # seconds a call
COUNT = "count"  # operations, traces: exact
FOOTPRINT = "footprint"  # TensorFlow after import, in a fresh process of its own


def _exact(values: list[float]) -> float:
    return 0.0  # a count: any difference is one


def _constant(size: float) -> Floor:
    return lambda values: size


@dataclass(frozen=True)
class Figure:
    name: str  # short: retained, heap-peak, footprint-heap
    method: str  # asv's benchmark method reporting it: track_retained_per_iteration
    field: str | None  # the measured record's key (a COUNT: one of its counters); None: asv's
    unit: str  # asv's unit of the method
    label: str  # in text: "retained", "heap peak increase"
    kind: str  # SLOPE, PEAK, VERDICT, TIME, COUNT, FOOTPRINT
    floor: Floor | None  # two sides' readings apart by more than this: a change
    what: str  # what it counts, in a sentence (the issue filed upstream)
    interval: str | None = None  # the record's key of a slope's 95% interval
    heap: str | None = None  # an RSS figure: the heap's figure of the same kind
    leaking_floor: Floor | None = None  # a peak of a pattern that leaks: its growth's share
    bisect: bool = True  # read from one measurement of a target (bisect, upstream)

    def of(self, record: Mapping[str, Any]) -> float | None:
        """This figure of a measured record (whole or kept): its field, else one of its
        counters; a verdict as 1 or 0; None where it has none."""
        if self.field is None:
            return None
        counters = record.get("counters")
        inner = counters.get(self.field) if isinstance(counters, dict) else None
        found = record.get(self.field, inner)
        return int(found) if isinstance(found, bool) else found

    @property
    def recorded(self) -> bool:
        """A key of the measured record of its own (tfbench.measure.record.FIELDS)."""
        return self.field is not None and self.kind != COUNT

    @property
    def probed(self) -> bool:
        """Reported by a probe's `track_` benchmark (from a measured record)."""
        return self.method.startswith("track_")

    @property
    def grid(self) -> bool:
        """Read by the probe grid of a family (the footprint: its own process)."""
        return self.kind != FOOTPRINT


# In the order a gate's worse rows are taken to be written up (what the heap and the
# verdict say first), then the rest.
FIGURES = (
    Figure(
        "leak",
        "track_leak",
        "leak",
        "leak (1) or flat (0)",
        "leak",
        VERDICT,
        None,
        "whether memory grows without bound over the calls",
    ),
    Figure(
        "retained",
        "track_retained_per_iteration",
        "retained_bytes_per_iteration",
        "bytes/iteration",
        "retained",
        SLOPE,
        floors.retained,
        "bytes the step keeps per call for good: glibc's heap in use after a full collection "
        "of Python's garbage, its slope over the calls after warm-up",
        interval="retained_interval",
    ),
    Figure(
        "garbage",
        "track_garbage_per_iteration",
        "garbage_bytes_per_iteration",
        "bytes/iteration",
        "garbage",
        SLOPE,
        floors.garbage,
        "bytes Python's cyclic collector frees per call: reference cycles the step leaves, "
        "which the heap holds until a collection",
        interval="garbage_interval",
    ),
    Figure(
        "heap-growth",
        "track_heap_growth_per_iteration",
        "heap_growth_bytes_per_iteration",
        "bytes/iteration",
        "heap growth between full collections",
        SLOPE,
        floors.heap_growth,
        "the heap's growth per call in a loop until Python's full collection runs: what "
        "the step keeps and the garbage only a full collection frees",
    ),
    Figure(
        "heap-peak",
        "track_heap_peak_increase",
        "heap_peak_increase_bytes",
        "bytes",
        "heap peak increase",
        PEAK,
        floors.heap_peak,
        "the heap's high-water mark over the run, above its start",
        leaking_floor=floors.leaking_peak,
    ),
    Figure(
        "time",
        "time_step",
        "seconds_per_iteration",
        "seconds",
        "time",
        TIME,
        floors.time,
        "wall time per call",
    ),
    Figure(
        "growth",
        "track_growth_per_iteration",
        "growth_bytes_per_iteration",
        "bytes/iteration",
        "growth",
        SLOPE,
        floors.growth,
        "RSS growth per call",
        interval="growth_interval",
        heap="retained",
    ),
    Figure(
        "peak",
        "track_peak_increase",
        "peak_increase_bytes",
        "bytes",
        "peak increase",
        PEAK,
        floors.peak,
        "RSS peak over the run, above its start",
        heap="heap-peak",
        leaking_floor=floors.leaking_peak,
    ),
    Figure(
        "footprint-rss",
        "track_footprint_rss",
        "rss_bytes",
        "bytes",
        "footprint RSS",
        FOOTPRINT,
        _constant(floors.FOOTPRINT_RSS_FLOOR),
        "RSS of a fresh process after `import tensorflow` and one op",
    ),
    Figure(
        "footprint-heap",
        "track_footprint_heap",
        "heap_bytes",
        "bytes",
        "footprint heap",
        FOOTPRINT,
        _constant(floors.FOOTPRINT_HEAP_FLOOR),
        "heap in use of a fresh process after `import tensorflow` and one op",
    ),
    Figure(
        "process-peak",
        "peakmem_step",
        None,
        "bytes",
        "process peak",
        PEAK,
        floors.process_peak,
        "the measuring process's peak RSS (asv's peakmem)",
        bisect=False,
    ),
    Figure(
        "allocator-peak",
        "track_allocator_peak",
        "allocator_peak_bytes",
        "bytes",
        "allocator peak",
        PEAK,
        floors.peak,
        "TensorFlow's allocator's peak on the GPU",
        bisect=False,
    ),
    Figure(
        "graph-ops",
        "track_graph_ops",
        "graph_ops",
        "operations",
        "graph operations",
        COUNT,
        _exact,
        "operations in the graph the pattern builds on, after the run",
        bisect=False,
    ),
    Figure(
        "traces",
        "track_traces",
        "traces",
        "traces",
        "traces",
        COUNT,
        _exact,
        "how many times tf.function traced during the run",
        bisect=False,
    ),
    Figure(
        "graph-ops-per-call",
        "track_graph_ops_per_call",
        "graph_ops_per_call",
        "operations/call",
        "graph operations per call",
        COUNT,
        _exact,
        "operations the graph gains per call",
        bisect=False,
    ),
)
BY_NAME = {f.name: f for f in FIGURES}
BY_METHOD = {f.method: f for f in FIGURES}
PROBED = {f.method: f for f in FIGURES if f.probed}  # the probe's track_ benchmarks
BISECTED = tuple(f.name for f in FIGURES if f.bisect)  # --metric of bisect and upstream


def named(name: str) -> Figure:
    """The figure of a short name (ValueError naming the choices)."""
    try:
        return BY_NAME[name]
    except KeyError:
        raise ValueError(f"unknown metric {name!r}; choose from {', '.join(BISECTED)}") from None


def _floor(name: str) -> Floor:
    found = named(name).floor
    if found is None:
        raise ValueError(f"{name} has no floor: a flip is its change")
    return found


def floor(name: str, values: list[float]) -> float:
    """How far apart readings `values` (both sides') of a figure must be to count as a
    change (the verdict has none: a flip is the change)."""
    return _floor(name)(values)


def apart(name: str, a: list[float], b: list[float]) -> int:
    """Whether two sides' readings of a figure part by its floor (floors.apart: 1 b above,
    -1 below, 0 not); the verdict has none (floors.flipped)."""
    return floors.apart(_floor(name), a, b)
