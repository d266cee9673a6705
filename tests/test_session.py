"""The gate's policy (tfbench.gate.session) with a fake backend: which runs it asks for, in
what order, what it measures again, which points it gives the time reader. No asv, no
TensorFlow."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import pytest

from tfbench.gate import rules, session
from tfbench.gate.readings import Point, Side
from tfbench.pairs import verdict
from tfbench.units import MiB

TIME = [(f"m.C{p}.time_step", ("'x'",)) for p in range(5)]
GPU_TIME = ("m.G.time_step", ("'GPU'",))
PEAKMEM = ("m.C0.peakmem_step", ("'x'",))
PEAK = ("m.C0Costs.track_peak_increase", ("'x'",))
BENCH = {
    key: {"param_names": ["variant"], "params": [["'x'"]], "unit": unit}
    for key, unit in [
        *[(k, "seconds") for k, _ in TIME],
        (PEAKMEM[0], "bytes"),
        (PEAK[0], "bytes"),
    ]
}
BENCH[GPU_TIME[0]] = {"param_names": ["device"], "params": [["'CPU'", "'GPU'"]], "unit": "s"}
# side, kind, run id, point -> the run's readings of the point (None: no reading)
Model = Callable[[str, str, str, Point], list[float] | None]


def quiet(side: str, kind: str, run_id: str, point: Point) -> list[float] | None:
    """The same release on both sides: every reading alike."""
    if point in TIME:
        return [1.0 + i / 100 for i in range(10)]
    return [500 * MiB] if point == PEAKMEM else [20 * MiB]


class Fake:
    """A session backend whose runs read what `model` says; it records every call."""

    def __init__(self, model: Model = quiet, again: float = 20 * MiB, selects: str = "both"):
        self.model, self.again_value, self.selects = model, again, selects
        self.calls: list[tuple] = []  # (kind, sides, run id, selection) of every run asked for
        self.probed: list[tuple] = []  # (points, repeats) of every probe_again
        self.timed: list[list[Point]] = []  # the points of every times()

    def environments(self) -> list[float]:
        return [0.01, 0.01]

    def run(self, kind: str, sides: Sequence[str], run_id: str, selection: str) -> dict:
        self.calls.append((kind, tuple(sides), run_id, selection))
        if self.selects not in ("both", kind):
            return dict.fromkeys(sides)
        return {s: (s, kind, run_id, selection) for s in sides}

    def read(self, side: str, runs: list[tuple]) -> Side:
        read = Side()
        for s, kind, run_id, selection in runs:
            read.count += 1
            for point in [*TIME, PEAKMEM, PEAK]:
                if re.search(selection, rules.point_name(point)):
                    for v in self.model(s, kind, run_id, point) or [None]:
                        read.add(point, v)
        return read

    def probe_again(self, points: list[Point], repeats: int) -> dict:
        self.probed.append((points, repeats))
        repeat = {"status": "ok", "peak_increase_bytes": self.again_value}
        return {s: {p: [repeat] * repeats for p in points} for s in session.SIDES}

    def benchmarks(self) -> dict:
        return BENCH

    def times(self, points: list[Point]) -> dict:
        self.timed.append(points)
        return {p: verdict.Timed(p, 0.02, logs=[0.0] * 6) for p in points}

    def kinds(self) -> list[tuple]:
        return [(c[0], c[1], c[2]) for c in self.calls]


def gate(backend: Fake, bench: str | None = None) -> session.Measured:
    return session.Session(backend, bench, say=lambda text: None).measure()


def test_a_quiet_gate_runs_memory_once_then_the_time_reader():
    fake = Fake()
    measured = gate(fake)
    assert fake.kinds() == [("memory", ("old", "new"), "1")]  # memory: both sides at once
    assert fake.timed == [[*TIME, ("m.G.time_step", ("'CPU'",))]]  # every CPU time point
    assert rules.compare(BENCH, measured.old, measured.new) == []
    assert set(measured.timed) == set(fake.timed[0])
    assert measured.switches == [0.01, 0.01]


def test_memory_runs_and_time_points_are_those_bench_selects():
    fake = Fake()
    gate(fake, bench="C0")
    assert fake.calls[0][3] == session.selection("memory", "C0")
    assert re.search(fake.calls[0][3], rules.point_name(PEAK))
    assert not re.search(fake.calls[0][3], "m.C0.time_step")
    assert fake.timed == [[TIME[0]]]


def _apart(point: Point, low: list[float], high: list[float]) -> Model:
    """`point` reads `low` in side A's runs and `high` in side B's, the rest quietly."""

    def model(side: str, kind: str, run_id: str, p: Point) -> list[float] | None:
        if p == point:
            return low if side == "old" else high
        return quiet(side, kind, run_id, p)

    return model


def test_a_probe_point_read_apart_is_probed_again_to_five_readings_a_side():
    fake = Fake(_apart(PEAK, [20 * MiB], [40 * MiB]), again=20 * MiB)
    measured = gate(fake)
    assert fake.probed == [([("m.C0Costs", ("'x'",))], 4)]
    assert len(measured.new.values(PEAK)) == 5
    # B's four new readings are A's level: its ranges overlap now, so no row is left
    assert rules.compare(BENCH, measured.old, measured.new) == []
    assert not [c for c in fake.calls if c[2].startswith("m")]  # no peakmem_ point to re-run


def test_a_peakmem_point_read_apart_is_measured_again_through_the_suite_alone():
    fake = Fake(_apart(PEAKMEM, [500 * MiB], [530 * MiB]))
    measured = gate(fake)
    again = [c for c in fake.calls if c[2].startswith("m")]
    assert [(c[0], c[1], c[2]) for c in again] == [
        ("memory", ("old", "new"), f"m{n}") for n in range(1, 5)
    ]
    assert {c[3] for c in again} == {session.selection("memory", session.exactly([PEAKMEM]))}
    (row,) = rules.compare(BENCH, measured.old, measured.new)
    assert (row.metric, row.direction) == ("peakmem_step", "worse")
    assert len(measured.new.values(PEAKMEM)) == 5


def test_only_a_probe_grids_points_are_probed_again():
    """TensorFlow's footprint is measured in a process of its own, not on a probe grid:
    asv measures it again, as it does peakmem_ (the first whole-suite gate with the
    footprint family stopped at its points: no grid to read them again on)."""
    assert session.probed(PEAK)
    assert session.probed(("m.CCosts.track_retained_per_iteration", ("'x'",)))
    assert not session.probed(PEAKMEM)
    assert not session.probed(("footprint.Footprint.track_footprint_rss", ("'CPU'",)))
    assert not session.probed(("footprint.Footprint.track_footprint_heap", ("'CPU'",)))


def test_a_selection_of_time_alone_finds_the_suite_in_one_time_run():
    """No memory benchmark selected: one run of side A's time benchmarks finds the suite
    (asv's discovery) for the time reader, which then reads the points."""
    fake = Fake(selects="time")
    gate(fake, bench="C1")
    assert [c[:3] for c in fake.calls] == [
        ("memory", ("old", "new"), "1"),
        ("time", ("old",), "discover"),
    ]
    assert fake.timed == [[TIME[1]]]


def test_a_selection_of_nothing_is_bad_input():
    with pytest.raises(session.NothingSelected, match="selects no benchmark"):
        gate(Fake(selects="neither"), bench="nothing")
