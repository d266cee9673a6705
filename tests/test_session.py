"""The gate's round policy (tfbench.gate.session) with a fake backend: which runs it asks
for, in what order, what it measures again and when it stops. No asv, no TensorFlow."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import pytest

from tfbench.gate import rules, session
from tfbench.gate.readings import Point, Side
from tfbench.units import MiB

TIME = [(f"m.C{p}.time_step", ("'x'",)) for p in range(5)]
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

    def kinds(self) -> list[tuple]:
        return [(c[0], c[1], c[2]) for c in self.calls]


def gate(backend: Fake, rounds: int = 2, bench: str | None = None) -> session.Measured:
    return session.Session(backend, bench, rounds, say=lambda text: None).measure()


def test_a_quiet_gate_runs_the_rounds_and_nothing_more():
    fake = Fake()
    measured = gate(fake)
    assert fake.kinds() == [
        ("memory", ("A", "B"), "1"),  # memory: both sides at once, first round only
        ("time", ("A",), "1"),
        ("time", ("B",), "1"),
        ("time", ("A",), "2"),
        ("time", ("B",), "2"),
    ]
    assert rules.compare(BENCH, measured.before, measured.after) == []
    assert measured.switches == [0.01, 0.01]  # the second round's: the first makes them


def test_each_run_selects_its_kind_among_what_bench_selects():
    fake = Fake()
    gate(fake, bench="C0")
    memory, time = fake.calls[0][3], fake.calls[1][3]
    assert memory == session.selection("memory", "C0") and time == session.selection("time", "C0")
    assert re.search(memory, rules.point_name(PEAK)) and not re.search(memory, "m.C0.time_step")


def _apart(point: Point, low: list[float], high: list[float]) -> Model:
    """`point` reads `low` in side A's runs and `high` in side B's, the rest quietly."""

    def model(side: str, kind: str, run_id: str, p: Point) -> list[float] | None:
        if p == point:
            return low if side == "A" else high
        return quiet(side, kind, run_id, p)

    return model


def test_a_probe_point_read_apart_is_probed_again_to_five_readings_a_side():
    fake = Fake(_apart(PEAK, [20 * MiB], [40 * MiB]), again=20 * MiB)
    measured = gate(fake)
    assert fake.probed == [([("m.C0Costs", ("'x'",))], 4)]
    assert len(measured.after.values(PEAK)) == 5
    # B's four new readings are A's level: its ranges overlap now, so no row is left
    assert rules.compare(BENCH, measured.before, measured.after) == []
    assert not [c for c in fake.calls if c[2].startswith("m")]  # no peakmem_ point to re-run


def test_a_peakmem_point_read_apart_is_measured_again_through_the_suite_alone():
    fake = Fake(_apart(PEAKMEM, [500 * MiB], [530 * MiB]))
    measured = gate(fake)
    again = [c for c in fake.calls if c[2].startswith("m")]
    assert [(c[0], c[1], c[2]) for c in again] == [
        ("memory", ("A", "B"), f"m{n}") for n in range(1, 5)
    ]
    assert {c[3] for c in again} == {session.selection("memory", session.exactly([PEAKMEM]))}
    (row,) = rules.compare(BENCH, measured.before, measured.after)
    assert (row.metric, row.direction) == ("peakmem_step", "worse")
    assert len(measured.after.values(PEAKMEM)) == 5


def test_only_a_probe_grids_points_are_probed_again():
    """TensorFlow's footprint is measured in a process of its own, not on a probe grid:
    asv measures it again, as it does peakmem_ (the first whole-suite gate with the
    footprint family stopped at its points: no grid to read them again on)."""
    assert session.probed(PEAK)
    assert session.probed(("m.CCosts.track_retained_per_iteration", ("'x'",)))
    assert not session.probed(PEAKMEM)
    assert not session.probed(("footprint.Footprint.track_footprint_rss", ("'CPU'",)))
    assert not session.probed(("footprint.Footprint.track_footprint_heap", ("'CPU'",)))


def _slower(point: Point, factor: float, confirm: float | None = None) -> Model:
    """Side B runs `point` `factor` slower in the rounds, `confirm` slower after them."""

    def model(side: str, kind: str, run_id: str, p: Point) -> list[float] | None:
        values = quiet(side, kind, run_id, p)
        if p != point or side == "A":
            return values
        slow = factor if run_id.isdigit() or confirm is None else confirm
        return [v * slow for v in values]

    return model


def test_a_time_point_whose_runs_part_is_confirmed_to_five_runs_a_side():
    fake = Fake(_slower(TIME[2], 1.3))
    measured = gate(fake)
    confirm = [c for c in fake.calls if c[2].startswith("c")]
    assert [(c[1], c[2]) for c in confirm] == [
        ((side,), f"c{n}") for n in range(1, 4) for side in ("A", "B")
    ]  # A then B, alone, until 5 runs a side
    assert {c[3] for c in confirm} == {session.selection("time", session.exactly([TIME[2]]))}
    (row,) = rules.compare(BENCH, measured.before, measured.after)
    assert (row.name, row.direction) == (rules.point_name(TIME[2]), "worse")
    assert "5 and 5 runs" in row.evidence


def test_a_screened_point_that_does_not_part_again_is_no_row():
    fake = Fake(_slower(TIME[2], 1.3, confirm=1.0))
    measured = gate(fake)
    assert [c for c in fake.calls if c[2].startswith("c")]
    assert rules.compare(BENCH, measured.before, measured.after) == []


def test_a_run_that_reads_the_whole_suite_slow_is_measured_again():
    def model(side: str, kind: str, run_id: str, p: Point) -> list[float] | None:
        values = quiet(side, kind, run_id, p)
        return [v * 2.6 for v in values] if (side, run_id) == ("A", "2") else values

    fake = Fake(model)
    measured = gate(fake)
    assert ("time", ("A",), "r1.1") in fake.kinds()
    assert not [c for c in fake.kinds() if c[1] == ("B",) and c[2].startswith("r")]
    assert rules.compare(BENCH, measured.before, measured.after) == []
    assert len(measured.before.runs[TIME[0]]) == 2  # the slow run is no longer read


def test_the_screen_needs_two_runs_a_side():
    """One round gives one time run a side: the screen passes nothing, so no time point is
    confirmed and no time row can be found (memory is confirmed as with two)."""
    fake = Fake(_slower(TIME[2], 1.3))
    measured = gate(fake, rounds=1)
    assert [c[2] for c in fake.calls] == ["1", "1", "1"]
    assert rules.compare(BENCH, measured.before, measured.after) == []
    fake = Fake(_apart(PEAKMEM, [500 * MiB], [530 * MiB]))
    gate(fake, rounds=1)
    assert [c[2] for c in fake.calls if c[2].startswith("m")] == ["m1", "m2", "m3", "m4"]


def test_a_kind_the_selection_lacks_is_not_asked_again():
    fake = Fake(selects="memory")
    gate(fake)
    assert [c[:3] for c in fake.calls] == [("memory", ("A", "B"), "1"), ("time", ("A",), "1")]


def test_a_selection_of_nothing_is_bad_input():
    with pytest.raises(session.NothingSelected, match="selects no benchmark"):
        gate(Fake(selects="neither"), bench="nothing")
