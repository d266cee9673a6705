"""Two releases measured in one session on this machine: the gate's policy.

A session measures the old release and the new one in phases, each a
method over one state:

1. memory: memory (`peakmem_`, the probe's `track_`; one reading a point) is read both
   sides at once: a reading is one process's own RSS, which a neighbour does not change,
   and both sides then see the same machine at the same moment. These runs are the screen.
2. confirm_memory: the memory points whose readings part by the rules are read again, both
   sides at once, until they have rules.CONFIRM_READINGS a side (a probe point by the
   side's probe alone, not its family's whole grid; a `peakmem_` point through asv).
3. times: every `time_` point by the time reader (tfbench.pairs.timing): readings in pairs,
   one side then the other, until its verdict is known or the pairs run out (UNKNOWN).
How a run is made and read is the Backend's business (tfbench.gate.asvruns: asv runs and
time servers in each release's environment); tested with a fake one.
"""

from __future__ import annotations

import itertools
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from tfbench import figures, naming
from tfbench.gate import readings, rules
from tfbench.gate.readings import Point, Side
from tfbench.keptfiles import fields
from tfbench.pairs.verdict import Timed

SIDES = fields.SIDES  # as kept files name them
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

    def times(self, points: list[Point]) -> dict[Point, Timed]:
        """Each `time_` point's pairs of readings and its verdict (tfbench.pairs.timing)."""


def selection(kind: str, bench: str | None) -> str:
    """asv's --bench for one kind of run: its benchmarks (time_ or the rest) among those the
    user's regex selects (asv matches `name(params)` with re.search; lookaheads intersect)."""
    kind_re = rf"(?=[^(]*\.{naming.TIME})" if kind == "time" else rf"(?![^(]*\.{naming.TIME})"
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
    old: Side
    new: Side
    seconds: float
    switches: list[float]  # seconds to have a side's (existing) environment ready, per run
    timed: dict[Point, Timed] = field(default_factory=dict)  # the time reader's points


@dataclass
class Session:
    """One gate's state, and its phases (the module's docstring) as methods over it."""

    backend: Backend
    bench: str | None = None
    say: Say = print
    tags: dict[str, str] = field(default_factory=lambda: dict(zip(SIDES, SIDES)))  # for `say`
    runs: dict[str, list[Any]] = field(default_factory=lambda: {s: [] for s in SIDES})
    again: dict[str, Again] = field(default_factory=lambda: {s: {} for s in SIDES})
    unselected: set[str] = field(default_factory=set)  # kinds --bench selects none of
    switches: list[float] = field(default_factory=list)
    suite: dict[str, dict] = field(default_factory=dict)  # the benchmarks, once found

    def measure(self) -> Measured:
        start = time.monotonic()
        self.run_memory()
        self.suite = self.backend.benchmarks()
        self.confirm_memory()
        timed = self.backend.times(time_points(self.suite, self.bench))
        old, new = self.read()
        seconds = time.monotonic() - start
        return Measured(self.suite, old, new, seconds, self.switches, timed)

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

    def run_memory(self) -> None:
        """Memory, both sides at once; where the selection holds no memory benchmark, one
        discovering run of its time benchmarks (the suite as asv finds it)."""
        self.switches += self.backend.environments()
        self.batch("memory", SIDES, "1", "memory", self.bench)
        if "memory" in self.unselected:
            found = self.backend.run("time", ["old"], "discover", selection("time", self.bench))
            if found.get("old") is None:
                raise NothingSelected(f"--bench {self.bench!r} selects no benchmark of the suite")

    def read(self) -> tuple[Side, Side]:
        sides = []
        for s in SIDES:
            side = self.backend.read(s, self.runs[s])
            readings.add_again(side, self.again[s])
            sides.append(side)
        return sides[0], sides[1]

    def confirm_memory(self) -> None:
        memory = rules.memory_screened(self.suite, *self.read())
        extra = rules.CONFIRM_READINGS - 1
        if not memory:
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


def time_points(suite: dict[str, dict], bench: str | None) -> list[Point]:
    """The grid points of the suite's `time_` benchmarks that `bench` selects (as asv's
    --bench selects: a search in name(param values)), but a GPU's (the time reader's points
    are read where the history's are: CPU)."""
    found = []
    for name, spec in sorted(suite.items()):
        if not naming.timed(name):
            continue
        for combo in itertools.product(*spec.get("params") or [[]]):
            point = (name, tuple(combo))
            shown = rules.point_name(point)
            if not naming.on_gpu(combo) and (not bench or re.search(bench, shown)):
                found.append(point)
    return found
