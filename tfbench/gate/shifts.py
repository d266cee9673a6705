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

from tfbench import floors
from tfbench.gate import rules
from tfbench.gate.readings import Point, Side
from tfbench.units import format_bytes

MIN_POINTS = 5
COMMON_SHARE = 0.6
# benchmark method prefix -> (the shift is a ratio, its floor); the probe's figures are the
# pattern's own memory, which a footprint does not move
SHIFTING = {"peakmem_": (False, floors.PEAKMEM_FLOOR), "time_": (True, floors.TIME_FLOOR)}


@dataclass(frozen=True)
class Shift:
    metric: str  # the benchmark method, e.g. peakmem_step
    ratio: bool  # time: a factor; memory: bytes added
    amount: float
    followed: int  # points within the floor of the shift
    points: int  # points measured on both sides

    @property
    def move(self) -> str:
        if self.ratio:
            return f"x{self.amount:.2f}"
        return f"{'+' if self.amount >= 0 else '-'}{format_bytes(abs(self.amount))}"

    def text(self) -> str:
        what = "time per step" if self.ratio else "the process's peak memory (peakmem_step)"
        return f"{what} moved {self.move} at {self.followed} of {self.points} points"

    def as_json(self) -> dict:
        return {
            "metric": self.metric,
            "ratio": self.ratio,
            "amount": self.amount,
            "followed": self.followed,
            "points": self.points,
        }


def _method(point: Point) -> str:
    return point[0].rpartition(".")[2]


def _moves(a: Side, b: Side, points: list[Point], ratio: bool) -> dict[Point, float]:
    before = {p: statistics.median(a.values(p)) for p in points}
    after = {p: statistics.median(b.values(p)) for p in points}
    if ratio:
        return {p: after[p] / before[p] for p in points if before[p] > 0}
    return {p: after[p] - before[p] for p in points}


def find(a: Side, b: Side) -> list[Shift]:
    """Every metric that moved in common between side a and side b."""
    found = []
    for prefix, (ratio, floor) in SHIFTING.items():
        points = sorted(p for p in set(a.runs) & set(b.runs) if _method(p).startswith(prefix))
        moves = _moves(a, b, points, ratio)
        if len(moves) < MIN_POINTS:
            continue
        shift = statistics.median(moves.values())
        if ratio:
            if abs(math.log(shift)) <= math.log1p(floor):
                continue
            followed = sum(abs(math.log(m / shift)) <= math.log1p(floor) for m in moves.values())
        else:
            if abs(shift) <= floor:
                continue
            followed = sum(abs(m - shift) <= floor for m in moves.values())
        if followed >= COMMON_SHARE * len(moves):
            metric = _method(points[0])
            found.append(Shift(metric, ratio, shift, followed, len(moves)))
    return found


def _unshifted(side: Side, shifts: list[Shift]) -> Side:
    """A copy of the side with each shift taken out of its metric's readings."""
    by_metric = {s.metric: s for s in shifts}
    out = Side(runs=dict(side.runs), missing=dict(side.missing), count=side.count)
    for point, runs in side.runs.items():
        s = by_metric.get(_method(point))
        if s:
            out.runs[point] = [
                [v / s.amount if s.ratio else v - s.amount for v in run] for run in runs
            ]
    return out


def compare(
    benchmarks: dict[str, dict], a: Side, b: Side
) -> tuple[list[Shift], list[rules.Change]]:
    """The shifts, and the gate's rows with each shifted metric's rows replaced by the
    points that differ from its shift: the rules applied again with the shift taken out of
    side b (a row keeps its real figures; its evidence says it was read against the shift)."""
    rows = rules.compare(benchmarks, a, b)
    shifts = find(a, b)
    if not shifts:
        return [], rows
    by_metric = {s.metric: s for s in shifts}
    kept = [r for r in rows if r.metric not in by_metric]
    for r in rules.compare(benchmarks, a, _unshifted(b, shifts)):
        shift = by_metric.get(r.metric)
        if shift is None:
            continue
        point = (r.benchmark, tuple(r.params.values()))
        after = statistics.median(b.values(point)) if point in b.runs else None
        evidence = f"{r.evidence}, the newer side read less the common {shift.move}"
        kept.append(dataclasses.replace(r, after=after, evidence=evidence))
    return shifts, sorted(kept, key=lambda r: (r.direction != "worse", r.name))
