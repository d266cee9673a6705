"""The time reader (tfbench.pairs.timing, tfbench.pairs.verdict, tfbench.measure.timer): its
estimate, its interval and verdict, its adaptive pairs, the blocks a reading takes, and
recorded gates replayed. Servers and steps are fakes, but for one slow test that reads a
step in two real servers."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import random
import sys
import time
from pathlib import Path

import pytest

from tfbench import targets
from tfbench.measure import timer
from tfbench.pairs import timing, verdict
from tfbench.targets import ScenarioTarget


def blocks(per_call: list[float], calls: int = 10, start: int = 0) -> verdict.Blocks:
    """Blocks of `calls` calls, one after the other, each at its seconds a call."""
    found, t = [], start
    for seconds in per_call:
        length = int(seconds * calls * 1e9)
        found.append((t, t + length, calls))
        t += length
    return found


def test_a_reading_is_its_fast_end_not_its_slow_spells():
    steady = [0.006] * 40
    spelled = [0.006] * 22 + [0.011] * 18  # nearly half the reading in a slow spell
    assert verdict.reading(blocks(spelled)) == pytest.approx(verdict.reading(blocks(steady)))
    assert verdict.reading(blocks([0.0066] * 40)) == pytest.approx(0.0066)  # a real 10%


def machine_blocks(each: float, spell: tuple[float, float], count: int = 30) -> verdict.Blocks:
    """Blocks of 10 calls at `each` seconds a call, twice as long while the machine is in
    its slow spell (seconds from the start)."""
    found, t = [], 0
    for _ in range(count):
        slow = spell[0] <= t / 1e9 < spell[1]
        length = int(each * 10 * (2 if slow else 1) * 1e9)
        found.append((t, t + length, 10))
        t += length
    return found


def test_a_duet_is_scored_over_the_moments_both_ran():
    """A spell that slows both sides at once does not move their ratio."""
    old, new = (machine_blocks(each, (0.5, 1.0)) for each in (0.006, 0.0063))
    assert math.exp(verdict.duet(old, new)) == pytest.approx(1.05, rel=0.01)
    assert verdict.duet(old, blocks([0.006] * 5, start=10**13)) is None  # never together


def test_readings_taking_turns_are_scored_block_by_block():
    """Blocks that alternate, old then new: a spell that slows both neighbours of a pair
    does not move their ratio, though it holds more than a tenth of either reading."""
    old, new = [], []
    for i in range(30):
        slow = 2.0 if 10 <= i < 20 else 1.0
        old.append((i * 4 * 10**7, i * 4 * 10**7 + int(0.01 * slow * 1e9), 10))
        new.append((i * 4 * 10**7 + 2 * 10**7, i * 4 * 10**7 + int(0.0105 * slow * 1e9 + 2e7), 10))
    assert math.exp(verdict.turns(old, new)) == pytest.approx(1.05, rel=1e-6)


def test_two_readings_take_turns_one_block_each(tmp_path):
    """Two processes, one FIFO a side: their blocks alternate and never overlap."""
    for side in ("old", "new"):
        os.mkfifo(tmp_path / f"{side}.turn")
    plan = timer.Plan(0, 40, 4)
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # the new side, second
        found = timer.blocks(
            lambda: time.sleep(0.0005), plan, turns=timer.Turns(tmp_path, "new", "old", False)
        )
        os.write(write, json.dumps(found).encode())
        os._exit(0)
    os.close(write)
    old = timer.blocks(
        lambda: time.sleep(0.0005), plan, turns=timer.Turns(tmp_path, "old", "new", True)
    )
    with os.fdopen(read) as pipe:
        new = json.loads(pipe.read())
    assert os.waitpid(child, 0)[1] == 0
    moments = sorted([(s, e, "old") for s, e, _ in old] + [(s, e, "new") for s, e, _ in new])
    assert [who for _, _, who in moments] == ["old", "new"] * 10
    assert all(a[1] <= b[0] for a, b in zip(moments, moments[1:]))


@pytest.mark.parametrize("level, low, high", [(0.95, 0.02, 0.07), (0.99, 0.003, 0.02)])
def test_the_interval_covers_the_truth_at_its_level(level, low, high):
    random.seed(7)
    missed = 0
    for _ in range(2000):
        logs = [random.gauss(0, 0.03) for _ in range(10)]
        _, lo, hi = verdict.interval(logs, level)
        missed += not lo <= 0 <= hi
    assert low < missed / 2000 < high  # 1 - level, with the exact test's steps
    assert verdict.interval([0.01] * 5, 0.95) is None  # 5 pairs cannot reach 95%
    assert verdict.interval([0.01] * 7, 0.99) is None and verdict.interval([0.01] * 8, 0.99)


def test_an_outlying_pair_moves_the_estimate_by_a_rank_not_its_size():
    logs = [0.0, 0.01, -0.01, 0.005, -0.005, 0.002, -0.002, 0.003, -0.003, 0.004, -0.004]
    logs.append(0.9)  # one process 2.5x slow
    estimate, low, high = verdict.interval(logs)
    assert abs(estimate) < 0.01 and high < 0.5


@pytest.mark.parametrize(
    "change, answer",
    [(1.00, verdict.SAME), (1.10, verdict.DIFFERENT), (0.90, verdict.DIFFERENT)],
)
def test_the_verdict_against_the_margin(change, answer):
    random.seed(3)
    logs = [math.log(change) + random.gauss(0, 0.005) for _ in range(10)]
    found = verdict.decide(logs, margin=0.02)
    assert found.answer == answer
    assert found.ratio == pytest.approx(change, rel=0.01)
    assert found.unseen is not None
    assert abs(change - 1) - 0.02 < found.unseen < abs(change - 1) + 0.02


def test_what_an_unknown_point_may_hide_is_its_intervals_farther_bound():
    found = verdict.Verdict(verdict.UNKNOWN, 1.01, 0.95, 1.10, 8)
    assert found.unseen == pytest.approx(0.10)
    assert verdict.Verdict(verdict.UNKNOWN, 1.0, 1 / 1.2, 1.1, 8).unseen == pytest.approx(0.2)
    assert verdict.Verdict(verdict.UNKNOWN, None, None, None, 7).unseen is None


def test_a_wide_interval_is_unknown():
    random.seed(5)
    logs = [math.log(1.03) + random.gauss(0, 0.05) for _ in range(8)]
    assert verdict.decide(logs, margin=0.02).answer == verdict.UNKNOWN


class FakeServer:
    """A time server whose readings' seconds a call are `seconds(point, side)`."""

    def __init__(self, side: str, seconds, asked: list) -> None:
        self.side, self.seconds, self.asked, self.last = side, seconds, asked, None

    def ask(self, request: dict) -> None:
        turn = (request.get("side"), request.get("turns"))
        self.asked.append((self.side, request["benchmark"], request["plan"] is None, turn))
        self.last = request

    def answer(self, timeout: float = 0) -> dict:
        each = self.seconds(self.last["benchmark"], self.side)
        plan = self.last["plan"] or {"warmup": 1, "calls": 100, "block": 10}
        return {"status": "ok", "plan": plan, "blocks": blocks([each] * 10)}

    def wait(self) -> None:
        pass

    def close(self) -> None:
        pass


class FakeSideServer(timing.SideServer):
    def __init__(self, name: str, seconds, asked: list) -> None:
        super().__init__("python", None, None)  # type: ignore[arg-type]
        self.name, self.seconds_of, self.asked, self.renewed = name, seconds, asked, 0

    def start(self) -> None:
        if self.server is None:
            self.server = FakeServer(self.name, self.seconds_of, self.asked)

    def renew(self) -> None:
        self.renewed += 1
        self.server = None


def test_points_are_read_in_pairs_again_while_unknown_and_no_more_than_most():
    noise = random.Random(11)

    def seconds(benchmark: str, side: str) -> float:
        if benchmark == "m.Steady":
            return 0.001
        if benchmark == "m.Slower":
            return 0.001 * (1.10 if side == "new" else 1.0)
        return 0.001 * math.exp(noise.gauss(0, 0.2))  # m.Noisy: never decided

    asked: list = []
    old, new = FakeSideServer("old", seconds, asked), FakeSideServer("new", seconds, asked)
    points = [(f"m.{n}.time_step", ("'x'",)) for n in ("Steady", "Slower", "Noisy")]
    reader = timing.Reader(first=8, most=12)
    found = timing.measure(points, old, new, reader, say=lambda s: None)
    answers = {p[0]: t.verdict.answer for p, t in found.items()}
    assert answers == {
        "m.Steady.time_step": verdict.SAME,
        "m.Slower.time_step": verdict.DIFFERENT,
        "m.Noisy.time_step": verdict.UNKNOWN,
    }
    pairs = {p[0]: len(t.logs) for p, t in found.items()}
    assert pairs == {"m.Steady.time_step": 8, "m.Slower.time_step": 8, "m.Noisy.time_step": 12}
    assert old.renewed == new.renewed == 12  # new servers for every pass over the points
    first = [a for a in asked if a[2]]  # a plan made once a point, by the old side
    assert sorted(a[:3] for a in first) == [
        ("old", f"m.{n}", True) for n in ("Noisy", "Slower", "Steady")
    ]
    summary = timing.summary(found, reader, dict.fromkeys(found, "cpu-x"))
    assert (summary["different"], summary["same"]) == (1, 1)
    assert summary["unknown"] == ["m.Noisy.time_step('x')"]
    (noisy,) = [t.verdict for p, t in found.items() if p[0] == "m.Noisy.time_step"]
    assert summary["unseen"] == [noisy.unseen, noisy.unseen]
    said = verdict.time_line(summary)
    assert said.startswith(f"time: 3 point(s) read in pairs (turns, {reader.seconds:g} s readings")
    assert "1 unknown after 8 to 12 pairs (their intervals leave open a change of" in said
    assert f"{noisy.unseen:.0%} at the widest" in said
    assert said.endswith(
        "; a point was read on while it left a change of 5% open or lay apart from no change"
    )
    assert said.startswith(verdict.time_line({**summary, "apart": None}))  # kept before it
    assert "1 unknown after 8 pairs" in verdict.time_line({**summary, "pairs": [8, 8]})
    assert verdict.time_line(summary, "cpu x").startswith(
        "time: 3 point(s) read in pairs on cpu x"
    )
    # every point's estimate and interval, whatever its answer (a chain moves each by it)
    kept = {p["point"]: p for p in summary["points"]}
    for point, t in found.items():
        told = kept[f"{point[0]}({', '.join(point[1])})"]
        v = t.verdict
        assert (told["answer"], told["ratio"], told["low"], told["high"], told["pairs"]) == (
            v.answer,
            v.ratio,
            v.low,
            v.high,
            v.pairs,
        )
        assert told["cpu"] == "cpu-x"


def two_percent_slower(noise: random.Random):
    """Seconds a call, the new side's 2% slower and 1% noisy a reading."""

    def seconds(benchmark: str, side: str) -> float:
        return 0.001 * (1.02 * math.exp(noise.gauss(0, 0.01)) if side == "new" else 1.0)

    return seconds


def test_a_point_that_rules_out_the_watched_change_is_read_on_only_while_apart():
    """Unknown at the margin (a 2% change read to about 1% either way) and its interval
    rules out a change of 5%, but lies above no change: read on to the most, as a reader
    watching for any change reads on; a reader watching for 5% alone stops."""
    point = [("m.Near.time_step", ())]
    for watch, apart, pairs in ((0.05, False, 8), (0.0, False, 12), (0.05, True, 12)):
        seconds = two_percent_slower(random.Random(4))
        asked: list = []
        old, new = FakeSideServer("old", seconds, asked), FakeSideServer("new", seconds, asked)
        reader = timing.Reader(first=8, most=12, watch=watch, apart=apart)
        (found,) = timing.measure(point, old, new, reader, say=lambda s: None).values()
        told = found.verdict
        assert told.answer == verdict.UNKNOWN and told.pairs == pairs, (watch, told)
        assert told.unseen is not None and told.unseen < 0.05 and told.apart, told


def test_an_interval_apart_from_no_change_lies_wholly_on_one_side_of_it():
    def told(low: float, high: float) -> verdict.Verdict:
        return verdict.Verdict(verdict.UNKNOWN, (low + high) / 2, low, high, 8)

    assert told(1.001, 1.03).apart and told(0.97, 0.999).apart
    assert not told(0.99, 1.03).apart and not told(1.0, 1.03).apart
    assert not verdict.Verdict(verdict.UNKNOWN, None, None, None, 7).apart
    assert verdict.reads_on(told(1.001, 1.03)) and not verdict.reads_on(told(0.99, 1.03))
    assert not verdict.reads_on(told(1.001, 1.03), apart=False)


def test_the_old_and_new_readings_alternate_in_order_pair_by_pair():
    asked: list = []
    old, new = (
        FakeSideServer("old", lambda b, s: 0.001, asked),
        FakeSideServer("new", lambda b, s: 0.001, asked),
    )
    reader = timing.Reader(design=timing.INTERLEAVED, first=8, most=8)
    timing.measure([("m.A.time_step", ())], old, new, reader, say=print)
    order = [a[0] for a in asked if not a[2]]
    assert order == ["old", "new", "new", "old"] * 4


def test_readings_taking_turns_alternate_who_goes_first_pair_by_pair():
    asked: list = []
    old, new = (
        FakeSideServer("old", lambda b, s: 0.001, asked),
        FakeSideServer("new", lambda b, s: 0.001, asked),
    )
    timing.measure([("m.A.time_step", ())], old, new, timing.Reader(first=8, most=8), say=print)
    firsts = [a[3] for a in asked if not a[2]]
    assert firsts == [("old", "first"), ("new", "second"), ("old", "second"), ("new", "first")] * 4


def test_a_plan_sizes_blocks_to_a_hundredth_of_a_second_and_a_reading_to_its_seconds():
    def step():
        time.sleep(0.001)

    plan = timer.plan(step, 0.2)
    assert 5 <= plan.block <= 10 and plan.calls >= 5 * plan.block
    assert 0.1 < plan.calls * plan.each < 0.5
    found = timer.blocks(step, timer.Plan(0, 20, 4))
    assert [n for _, _, n in found] == [4] * 5
    assert all(end - start >= 4e6 for start, end, _ in found)  # 4 calls of 1 ms at least


def test_a_planted_slowdown_is_its_share_of_each_blocks_calls(monkeypatch):
    """The plant's arithmetic on a fake clock: a step of 1 ms in blocks of 10 calls, the
    second block's calls at half speed; the plant's unit 10 us. 5% more is 50 units after
    the first block's calls and 100 after the second's, inside each block's time."""
    clock, speeds = [0], iter([1] * 10 + [2] * 10)
    monkeypatch.setattr(timer.time, "perf_counter_ns", lambda: clock[0])

    def step():
        clock[0] += 1_000_000 * next(speeds)

    units = []

    def work(loops):
        units.append(clock[0])
        clock[0] += 10_000

    monkeypatch.setattr(timer, "work", work)
    found = timer.blocks(step, timer.Plan(warmup=0, calls=20, block=10), plant=0.05)
    assert [(end - start) / 1e6 for start, end, _ in found] == [10.5, 21.0]
    assert len(units) == 50 + 100
    assert all(found[0][0] < t < found[0][1] or found[1][0] < t < found[1][1] for t in units)


@pytest.mark.parametrize("share", [0.05, 0.2])
def test_a_planted_slowdown_reads_back_as_its_share(share):
    """Calibration: a CPU-bound step planted with `share` reads x(1 + share): blocks of
    about a millisecond taking turns in one process, plain and planted, each side read at
    the fast end of its blocks. The other test worker's load preempts a block now and then,
    and a longer block more often: reading the reader's 10 ms blocks a 5% plant read
    x0.91 once in CI and up to x1.38 beside eight busy processes, where these read
    x1.046-1.053 beside two to eight (docs/validation/gate.md#plant-in-the-block)."""

    def step():
        timer.work(1000)

    plan = timer.plan(step, 0.05)
    short = max(1, plan.block // 10)
    one = timer.Plan(0, short, short)
    old, new = [], []
    for k in range(1000):
        for plant in (0, share) if k % 2 else (share, 0):
            (old if plant == 0 else new).extend(timer.blocks(step, one, plant=plant))
    assert math.exp(verdict.apart(old, new)) == pytest.approx(1 + share, abs=max(0.02, share / 4))


def test_a_target_is_read_as_a_point_of_its_own():
    """bisect reads a scenario or a user's step, not a benchmark: the request names it."""
    target = ScenarioTarget("loop.python_matmul", {"size": 64})
    point = timing.target_point(target)
    assert timing.subject(point) == {"target": targets.to_json(target)}
    assert targets.step_from_json(timing.subject(point)["target"]) == target
    bench = ("loops.MatrixPower.time_step", ("'python_matmul'", "64"))
    assert timing.subject(bench) == {
        "benchmark": "loops.MatrixPower",
        "combo": ["'python_matmul'", "64"],
    }


@pytest.mark.slow
def test_a_targets_time_in_two_environments_finds_a_planted_slowdown_and_not_itself():
    """bisect's comparison for real: one environment on both sides (A/A), then the new
    side's work doubled. The plant is large because a CI runner's pairs spread
    by 30% (a +20% plant read x0.97-1.82 there); sensitivity to 5% is the whole-suite
    calibration's job (docs/validation/gate.md#time)."""
    target = ScenarioTarget("loop.python_matmul", {"size": 64})
    pythons = (sys.executable, sys.executable)
    # seven pairs each, the fewest with a 98% interval: a doubled step needs no more (at a
    # CI runner's 30%, every pair clears the margin), and the A/A reads as many
    reader = timing.Reader(first=7, most=7, seconds=0.2)
    same = timing.compare(target, pythons, reader, say=lambda s: None)
    slower = timing.compare(target, pythons, reader, say=lambda s: None, plant=(0.0, 1.0))
    assert same.skipped is None and same.verdict.answer != verdict.DIFFERENT
    assert slower.verdict.answer == verdict.DIFFERENT, slower.verdict
    assert same.verdict.pairs == slower.verdict.pairs == 7
    assert 1.4 < slower.verdict.ratio < 3.0


RECORDED = sorted((Path(__file__).parent / "data" / "time").glob("*.json"))


def recorded(name: str) -> dict[str, list[float]]:
    return json.loads((Path(__file__).parent / "data" / "time" / name).read_text())["points"]


GATES = timing.Reader()  # the rule the gate reads by
# the rules before: read on only while 5% is open, to 50 pairs (24b1bca) and to 40 (49d801d)
FIFTY = dataclasses.replace(GATES, apart=False)
FORTY = dataclasses.replace(FIFTY, most=40)


def by_the_reader(logs: list[float], reader: timing.Reader = GATES) -> verdict.Verdict:
    """The verdict a reader's rule (its margin, pairs, watch: the gate's own by default)
    stops at."""
    return verdict.replayed(
        logs, reader.margin, reader.first, reader.most, watch=reader.watch, apart=reader.apart
    )


def test_the_recorded_gates_replay_to_where_the_reader_stopped():
    """The reader's stopping rule and its replay are one rule: every point a recorded
    whole-suite gate decided replays to that answer after exactly the pairs it read."""
    assert RECORDED
    for path in RECORDED:
        for name, logs in recorded(path.name).items():
            told = by_the_reader(logs)
            if told.answer != verdict.UNKNOWN:
                assert told.pairs == len(logs), (path.name, name)


AA_TURNS = [f"aa{k}-turns-v2.21.0.json" for k in (5, 6, 7, 8)]  # v2.21.0 against itself
AA_WATCH = [f"aa{k}-watch-v2.21.0.json" for k in (9, 10, 11)]  # the same, read on to 40


def told(run: dict[str, list[float]], change: float = 0.0) -> list[verdict.Verdict]:
    """A recorded run's verdicts under the reader's rule, its pairs moved by `change`: the
    first pairs only (a recorded gate holds 8 a point; more are drawn in
    tests/validation/time_replay.py)."""
    moved = [[x + math.log1p(change) for x in logs] for logs in run.values()]
    return [verdict.replayed(m, GATES.margin, GATES.first, GATES.first) for m in moved]


def found_worse(run: dict[str, list[float]], change: float) -> float:
    found = told(run, change)
    return round(sum(v.answer == verdict.DIFFERENT and v.ratio > 1 for v in found) / len(found), 2)


def test_the_recorded_aa_gates_read_in_turns_replay_to_no_row_and_find_a_moved_change():
    """Calibration, replayed: four whole-suite A/A gates read in turns (81 points, 8 pairs
    each) read no point different under the reader's rule at their first pairs; their pairs
    moved by 5% and 10%, and the gate with a 5% plant, are found there at the shares
    measured (docs/validation/gate.md#watch)."""
    for name in AA_TURNS:
        run = recorded(name)
        assert len(run) == 81 and all(len(v) == 8 for v in run.values()), name
        assert not any(v.answer == verdict.DIFFERENT for v in told(run)), name
    assert [found_worse(recorded(n), 0.05) for n in AA_TURNS] == [0.27, 0.44, 0.54, 0.54]
    assert [found_worse(recorded(n), 0.10) for n in AA_TURNS] == [0.77, 0.80, 0.91, 0.91]
    assert found_worse(recorded("plant05-block-v2.21.0.json"), 0.0) == 0.54


def test_gates_drawn_from_the_aa_pairs_read_by_the_whole_rule_find_5_percent_and_no_row():
    """Calibration of the rule as the reader reads (first pairs, then more while a point
    could hide 5% or lies apart from no change, to the most), on gates drawn from the seven
    A/A gates' pairs read in turns (tests/validation/time_replay.py --drawn): 3 false rows
    in 50 gates; a 5% change moved into 10 gates found at 88-98% of the points, 10% at
    99-100% (docs/validation/gate.md#watch)."""
    from validation import time_replay

    rule = time_replay.read_by(GATES)
    aa = [recorded(n) for n in AA_TURNS + AA_WATCH]
    false, _ = time_replay.drawn(aa, 0.0, rule, 50, seed=0)
    assert sum(false) == 3
    found, _ = time_replay.drawn(aa, 0.05, rule, 10, seed=1)
    assert [round(f / 81, 2) for f in found] == [
        0.93, 0.93, 0.93, 0.96, 0.94, 0.94, 0.98, 0.94, 0.91, 0.88
    ]  # fmt: skip
    found, _ = time_replay.drawn(aa, 0.10, rule, 10, seed=1)
    assert min(found) >= 80


def replayed(name: str, reader: timing.Reader = FORTY) -> list[verdict.Verdict]:
    """A recorded gate's verdicts, each point's pairs read by `reader`."""
    return [by_the_reader(logs, reader) for logs in recorded(name).values()]


def answered(told: list[verdict.Verdict]) -> list[int]:
    """How many points each answer holds (different, same, unknown)."""
    return [sum(v.answer == a for v in told) for a in verdict.ANSWERS]


def test_the_gates_read_with_the_watch_replay_to_their_verdicts():
    """The gates read while a point could hide 5% (docs/validation/gate.md#watch,
    #watch-candidate, #watch-50) replay, by the rule each was read with, to what they said.
    To 40 pairs: the A/A gates no row (the first and the third, whole-suite: 9 same, every
    unknown point stopped with 5% ruled out or at the most; the second: 1 same, the budget
    spent at 26 pairs); the 5% plant found worse at 72 of 81 points, the 10% one at all 81;
    the candidate (v2.21.0 against v2.22.0rc0) 14 better and 4 worse. To 50 pairs: the 5%
    plant found worse at 73, 72 of them by its first 40 pairs; the two A/A gates no row, 14
    and 29 same."""

    aa = replayed("aa9-watch-v2.21.0.json")
    assert answered(aa) == [0, 9, 72]
    assert sum(v.pairs for v in aa) == 917
    for v in aa:
        assert v.answer != verdict.UNKNOWN or v.unseen < FORTY.watch or v.pairs == FORTY.most
    assert answered(replayed("aa10-watch-v2.21.0.json")) == [0, 1, 80]
    assert answered(replayed("aa11-watch-v2.21.0.json")) == [0, 9, 72]
    plant = replayed("plant05-watch-v2.21.0.json")
    assert sum(v.answer == verdict.DIFFERENT and v.ratio > 1 for v in plant) == 72
    assert not any(v.answer == verdict.DIFFERENT and v.ratio < 1 for v in plant)
    plant10 = replayed("plant10-watch-v2.21.0.json")
    assert all(v.answer == verdict.DIFFERENT and v.ratio > 1 for v in plant10)
    assert len(plant10) == 81
    candidate = replayed("cand-watch-v2.21.0-v2.22.0rc0.json")
    assert answered(candidate) == [18, 5, 58]
    assert sum(v.answer == verdict.DIFFERENT and v.ratio < 1 for v in candidate) == 14

    plant50 = replayed("plant05-watch50-v2.21.0.json", FIFTY)
    assert answered(plant50) == [73, 0, 8]
    assert all(v.ratio > 1 for v in plant50 if v.answer == verdict.DIFFERENT)
    assert sum(v.pairs for v in plant50) == 1030
    assert answered(replayed("plant05-watch50-v2.21.0.json"))[0] == 72
    aa50 = replayed("aa12-watch50-v2.21.0.json", FIFTY)
    assert answered(aa50) == [0, 14, 67]
    assert sum(v.pairs for v in aa50) == 973 and max(v.pairs for v in aa50) == FIFTY.most
    assert answered(replayed("aa13-watch50-v2.21.0.json", FIFTY)) == [0, 29, 52]


def test_the_gates_read_on_while_apart_replay_to_their_verdicts():
    """Read on while apart from no change as well (the rule now,
    docs/validation/gate.md#watch): the 5% plant found worse at 76, where
    its pairs read by the rule before find 72; three A/A gates (the whole suite, the time
    points, the whole suite) no row, 17, 13 and 5 same; the candidate again, 10 better and
    4 worse."""
    apart = replayed("plant05-apart-v2.21.0.json", GATES)
    assert answered(apart) == [76, 0, 5]
    assert all(v.ratio > 1 for v in apart if v.answer == verdict.DIFFERENT)
    assert sum(v.pairs for v in apart) == 1348
    assert answered(replayed("plant05-apart-v2.21.0.json", FIFTY))[0] == 72
    aa_apart = replayed("aa14-apart-v2.21.0.json", GATES)
    assert answered(aa_apart) == [0, 17, 64] and sum(v.pairs for v in aa_apart) == 817
    assert answered(replayed("aa15-apart-v2.21.0.json", GATES)) == [0, 13, 68]
    aa_third = replayed("aa16-apart-v2.21.0.json", GATES)
    assert answered(aa_third) == [0, 5, 76] and sum(v.pairs for v in aa_third) == 920
    candidate = replayed("cand-apart-v2.21.0-v2.22.0rc0.json", GATES)
    assert answered(candidate) == [14, 5, 62] and sum(v.pairs for v in candidate) == 1277
    assert sum(v.answer == verdict.DIFFERENT and v.ratio < 1 for v in candidate) == 10
