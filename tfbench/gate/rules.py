"""What counts as a change between two sides (each: every reading of every grid point).

- time (`time_`): at least MIN_SAMPLES samples and CONFIRM_RUNS runs (processes) a side,
  a Mann-Whitney U test at p < P_VALUE (asv compare's test and threshold) on the pooled
  samples, the pooled medians' ratio beyond the time floor, AND every run's median of one
  side beyond every run's median of the other by the time margin: the samples of one
  process are not independent (one process can run slow throughout), so the process is
  the unit that must agree. The screen is the same rule at SCREEN_RUNS runs a side, the
  runs apart at all: the gate re-measures only the points it passes;
- memory (`peakmem_`, the probe's peaks, growth and retained bytes, the footprint): the
  two sides' ranges (lowest to highest reading) apart by more than the metric's floor
  (tfbench.floors): no ratios, so a near-zero baseline cannot make one; the peak of a
  pattern that leaks is its growth over the window, and takes the growth's share. The gate
  screens with one reading a side and reads the points of the rows found again until they
  have CONFIRM_READINGS a side: more readings only widen ranges, so they can only drop a row;
- counts (`track_graph_ops`, `track_traces`): ranges apart at all; leak (`track_leak`):
  every reading of each side agrees, and the two sides disagree; status: a point measured
  in every run of one side and in no run of the other always counts. Mixed sides are no
  change. RSS rows whose heap figure did not move are `rss only` (HEAP_OF). docs/gate.md.
"""

from __future__ import annotations

import ast
import re
import statistics
from collections.abc import Callable
from dataclasses import dataclass, replace

from asv._stats import mann_whitney_u

from tfbench import figures
from tfbench.floors import TIME_APART, TIME_FLOOR
from tfbench.gate.readings import Point, Side, pooled
from tfbench.keptfiles import DIRECTIONS
from tfbench.probes import GridPoint
from tfbench.units import format_value

MIN_SAMPLES = 7  # a two-sided U test cannot reach p < 0.002 with 6 or fewer a side
# A process can run slow throughout: one process a side cannot tell a release from it (the
# history's one asv run per release gives no time rows; the gate's rounds do).
SCREEN_RUNS = 2  # enough to pick the points worth re-measuring
CONFIRM_RUNS = 5  # complete separation of 5 runs a side: p = 2/252 under no change
CONFIRM_READINGS = 5  # memory: readings a side of a point the first readings part
P_VALUE = 0.002
# A whole asv run can read every point 2-3x slow (the gate's session measures it again)
RUN_LEVEL, MIN_LEVEL_POINTS = 1.25, 3


@dataclass(frozen=True)
class Change:
    name: str  # as `asv compare` prints it: benchmark(param values)
    benchmark: str
    params: dict[str, str]  # asv's form: repr of each value
    metric: str  # the benchmark's method: time_step, track_growth_per_iteration, ...
    direction: str  # worse | better | rss only (RSS_ONLY)
    before: float | None  # the median of the side's readings; None: no reading
    after: float | None
    unit: str
    evidence: str  # which rule fired, on what

    def as_json(self) -> dict:
        return {
            "benchmark": self.benchmark,
            "params": {k: ast.literal_eval(v) for k, v in self.params.items()},
            "metric": self.metric,
            "direction": self.direction,
            "before": self.before,
            "after": self.after,
            "unit": self.unit,
            "evidence": self.evidence,
        }


Runs = list[list[float]]  # a side's readings of one point, run by run
Found = tuple[int, str] | None  # (1 worse, -1 better; the evidence), or no change


def _apart(floor: Callable[[list[float]], float], what: str):
    def rule(a_runs: Runs, b_runs: Runs, unit: str = "") -> Found:
        a, b = pooled(a_runs), pooled(b_runs)
        gap = floor(a + b)
        if min(b) - max(a) > gap:
            sign = 1
        elif min(a) - max(b) > gap:
            sign = -1
        else:
            return None
        return sign, (
            f"{what} {_span(a, unit)} -> {_span(b, unit)}, apart by more than "
            f"{format_value(gap, unit)} ({_readings(len(a), len(b))})"
        )

    return rule


def _span(values: list[float], unit: str) -> str:
    """The lowest to the highest reading, in the unit (one number where they are one)."""
    low, high = (format_value(v, unit) for v in (min(values), max(values)))
    if low == high:
        return low
    (low_n, _, low_u), (high_n, _, high_u) = low.partition(" "), high.partition(" ")
    return f"{low_n}-{high_n} {low_u}" if low_u == high_u else f"{low} to {high}"


def _readings(a: int, b: int) -> str:
    return f"{a} reading{'s' * (a != 1)} before, {b} after"


def time_rule(
    a_runs: Runs,
    b_runs: Runs,
    unit: str = "seconds",
    min_runs: int = CONFIRM_RUNS,
    apart: float = TIME_APART,
) -> Found:
    a, b = pooled(a_runs), pooled(b_runs)
    if min(len(a), len(b)) < MIN_SAMPLES or min(len(a_runs), len(b_runs)) < min_runs:
        return None
    ratio = statistics.median(b) / statistics.median(a)
    if 1 / (1 + TIME_FLOOR) <= ratio <= 1 + TIME_FLOOR:
        return None
    a_med, b_med = ([statistics.median(r) for r in runs] for runs in (a_runs, b_runs))
    low, high = (a_med, b_med) if ratio > 1 else (b_med, a_med)
    if min(high) <= max(low) * (1 + apart):
        return None
    _, p = mann_whitney_u(a, b)
    if p >= P_VALUE:
        return None
    before, after = (format_value(statistics.median(v), unit) for v in (a, b))
    return (1 if ratio > 1 else -1), (
        f"time {before} -> {after} (x{ratio:.2f}, floor {TIME_FLOOR:.0%}); every run of one "
        f"side more than {apart:.0%} beyond every run of the other (x"
        f"{min(high) / max(low):.2f} at the nearest); Mann-Whitney U p={p:.1e} ({len(a)} and "
        f"{len(b)} samples, {len(a_runs)} and {len(b_runs)} runs)"
    )


def screened(a: Side, b: Side) -> list[Point]:
    """The time points worth re-measuring: those the time rule passes at SCREEN_RUNS runs,
    their runs apart at all."""
    return sorted(
        point
        for point in set(a.runs) & set(b.runs)
        if point[0].rpartition(".")[2].startswith("time_")
        and time_rule(a.runs[point], b.runs[point], min_runs=SCREEN_RUNS, apart=0.0) is not None
    )


def memory_screened(benchmarks: dict[str, dict], a: Side, b: Side) -> list[Point]:
    """The points of the rows `compare` lists other than time's (memory, growth, leak,
    counts, status): the gate re-measures them until they have CONFIRM_READINGS a side."""
    return sorted(
        {
            (row.benchmark, tuple(row.params.values()))
            for row in compare(benchmarks, a, b)
            if not row.metric.startswith("time_")
        }
    )


def disturbed(runs: list[Side]) -> list[int]:
    """The time runs of one side (each one asv run's readings of the same selection) that
    read the suite as a whole slow: the median, over their points (MIN_LEVEL_POINTS at
    least), of the run's median over the point's fastest run median, beyond RUN_LEVEL. One
    side's runs only: a release that slows every point is a change, not a disturbance."""
    medians = [{p: statistics.median(r.values(p)) for p in r.runs} for r in runs]
    points = set.intersection(*(set(m) for m in medians)) if len(medians) > 1 else set()
    if len(points) < MIN_LEVEL_POINTS:
        return []
    fastest = {p: min(m[p] for m in medians) for p in points}
    return [
        i
        for i, m in enumerate(medians)
        if statistics.median(m[p] / fastest[p] for p in points) > RUN_LEVEL
    ]


def leak_rule(a_runs: Runs, b_runs: Runs, unit: str = "") -> Found:
    a, b = pooled(a_runs), pooled(b_runs)
    if len(set(a)) != 1 or len(set(b)) != 1 or a[0] == b[0]:
        return None
    return (1 if b[0] > a[0] else -1), (
        f"leak verdict {'flat -> leak' if b[0] > a[0] else 'leak -> flat'}, unanimous "
        f"({len(a)} and {len(b)} readings)"
    )


def _rule(figure: figures.Figure) -> Callable[..., Found]:
    if figure.kind == figures.TIME:
        return time_rule
    if figure.floor is None:
        return leak_rule
    return _apart(figure.floor, figure.label)


RULES = {f.method: _rule(f) for f in figures.FIGURES}
# The peak of a pattern that leaks is its growth over the window: read as precisely as that.
LEAKING_PEAKS = {
    f.method: _apart(f.leaking_floor, f"{f.label} of a leaking pattern")
    for f in figures.FIGURES
    if f.leaking_floor
}
# An RSS figure -> the heap's figure of the same kind. Where the heap was read on both sides
# and did not move, RSS's move is the heap's layout (glibc's caching, fragmentation), not
# what the step keeps or peaks at: the row is shown as RSS_ONLY, and is neither worse nor
# better (tfbench gate's exit, the report's counts).
HEAP_OF = {f.method: figures.BY_NAME[f.heap].method for f in figures.FIGURES if f.heap}
RSS_ONLY = DIRECTIONS[-1]  # the kept file's word for it (tfbench.keptfiles)


def _rss_only(rows: list[Change], a: Side, b: Side) -> list[Change]:
    """The rows of RSS figures whose heap figure was read on both sides and did not move,
    marked RSS_ONLY."""
    moved = {(r.benchmark, tuple(r.params.values())) for r in rows}
    marked = []
    for row in rows:
        heap = HEAP_OF.get(row.metric)
        point = (f"{row.benchmark.rpartition('.')[0]}.{heap}", tuple(row.params.values()))
        if heap and point in a.runs and point in b.runs and point not in moved:
            row = replace(
                row,
                direction=RSS_ONLY,
                evidence=f"{row.evidence}; the heap's own figure ({heap}) did not move: "
                "allocator caching or fragmentation",
            )
        marked.append(row)
    return marked


def point_name(point: Point) -> str:
    """As `asv compare` prints it, and as asv's --bench matches it: benchmark(param values)."""
    return GridPoint(*point).name


def point_pattern(name: str) -> str:
    """asv's --bench for exactly one grid point, `name` as asv prints it (benchmark(params)):
    a quote becomes '.', so the pattern needs no quoting inside a shell's quotes."""
    return "^" + re.escape(name).replace("\\ ", " ").replace("'", ".") + "$"


def _leaks(point: Point, *sides: Side) -> bool:
    """Whether any reading of either side calls the point's pattern a leak."""
    key, combo = point
    leak = (f"{key.rpartition('.')[0]}.{figures.BY_NAME['leak'].method}", combo)
    return any(v == 1.0 for side in sides for v in side.values(leak))


def _status(point: Point, a: Side, b: Side) -> Found:
    """A point measured in every run of one side and in none of the other."""
    a_has, b_has = point in a.runs, point in b.runs
    a_all, b_all = a_has and point not in a.missing, b_has and point not in b.missing
    if a_all and not b_has and point in b.missing:
        return 1, f"no reading after: {b.missing[point][0]}"
    if b_all and not a_has and point in a.missing:
        return -1, f"no reading before: {a.missing[point][0]}"
    return None


def compare(benchmarks: dict[str, dict], a: Side, b: Side) -> list[Change]:
    """The rows where side b differs from side a by the rules above, worse first."""
    rows = []
    for point in sorted(set(a.runs) | set(b.runs) | set(a.missing) | set(b.missing)):
        key, combo = point
        bench = benchmarks.get(key)
        if bench is None:
            continue  # not in the suite being compared (another version's results)
        method = key.rpartition(".")[2]
        found = _status(point, a, b)
        if found is None and point in a.runs and point in b.runs:
            rule = RULES[method]
            if method in LEAKING_PEAKS and _leaks(point, a, b):
                rule = LEAKING_PEAKS[method]
            found = rule(a.runs[point], b.runs[point], bench.get("unit") or "")
        if found is None:
            continue
        sign, evidence = found
        before, after = (
            statistics.median(s.values(point)) if point in s.runs else None for s in (a, b)
        )
        rows.append(
            Change(
                point_name(point),
                key,
                dict(zip(bench["param_names"], combo)),
                method,
                "worse" if sign > 0 else "better",
                before,
                after,
                bench.get("unit") or "",
                evidence,
            )
        )
    return sorted(_rss_only(rows, a, b), key=lambda r: (DIRECTIONS.index(r.direction), r.name))
