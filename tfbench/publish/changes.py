"""What changed between adjacent releases, by the gate's rules (tfbench.gate.rules) on the
readings the history recorded (each release's asv samples and probe repeats), and the
newest pair as `tfbench gate` re-measured it, when such a run is kept in the results.

Each row comes with its graph in asv's site and the command that re-measures exactly its
grid point, both releases interleaved, by the same rules.
"""

from __future__ import annotations

import dataclasses
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tfbench import cpu, escape, keptfiles
from tfbench.gate import kept, shifts
from tfbench.gate.rules import CONFIRM_READINGS, Change, point_pattern
from tfbench.gate.shifts import SHIFTING, Shift
from tfbench.history.releases import newest_pair
from tfbench.keptfiles import KeptFileError
from tfbench.keptfiles.gate_run import GateRow, GateShift
from tfbench.pairs.verdict import time_line
from tfbench.probes import GridPoint
from tfbench.publish.results import Data, MachineResults

SHIFT_OF = tuple(SHIFTING)  # the metrics a kept shift may be of


@dataclass(frozen=True)
class Item:
    row: Change
    url: str  # the benchmark's graph in asv's site
    command: str  # re-measures the row's grid point with `tfbench gate`


def point_of(row: Change) -> tuple[str, str]:
    """The grid point a row is of: its step benchmark's class (a probe's `Costs` class is
    the same family) and its param values as asv prints them."""
    point = GridPoint(row.benchmark, tuple(row.params.values()))
    return point.family, ", ".join(point.combo)


@dataclass(frozen=True)
class PointChanges:
    """Every row of one grid point (its step's and its probe's metrics): one finding; and
    the other points of the family that changed alike (the same metrics, the same way),
    told with it."""

    family: str  # the step benchmark's class, e.g. loops.MatrixPower
    combo: str  # its param values as asv prints them: 'numpy', 'none', 64, 100, 'CPU'
    items: list[Item]
    command: str  # re-measures every metric of the point(s) with `tfbench gate`
    alike: tuple[str, ...] = ()  # the combos of the other points that changed alike

    @property
    def name(self) -> str:
        return f"{self.family}({self.combo})"

    @property
    def direction(self) -> str:
        directions = {i.row.direction for i in self.items}
        return directions.pop() if len(directions) == 1 else "mixed"

    @property
    def kind(self) -> tuple:
        """What must match for points to be told together: family, metrics, directions."""
        return self.family, tuple(sorted((i.row.metric, i.row.direction) for i in self.items))


@dataclass(frozen=True)
class Changes:
    pair: tuple[str, str]
    items: list[Item]  # the rows, a shifted metric's only where a point differs from it
    source: str  # where the rows come from
    machine: str
    shifts: tuple[Shift, ...] = ()  # metrics that moved in common (tfbench.gate.shifts)
    time: Mapping[str, Any] | None = None  # what the time reader did (a kept gate run's)
    cpu: str | None = None  # the CPU it read on (tfbench.cpu.named)

    @property
    def rows(self) -> list[Change]:
        return [i.row for i in self.items]

    @property
    def points(self) -> list[PointChanges]:
        """The rows by grid point, worse first: a pattern that starts leaking changes its
        growth, its verdict and its peak, one cause; the points of a family that changed
        alike (a change in how TensorFlow runs that pattern, at every size) told together."""
        grouped: dict[tuple[str, str], list[Item]] = {}
        for item in self.items:
            grouped.setdefault(point_of(item.row), []).append(item)
        points = [
            PointChanges(family, combo, items, self._command(family, combo))
            for (family, combo), items in sorted(grouped.items())
        ]
        alike: dict[tuple, list[PointChanges]] = {}
        for point in points:
            alike.setdefault(point.kind, []).append(point)
        found = []
        for first, *others in alike.values():
            if not others:
                found.append(first)
                continue
            variants = {p.combo.split(", ", 1)[0] for p in (first, *others)}
            # Re-measure the variant's points, or the family's when several variants moved.
            prefix = f"{variants.pop()}, " if len(variants) == 1 else ""
            command = self._command(first.family, prefix, whole=False)
            combos = tuple(o.combo for o in others)
            found.append(dataclasses.replace(first, command=command, alike=combos))
        return sorted(found, key=lambda p: ({"worse": 0, "mixed": 1}.get(p.direction, 2), p.name))

    def _command(self, family: str, combo: str, whole: bool = True) -> str:
        """asv's --bench for every benchmark of the point (or, not `whole`, of every point
        whose params start with `combo`): its step's and its probe's."""
        point = point_pattern(f"{family}COSTS.METHOD({combo}")
        point = point.replace("COSTS", "(Costs)?").replace("METHOD", r"\w+").removesuffix("$")
        point += r"\)$" if whole else ""
        return escape.command(
            ["tfbench", "gate", *self.pair, "--machine", self.machine, "--bench", point]
        )


def graph_url(row: Change, machine: str) -> str:
    """The benchmark's page in asv's site, at this grid point and machine."""
    query = {"machine": machine, **{f"p-{k}": v for k, v in row.params.items()}}
    return (
        f"index.html#{row.benchmark}?{urllib.parse.urlencode(query, quote_via=urllib.parse.quote)}"
    )


def gate_command(row: Change, machine: str, pair: tuple[str, str]) -> str:
    """`tfbench gate` over the pair for this grid point only: asv matches a parameterized
    benchmark's regex against `name(param, ...)`. Every value is shell-quoted: names come
    from results."""
    point = point_pattern(row.name)
    return escape.command(["tfbench", "gate", *pair, "--machine", machine, "--bench", point])


def _items(rows: list[Change], machine: str, pair: tuple[str, str]) -> list[Item]:
    return [Item(r, graph_url(r, machine), gate_command(r, machine, pair)) for r in rows]


HISTORY = "the recorded history: each release's samples and probe repeats"


def recorded(data: Data, machine: MachineResults, pair: tuple[str, str]) -> Changes:
    """A pair of releases by the gate's rules on the history, common shifts told once."""
    sides = machine.sides[pair[0]], machine.sides[pair[1]]
    found, rows = shifts.common_shifts(data.benchmarks, *sides)
    return Changes(
        pair, _items(rows, machine.machine, pair), HISTORY, machine.machine, tuple(found)
    )


def history_changes(data: Data, machine: MachineResults) -> list[Changes]:
    """Every adjacent pair of releases, oldest first, by the gate's rules on the history."""
    tags = machine.releases
    return [recorded(data, machine, pair) for pair in zip(tags, tags[1:])]


def kept_run(data: Data, machine: MachineResults, results_dir: Path) -> Changes | None:
    """The newest pair's `tfbench gate` run kept in the results, its rows checked against
    the benchmarks (the file is untrusted input like any result)."""
    pair = newest_pair(machine.releases)
    if pair is None:
        return None
    try:
        run = kept.read(results_dir, machine.machine, pair)
        if run is None:
            return None
        rows = [_checked(data, r) for r in run["rows"]]
        found = [_shift(data, s) for s in run["shifts"]]
        on = "; ".join(map(cpu.label, run["cpus"].values())) or cpu.named(None)
        source = f"`tfbench gate` re-measured both ({time_line(run['time'], on)})"
    except KeptFileError as e:
        data.problems.append(str(e))
        return None
    except ValueError as e:  # of its form, not of this suite (a benchmark, a grid point)
        data.problems.append(f"{keptfiles.gate_run.path(results_dir, machine.machine, pair)}: {e}")
        return None
    covered = [s for s, _ in found]
    rows = [r for r in rows if shifts.covering(covered, r) is None]
    rows += [r for _, differ in found for r in differ]
    shown = sorted(rows, key=lambda r: (r.direction != "worse", r.name))
    items = _items(shown, machine.machine, pair)
    moved = tuple(s for s, _ in found)
    return Changes(pair, items, source, machine.machine, moved, run["time"], on)


def _shift(data: Data, s: GateShift) -> tuple[Shift, list[Change]]:
    """A kept shift, and the rows of the points that differ from it."""
    metric, scope = s["metric"], s["scope"]
    if not metric.startswith(SHIFT_OF):
        raise ValueError(f"a shift of {metric!r}")
    if scope is not None and scope not in {name.rpartition(".")[0] for name in data.benchmarks}:
        raise ValueError(f"a shift of {scope!r}")
    shift = Shift(metric, s["ratio"], s["amount"], s["followed"], s["points"], scope)
    return shift, [_checked(data, r) for r in s["rows"]]


def _checked(data: Data, r: GateRow) -> Change:
    """A kept row, of a benchmark of the suite and a point of its grid."""
    bench = data.benchmarks.get(r["benchmark"])
    if bench is None:
        raise ValueError(f"unknown benchmark {r['benchmark']!r}")
    if set(r["params"]) != set(bench["param_names"]):
        raise ValueError(f"{r['benchmark']}: params {sorted(r['params'])} are not its own")
    combo = tuple(repr(r["params"][n]) for n in bench["param_names"])
    if any(c not in p for c, p in zip(combo, bench["params"])):
        raise ValueError(f"{r['benchmark']}: params {r['params']!r} not in its grid")
    return Change(
        f"{r['benchmark']}({', '.join(combo)})" if combo else r["benchmark"],
        r["benchmark"],
        dict(zip(bench["param_names"], combo)),
        r["benchmark"].rpartition(".")[2],
        r["direction"],
        r["old"],
        r["new"],
        bench.get("unit") or "",
        r["evidence"],
    )


def confirmed(row: Change) -> bool:
    """Whether a row counts: read as often as the gate confirms (its time verdict, or
    rules.CONFIRM_READINGS readings a side); a row read once a side (the history's, or a
    point read against a common shift) is shown, not counted."""
    readings = row.evidence.get("readings")
    return readings is None or min(readings) >= CONFIRM_READINGS
