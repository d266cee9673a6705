"""Common-mode shifts: a metric that moves by about the same amount at most points of a
pair of releases has one cause (the process's own footprint grew with the release; every
step runs 1.3x slower), and is told once. The points that differ from the shift beyond the
metric's floor are the rows still worth reading: the rules are applied again with the
shift taken out of the newer side.

A shift needs at least MIN_POINTS points measured on both sides, a median move beyond the
metric's floor, and COMMON_SHARE of the points within that floor of the median move.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from dataclasses import dataclass

from tfbench import floors, naming
from tfbench.gate import rules
from tfbench.gate.readings import Point, Side
from tfbench.units import format_bytes

MIN_POINTS = 5
COMMON_SHARE = 0.6
# benchmark method prefix -> (the shift is a ratio, its floor); the probe's figures are the
# pattern's own memory, which a footprint does not move
SHIFTING = {naming.PEAKMEM: (False, floors.PEAKMEM_FLOOR), naming.TIME: (True, floors.TIME_FLOOR)}


@dataclass(frozen=True)
class Shift:
    metric: str  # the benchmark method, e.g. peakmem_step
    ratio: bool  # time: a factor; memory: bytes added
    amount: float
    followed: int  # points within the floor of the shift
    points: int  # points measured on both sides
    scope: str | None = None  # one family's benchmark class (e.g. loops.MatrixPower), or all

    @property
    def move(self) -> str:
        if self.ratio:
            return f"x{self.amount:.2f}"
        return f"{'+' if self.amount >= 0 else '-'}{format_bytes(abs(self.amount))}"

    def covers(self, point: Point) -> bool:
        key = point[0]
        return _method(point) == self.metric and (self.scope in (None, _family(key)))

    def text(self) -> str:
        what = "time per step" if self.ratio else "the process's peak memory (peakmem_step)"
        where = f" of {self.scope}" if self.scope else ""
        return f"{what} moved {self.move} at {self.followed} of {self.points} points{where}"

    def as_json(self) -> dict:
        return {
            "metric": self.metric,
            "ratio": self.ratio,
            "amount": self.amount,
            "followed": self.followed,
            "points": self.points,
            "scope": self.scope,
        }


def _method(point: Point) -> str:
    return point[0].rpartition(".")[2]


def _family(benchmark: str) -> str:
    return benchmark.rpartition(".")[0]


def _moves(a: Side, b: Side, points: list[Point], ratio: bool) -> dict[Point, float]:
    old = {p: statistics.median(a.values(p)) for p in points}
    new = {p: statistics.median(b.values(p)) for p in points}
    if ratio:
        return {p: new[p] / old[p] for p in points if old[p] > 0}
    return {p: new[p] - old[p] for p in points}


def _common(moves: dict[Point, float], ratio: bool, floor: float) -> tuple[float, int] | None:
    """(the median move, the points within the floor of it) when the moves are common."""
    if len(moves) < MIN_POINTS:
        return None
    shift = statistics.median(moves.values())
    if ratio:
        if abs(math.log(shift)) <= math.log1p(floor):
            return None
        followed = sum(abs(math.log(m / shift)) <= math.log1p(floor) for m in moves.values())
    else:
        if abs(shift) <= floor:
            return None
        followed = sum(abs(m - shift) <= floor for m in moves.values())
    return (shift, followed) if followed >= COMMON_SHARE * len(moves) else None


def find(a: Side, b: Side) -> list[Shift]:
    """Every metric that moved in common between side a and side b: at most points of
    the suite, else at most points of one family (families import different parts of
    TensorFlow: their processes' footprints need not move alike)."""
    found = []
    for prefix, (ratio, floor) in SHIFTING.items():
        points = sorted(p for p in set(a.runs) & set(b.runs) if _method(p).startswith(prefix))
        if not points:
            continue
        moves = _moves(a, b, points, ratio)
        common = _common(moves, ratio, floor)
        metric = _method(points[0])
        if common:
            found.append(Shift(metric, ratio, *common, len(moves)))
            continue
        families: dict[str, dict[Point, float]] = {}
        for point, move in moves.items():
            families.setdefault(_family(point[0]), {})[point] = move
        for family, family_moves in sorted(families.items()):
            common = _common(family_moves, ratio, floor)
            if common:
                found.append(Shift(metric, ratio, *common, len(family_moves), family))
    return found


def _unshifted(side: Side, shifts: list[Shift]) -> Side:
    """A copy of the side with each shift taken out of the readings it covers."""
    out = Side(runs=dict(side.runs), missing=dict(side.missing), count=side.count)
    for point, runs in side.runs.items():
        s = _covering(shifts, point)
        if s:
            out.runs[point] = [
                [v / s.amount if s.ratio else v - s.amount for v in run] for run in runs
            ]
    return out


def _covering(shifts: list[Shift], point: Point) -> Shift | None:
    return next((s for s in shifts if s.covers(point)), None)


def _point(row: rules.Change) -> Point:
    return row.benchmark, tuple(row.params.values())


def covering(shifts: list[Shift], row: rules.Change) -> Shift | None:
    """The shift a row's point is read against, if any."""
    return _covering(shifts, _point(row))


def common_shifts(
    benchmarks: dict[str, dict], a: Side, b: Side
) -> tuple[list[Shift], list[rules.Change]]:
    """The shifts, and the gate's rows with the rows a shift covers replaced by the points
    that differ from it: the rules applied again with the shift taken out of side b (a row
    keeps its real figures; its evidence says it was read against the shift)."""
    rows = rules.compare(benchmarks, a, b)
    shifts = find(a, b)
    if not shifts:
        return [], rows
    kept = [r for r in rows if covering(shifts, r) is None]
    for r in rules.compare(benchmarks, a, _unshifted(b, shifts)):
        shift = covering(shifts, r)
        if shift is None:
            continue
        point = _point(r)
        new = statistics.median(b.values(point)) if point in b.runs else None
        evidence = dict(r.evidence, less=shift.move)
        kept.append(dataclasses.replace(r, new=new, evidence=evidence))
    return shifts, sorted(kept, key=lambda r: (r.direction != "worse", r.name))
