"""Two releases measured in one session on this machine, interleaved: the gate's policy.

A session measures side A (the old release) and side B (the new one) in phases, each a
method over one state (every run of each side, the rounds' time runs, the probe points
measured again):

1. rounds: a round measures memory, then time. Memory (`peakmem_`, the probe's `track_`;
   one reading a point a round) is read in the first MEMORY_ROUNDS rounds, both sides at
   once: a reading is one process's own RSS, which a neighbour does not change, and both
   sides then see the same machine at the same moment. Time (`time_`, every sample) is
   read in every round, A then B, with nothing beside it. These runs are the screen.
2. rerun_disturbed: a rounds' time run that reads the whole suite slow (rules.disturbed)
   is measured again, RERUNS times at most a side.
3. confirm_memory: the memory points whose readings part by the rules are read again, both
   sides at once, until they have rules.CONFIRM_READINGS a side (a probe point by the
   side's probe alone, not its family's whole grid; a `peakmem_` point through asv).
4. confirm_time: the time points whose runs already part (rules.screened) are re-measured
   alone, A then B, until they have rules.CONFIRM_RUNS runs a side.
The other points cost nothing more. How a run is made and read is the Backend's business
(tfbench.gate.asvruns: asv runs in each release's environment); tested with a fake one.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from tfbench import figures
from tfbench.gate import readings, rules
from tfbench.gate.readings import Point, Side

ROUNDS = 2  # time: the screen's runs a side (rules.SCREEN_RUNS)
MEMORY_ROUNDS = 1  # memory: one reading a side, both sides at once; points apart get more
RERUNS = 2  # at most, a side, for runs that read the whole suite slow (rules.disturbed)
SIDES = ("A", "B")
KINDS = ("memory", "time")

Say = Callable[[str], None]
Again = dict[Point, list[dict]]  # (Costs class, param values) -> the probe's kept repeats


class NothingSelected(ValueError):
    """--bench selects no benchmark of the suite."""


class Backend(Protocol):
    """What a session asks of the machine. A run is an opaque handle the backend reads."""

    def environments(self) -> list[float]:
        """Make each side's environment ready; the seconds each took."""

    def run(
        self, kind: str, sides: Sequence[str], run_id: str, selection: str
    ) -> dict[str, Any | None]:
        """One run of `kind` for each of `sides`, started together and all ended: side ->
        its run, or None where the selection picked no benchmark of that kind."""

    def read(self, side: str, runs: list[Any]) -> Side:
        """Every reading of the side's runs, pooled."""

    def probe_again(self, points: list[Point], repeats: int) -> dict[str, Again]:
        """Probe points (Costs class, param values) measured `repeats` more times by each
        side's probe, both sides at once: side -> point -> the repeats."""

    def benchmarks(self) -> dict[str, dict]:
        """The suite's benchmarks (asv's descriptions), as the runs found them."""


def selection(kind: str, bench: str | None) -> str:
    """asv's --bench for one kind of run: its benchmarks (time_ or the rest) among those the
    user's regex selects (asv matches `name(params)` with re.search; lookaheads intersect)."""
    kind_re = r"(?=[^(]*\.time_)" if kind == "time" else r"(?![^(]*\.time_)"
    return f"^{kind_re}" + (f"(?=.*?(?:{bench}))" if bench else "")


def exactly(points: list[Point]) -> str:
    """asv's --bench for exactly these grid points."""
    return "|".join(rules.point_pattern(rules.point_name(p)) for p in points)


def probed(point: Point) -> bool:
    """Whether the benchmark of `point` reports a figure of a probe grid (tfbench.probes),
    which tfbench.gate.confirm reads again; the others (peakmem_, TensorFlow's footprint)
    asv measures again."""
    figure = figures.PROBED.get(point[0].rpartition(".")[2])
    return figure is not None and figure.grid


@dataclass
class Measured:
    benchmarks: dict[str, dict]
    before: Side
    after: Side
    seconds: float
    switches: list[float]  # seconds to have a side's (existing) environment ready, per run


@dataclass
class Session:
    """One gate's state, and its phases (the module's docstring) as methods over it."""

    backend: Backend
    bench: str | None = None
    rounds: int = ROUNDS
    say: Say = print
    tags: dict[str, str] = field(default_factory=lambda: dict(zip(SIDES, SIDES)))  # for `say`
    runs: dict[str, list[Any]] = field(default_factory=lambda: {s: [] for s in SIDES})
    screen: dict[str, list[Any]] = field(default_factory=lambda: {s: [] for s in SIDES})
    again: dict[str, Again] = field(default_factory=lambda: {s: {} for s in SIDES})
    unselected: set[str] = field(default_factory=set)  # kinds --bench selects none of
    switches: list[float] = field(default_factory=list)
    suite: dict[str, dict] = field(default_factory=dict)  # the benchmarks, once the rounds ran

    def measure(self) -> Measured:
        start = time.monotonic()
        self.run_rounds()
        self.suite = self.backend.benchmarks()
        self.rerun_disturbed()
        self.confirm_memory()
        self.confirm_time()
        before, after = self.read()
        seconds = time.monotonic() - start
        return Measured(self.suite, before, after, seconds, self.switches)

    def batch(
        self, kind: str, sides: Sequence[str], run_id: str, label: str, selected: str | None
    ) -> dict[str, Any]:
        """One run of `kind` for each of `sides`, at once; side -> its run, for the sides it
        measured (every run a side has counts towards its readings)."""
        began = time.monotonic()
        done = {}
        for s, run in self.backend.run(kind, sides, run_id, selection(kind, selected)).items():
            if run is None:
                self.unselected.add(kind)
                continue
            self.runs[s].append(run)
            done[s] = run
            seconds = time.monotonic() - began
            self.say(f"{label}, {kind}: {s} = {self.tags[s]} measured in {seconds:.0f} s")
        return done

    def run_rounds(self) -> None:
        for r in range(1, self.rounds + 1):
            seconds = self.backend.environments()
            if r > 1:  # the first round may create them
                self.switches += seconds
            label = f"round {r}/{self.rounds}"
            if r <= MEMORY_ROUNDS and "memory" not in self.unselected:
                self.batch("memory", SIDES, str(r), label, self.bench)
            for s in SIDES:
                if "time" not in self.unselected:
                    self.screen[s] += self.batch("time", [s], str(r), label, self.bench).values()
        if not self.runs["A"]:
            raise NothingSelected(f"--bench {self.bench!r} selects no benchmark of the suite")

    def rerun_disturbed(self) -> None:
        for s in SIDES:
            for attempt in range(1, RERUNS + 1):
                screen = self.screen[s]
                slow = [
                    screen[i]
                    for i in rules.disturbed([self.backend.read(s, [run]) for run in screen])
                ]
                if not slow:
                    break
                self.say(f"time: {s} = {self.tags[s]}: {len(slow)} run(s) read the suite slow")
                for run in slow:
                    screen.remove(run)
                    self.runs[s].remove(run)
                for n in range(len(slow)):
                    run_id, label = f"r{attempt}.{n + 1}", f"re-run {attempt}"
                    screen += self.batch("time", [s], run_id, label, self.bench).values()

    def read(self) -> tuple[Side, Side]:
        sides = []
        for s in SIDES:
            side = self.backend.read(s, self.runs[s])
            readings.add_again(side, self.again[s])
            sides.append(side)
        return sides[0], sides[1]

    def confirm_memory(self) -> None:
        memory = rules.memory_screened(self.suite, *self.read())
        extra = rules.CONFIRM_READINGS - min(self.rounds, MEMORY_ROUNDS)
        if not memory or extra <= 0:
            return
        self.say(f"memory: {len(memory)} point(s) read apart, re-measured {extra} more times")
        points = sorted(
            {(key.rpartition(".")[0], combo) for key, combo in memory if probed((key, combo))}
        )
        if points:
            began = time.monotonic()
            self.again = self.backend.probe_again(points, extra)
            seconds = time.monotonic() - began
            self.say(f"memory confirm: {len(points)} probe point(s) again in {seconds:.0f} s")
        others = [p for p in memory if not probed(p)]
        for c in range(1, extra + 1):  # asv's peakmem_: a process a point, cheap through asv
            if others:
                label = f"memory confirm {c}/{extra}"
                self.batch("memory", SIDES, f"m{c}", label, exactly(others))

    def confirm_time(self) -> None:
        screened = rules.screened(*self.read())
        extra = rules.CONFIRM_RUNS - self.rounds
        if not screened or extra <= 0:
            return
        self.say(
            f"time: {len(screened)} point(s) passed the screen, re-measured {extra} more times"
        )
        for c in range(1, extra + 1):
            for s in SIDES:
                self.batch("time", [s], f"c{c}", f"confirm {c}/{extra}", exactly(screened))
