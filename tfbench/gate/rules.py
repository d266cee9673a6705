"""What counts as a change between two sides (each: every reading of every grid point).

- memory (`peakmem_`, the probe's peaks, growth and retained bytes, the footprint): the
  two sides' ranges (lowest to highest reading) apart by more than the metric's floor
  (tfbench.floors): no ratios, so a near-zero baseline cannot make one; the peak of a
  pattern that leaks is its growth over the window, and takes the growth's share. The gate
  screens with one reading a side and reads the points of the rows found again until they
  have CONFIRM_READINGS a side: more readings only widen ranges, so they can only drop a row;
- counts (`track_graph_ops`, `track_traces`): ranges apart at all; leak (`track_leak`):
  every reading of each side agrees, and the two sides disagree; status: a point measured
  in every run of one side and in no run of the other always counts. Mixed sides are no
  change. RSS rows whose heap figure did not move are `rss only` (HEAP_OF);
- time (`time_`): not from these readings (one process's samples cannot tell a release
  from a slow process): the time reader's verdict (tfbench.pairs.timing, time_rows).
A row's evidence is data (which rule, on what readings), told in words by `told`.
docs/gate.md.
"""

from __future__ import annotations

import ast
import re
import statistics
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from tfbench import figures, floors
from tfbench.gate.readings import Point, Side, pooled
from tfbench.keptfiles.gate_run import DIRECTIONS
from tfbench.pairs import verdict
from tfbench.probes import GridPoint
from tfbench.units import format_value

CONFIRM_READINGS = 5  # memory: readings a side of a point the first readings part


@dataclass(frozen=True)
class Change:
    name: str  # as `asv compare` prints it: benchmark(param values)
    benchmark: str
    params: dict[str, str]  # asv's form: repr of each value
    metric: str  # the benchmark's method: time_step, track_growth_per_iteration, ...
    direction: str  # worse | better | rss only (RSS_ONLY)
    old: float | None  # the median of the side's readings; None: no reading
    new: float | None
    unit: str
    evidence: dict[str, Any]  # which rule fired, on what (`told` puts it in words)

    @property
    def told(self) -> str:
        return told(self.evidence, self.unit)

    def as_json(self) -> dict:
        return {
            "benchmark": self.benchmark,
            "params": {k: ast.literal_eval(v) for k, v in self.params.items()},
            "metric": self.metric,
            "direction": self.direction,
            "old": self.old,
            "new": self.new,
            "unit": self.unit,
            "evidence": self.evidence,
        }


Runs = list[list[float]]  # a side's readings of one point, run by run
Ruling = tuple[int, dict[str, Any]] | None  # (1 worse, -1 better; the evidence), or no change


def _apart(floor: Callable[[list[float]], float], what: str) -> Callable[..., Ruling]:
    def rule(a_runs: Runs, b_runs: Runs) -> Ruling:
        a, b = pooled(a_runs), pooled(b_runs)
        sign = floors.apart(floor, a, b)
        if not sign:
            return None
        return sign, {
            "rule": "apart",
            "figure": what,
            "old": [min(a), max(a)],
            "new": [min(b), max(b)],
            "floor": floor(a + b),
            "readings": [len(a), len(b)],
        }

    return rule


def leak_rule(a_runs: Runs, b_runs: Runs) -> Ruling:
    a, b = pooled(a_runs), pooled(b_runs)
    sign = floors.flipped(a, b)
    if not sign:
        return None
    return sign, {
        "rule": "flip",
        "old": bool(a[0]),
        "new": bool(b[0]),
        "readings": [len(a), len(b)],
    }


def told(evidence: dict[str, Any], unit: str) -> str:
    """A row's evidence in words, with units."""
    rule = evidence["rule"]
    if rule == "apart":
        a, b = evidence["readings"]
        text = (
            f"{evidence['figure']} {_span(evidence['old'], unit)} -> "
            f"{_span(evidence['new'], unit)}, apart by more than "
            f"{format_value(evidence['floor'], unit)} ({_readings(a, b)})"
        )
    elif rule == "flip":
        word = {False: "flat", True: "leak"}
        a, b = evidence["readings"]
        text = (
            f"leak verdict {word[evidence['old']]} -> {word[evidence['new']]}, "
            f"unanimous ({a} and {b} readings)"
        )
    elif rule == "status":
        text = f"no reading on the {evidence['side']} side: {evidence['why']}"
    else:  # time: the time reader's verdict
        text = (
            f"time {format_value(evidence['old'], unit)} -> "
            f"{format_value(evidence['new'], unit)} (x{evidence['ratio']:.3f}, "
            f"{evidence['level']:.0%} interval "
            f"x{evidence['low']:.3f}-x{evidence['high']:.3f}, beyond the margin of "
            f"{evidence['margin']:.0%}; {evidence['pairs']} pairs of processes, read in turn"
            + (f" on cpu {evidence['cpu']})" if evidence.get("cpu") else ")")
        )
    if evidence.get("less"):  # read against a common shift (tfbench.gate.shifts)
        text += f", the newer side read less the common {evidence['less']}"
    if evidence.get("heap"):
        text += (
            f"; the heap's own figure ({evidence['heap']}) did not move: allocator caching or "
            "fragmentation"
        )
    return text


def _span(values: list[float], unit: str) -> str:
    """The lowest to the highest reading, in the unit (one number where they are one)."""
    low, high = (format_value(v, unit) for v in values)
    if low == high:
        return low
    (low_n, _, low_u), (high_n, _, high_u) = low.partition(" "), high.partition(" ")
    return f"{low_n}-{high_n} {low_u}" if low_u == high_u else f"{low} to {high}"


def _readings(a: int, b: int) -> str:
    return f"{a} reading{'s' * (a != 1)} old, {b} new"


def memory_screened(benchmarks: dict[str, dict], a: Side, b: Side) -> list[Point]:
    """The points of the rows `compare` lists (memory, growth, leak, counts, status): the
    gate re-measures them until they have CONFIRM_READINGS a side."""
    return sorted(
        {(row.benchmark, tuple(row.params.values())) for row in compare(benchmarks, a, b)}
    )


def _rule(figure: figures.Figure) -> Callable[..., Ruling]:
    if figure.floor is None:
        return leak_rule
    return _apart(figure.floor, figure.label)


RULES = {f.method: _rule(f) for f in figures.FIGURES if f.kind != figures.TIME}
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
            row = replace(row, direction=RSS_ONLY, evidence=dict(row.evidence, heap=heap))
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


def _status(point: Point, a: Side, b: Side) -> Ruling:
    """A point measured in every run of one side and in none of the other."""
    a_has, b_has = point in a.runs, point in b.runs
    a_all, b_all = a_has and point not in a.missing, b_has and point not in b.missing
    if a_all and not b_has and point in b.missing:
        return 1, {"rule": "status", "side": "new", "why": b.missing[point][0]}
    if b_all and not a_has and point in a.missing:
        return -1, {"rule": "status", "side": "old", "why": a.missing[point][0]}
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
        if found is None and point in a.runs and point in b.runs and method in RULES:
            rule = RULES[method]
            if method in LEAKING_PEAKS and _leaks(point, a, b):
                rule = LEAKING_PEAKS[method]
            found = rule(a.runs[point], b.runs[point])
        if found is None:
            continue
        sign, evidence = found
        old, new = (
            statistics.median(s.values(point)) if point in s.runs else None for s in (a, b)
        )
        rows.append(
            Change(
                point_name(point),
                key,
                dict(zip(bench["param_names"], combo)),
                method,
                "worse" if sign > 0 else "better",
                old,
                new,
                bench.get("unit") or "",
                evidence,
            )
        )
    return sorted(_rss_only(rows, a, b), key=lambda r: (DIRECTIONS.index(r.direction), r.name))


def time_rows(
    benchmarks: dict[str, dict], timed: dict[Point, verdict.Timed], cpu_of: Mapping[Point, str]
) -> list[Change]:
    """The time reader's DIFFERENT points as rows: old the old side's median reading, new
    that moved by the pairs' estimate, the evidence its verdict. The new side's own
    median is not shown: its readings met the machine at other speeds than the old side's,
    so the two medians can even part the other way (docs/gate.md)."""
    rows = []
    for point, read in sorted(timed.items()):
        bench, found = benchmarks.get(point[0]), read.verdict
        if bench is None or found.answer != verdict.DIFFERENT or found.ratio is None:
            continue
        old = read.old
        if old is None:
            continue
        new = old * found.ratio
        evidence = {"rule": "time", "ratio": found.ratio, "low": found.low, "high": found.high}
        evidence |= {"pairs": found.pairs, "margin": read.margin, "level": found.level}
        evidence["cpu"] = cpu_of[point]  # a time change is a fact about one CPU
        evidence["old"] = old
        evidence["new"] = new
        rows.append(
            Change(
                point_name(point),
                point[0],
                dict(zip(bench["param_names"], point[1])),
                point[0].rpartition(".")[2],
                "worse" if found.ratio > 1 else "better",
                old,
                new,
                bench.get("unit") or "seconds",
                evidence,
            )
        )
    return rows
