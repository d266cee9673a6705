"""The time reader: two builds' times of each `time_` grid point, read in pairs until the
verdict is known (tfbench.pairs.verdict), by one of three designs.

Each side has a time server (tfbench.pairs.server) in its own environment; a reading is
a child it forks, so every reading is a process of its own. Each pass over the points
starts new servers: a process's layout (which a forked child shares with its server) is a
source of difference between processes, and it must vary from pair to pair on both sides.

- duet: both sides read at the same moment, one core each, cores swapped pair by pair
  (duet-unpinned: where the scheduler puts them), their timing started together (both
  warm first), scored by the calls each made over the same moments (verdict.duet).
- interleaved: one side then the other, the order alternating pair by pair (Abedi and
  Brecht's randomized multiple interleaved trials), each reading scored alone.
- turns (the reader's): both sides' readings warm at once, then take turns block by
  block (measure.timer.Turns), who goes first alternating pair by pair, scored by their
  neighbouring blocks (verdict.turns): a slow spell falls on both, and only one side
  runs at a time.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import selectors
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from tfbench import whole
from tfbench.pairs import verdict
from tfbench.paths import ROOT

if TYPE_CHECKING:  # the servers' side: imported where a server starts, not by the CLI
    from tfbench import targets

DUET, DUET_FREE, INTERLEAVED, TURNS = "duet", "duet-unpinned", "interleaved", "turns"
READY_S = 120.0  # a server's first answer: TensorFlow imported in its environment
Point = tuple[str, tuple[str, ...]]  # (benchmark: module.Class.time_step, asv's values)
TARGET = "target"  # a Point naming a target, not a benchmark: (TARGET, (its JSON,))


def target_point(target: targets.Step) -> Point:
    """The point a target is read as (bisect's: a scenario or a user's step)."""
    from tfbench import targets

    return (TARGET, (json.dumps(targets.to_json(target), sort_keys=True),))


def subject(point: Point) -> dict[str, Any]:
    """What a request to the server names: a target, or a benchmark's grid point (the
    server asks the benchmark's class for the step)."""
    name, values = point
    if name == TARGET:
        return {"target": json.loads(values[0])}
    return {"benchmark": name.rpartition(".")[0], "combo": list(values)}


class ServerError(RuntimeError):
    """A time server stopped answering (the log is named)."""


class Server:
    """One side's time server, asked one reading at a time."""

    def __init__(self, python: str, suite: Path, log: Path, env: dict[str, str]) -> None:
        from tfbench import targets
        from tfbench.measure.spawn import Spawned

        self.log = log
        self._tmp = whole.scratch("tfbench-time-")
        env = {**targets.isolated_env(self._tmp, [str(suite.parent)]), **env}
        self._logged = log.open("a")
        self.process = Spawned(
            [python, "-m", "tfbench.pairs.server", str(suite)],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._logged,
        )
        self.readings = 0
        self._waiting = True

    def wait(self) -> None:
        """Until the server says it is ready (TensorFlow imported), once."""
        if self._waiting:
            said = self.answer(READY_S)
            if said != {"ready": True}:
                raise ServerError(f"the time server said {said!r} before it was ready: {self.log}")
            self._waiting = False

    def ask(self, request: dict[str, Any]) -> None:
        stdin = self._pipe(self.process.process.stdin)
        stdin.write(json.dumps(request).encode() + b"\n")
        stdin.flush()
        self.readings += 1

    def answer(self, timeout: float = READY_S + 300) -> dict[str, Any]:
        stdout = self._pipe(self.process.process.stdout)
        with selectors.DefaultSelector() as waiting:
            waiting.register(stdout, selectors.EVENT_READ)
            if not waiting.select(timeout):
                raise ServerError(f"no answer in {timeout:.0f} s: {self.log}")
        line = stdout.readline()
        if not line:
            raise ServerError(f"the time server ended (exit {self.process.poll()}): {self.log}")
        return json.loads(line.decode())

    def close(self) -> None:
        self.process.kill()
        self._logged.close()
        shutil.rmtree(self._tmp, ignore_errors=True)

    @staticmethod
    def _pipe(pipe: IO[Any] | None) -> Any:
        if pipe is None:
            raise ServerError("the time server has no pipe")
        return pipe


@dataclass
class SideServer:
    """A side's server, one at a time, replaced for each pass over the points (`renew`)."""

    python: str
    suite: Path
    log: Path
    env: dict[str, str] = field(default_factory=dict)  # the side's own (asv's ASV_COMMIT)
    server: Server | None = None

    def start(self) -> None:
        """The side's server started, if none: it imports while the other side's does."""
        if self.server is None:
            self.server = Server(self.python, self.suite, self.log, self.env)

    def ready(self) -> Server:
        """The side's server, ready for a request."""
        self.start()
        assert self.server is not None
        self.server.wait()
        return self.server

    def renew(self) -> None:
        """The next reading in a new server."""
        self.close()

    def close(self) -> None:
        if self.server is not None:
            self.server.close()
            self.server = None


def read_pair(
    found: verdict.Timed,
    old: SideServer,
    new: SideServer,
    design: str,
    seconds: float,
    k: int,
    plant: tuple[float, float] = (0.0, 0.0),
    canary: bool = False,
) -> None:
    """One more pair of readings of the point (the k-th: its order or its cores); `plant`:
    each side's share of more work (a planted slowdown: calibration)."""
    request = subject(found.point)
    request |= {"plan": found.plan, "seconds": seconds, "cpu": None, "canary": canary}
    if found.plan is None:  # the first reading of the old side makes the plan
        first = old.ready()
        first.ask(request)
        reply = first.answer()
        if reply.get("status") != "ok":
            found.skipped = f"{reply.get('status')}: {reply.get('error')}"
            return
        found.plan = request["plan"] = reply["plan"]
    sides = (old, new)
    if design == INTERLEAVED:
        order = [0, 1] if k % 2 == 0 else [1, 0]
        replies = []
        for i in order:
            server = sides[i].ready()
            server.ask(dict(request, plant=plant[i]))
            replies.append(server.answer())
        if k % 2:
            replies.reverse()
    else:
        replies = _together(sides, request, design, k, plant)
    a, b = replies
    if a.get("status") != "ok" or b.get("status") != "ok":
        bad = a if a.get("status") != "ok" else b
        found.skipped = f"{bad.get('status')}: {bad.get('error')}"
        return
    score = {INTERLEAVED: verdict.apart, TURNS: verdict.turns}.get(design, verdict.duet)
    log = score(a["blocks"], b["blocks"])
    if log is not None and math.isfinite(log):
        found.logs.append(log)
        found.readings.append((a, b))


def _together(
    sides: tuple[SideServer, SideServer],
    request: dict[str, Any],
    design: str,
    k: int,
    plant: tuple[float, float],
) -> list[dict[str, Any]]:
    """Both sides' readings of the k-th pair asked at once, warm before either is timed
    (a duet's cores, or who takes the first turn, alternate pair by pair)."""
    servers = [s.ready() for s in sides]
    cores = sorted(os.sched_getaffinity(0))[:2]
    with whole.temporary("tfbench-pair-") as folder:
        for name in ("old", "new") if design == TURNS else ():
            os.mkfifo(folder / f"{name}.turn")
        for i, (name, server) in enumerate(zip(("old", "new"), servers)):
            asked = dict(request, barrier=str(folder), side=name, plant=plant[i])
            if design == TURNS:
                asked["turns"] = "first" if i == k % 2 else "second"
            elif design == DUET:
                asked["cpu"] = cores[(i + k) % len(cores)]
            server.ask(asked)
        return [server.answer() for server in servers]


@dataclass(frozen=True)
class Reader:
    """How the time reader reads (tests/validation/time_designs.py chose it: docs/gate.md)."""

    design: str = TURNS
    margin: float = 0.02  # a change within it is SAME; beyond it, where the interval is, DIFFERENT
    first: int = 8  # pairs every point gets before any stops (docs/validation/gate.md#watch)
    most: int = 50  # pairs at most, a point read again while verdict.reads_on
    seconds: float = 0.5  # a reading's timed calls, about
    budget_s: float = 2700.0  # no more pairs once the reader has read this long (first excepted)
    watch: float = verdict.WATCH  # read on while the interval leaves this change open
    apart: bool = True  # and while it lies apart from no change (docs/validation/gate.md#watch)


def measure(
    points: list[Point],
    old: SideServer,
    new: SideServer,
    reader: Reader = Reader(),
    plant: tuple[float, float] = (0.0, 0.0),
    say: Callable[[str], None] = print,
) -> dict[Point, verdict.Timed]:
    """Each point (benchmark, asv's param values) read in `reader.first` pairs, then one more
    pair at a time while its verdict is unknown and could hide a change of `reader.watch`
    or lies apart from no change (verdict.reads_on), `reader.most` pairs at most and while
    the reader's budget lasts; each pass over the points in new servers. `plant`: each
    side's share of more work (calibration)."""
    found = {p: verdict.Timed(p, reader.margin) for p in points}
    began = time.monotonic()
    for k in range(reader.most):
        asked = [
            p
            for p in points
            if found[p].skipped is None
            and (
                k < reader.first or verdict.reads_on(found[p].verdict, reader.watch, reader.apart)
            )
        ]
        if not asked or (k >= reader.first and time.monotonic() - began > reader.budget_s):
            break
        for side in (old, new):  # both start at once; no reading while either imports
            side.renew()
            side.start()
        old.ready(), new.ready()
        for p in asked:
            read_pair(found[p], old, new, reader.design, reader.seconds, k, plant)
        say(f"time: pair {k + 1} read at {len(asked)} point(s)")
    return found


def compare(
    target: targets.Target,
    pythons: tuple[str, str],
    reader: Reader = Reader(),
    say: Callable[[str], None] = print,
    plant: tuple[float, float] = (0.0, 0.0),
) -> verdict.Timed:
    """A step's time in two environments (old, new), read in pairs as the gate reads a
    point: bisect's comparison of two builds (the servers' logs in the temporary folder).
    `plant`: each side's share of more work (calibration). ValueError for a target that is
    no step (TensorFlow's footprint has no time a call)."""
    from tfbench import targets

    if isinstance(target, targets.FootprintTarget):
        raise ValueError(f"{target.name} is not a step: it has no time a call")
    point = target_point(target)
    logs = Path(tempfile.gettempdir()) / "tfbench-time"
    logs.mkdir(exist_ok=True)
    old, new = (
        SideServer(python, ROOT / "benchmarks", logs / f"time-{name}.log")
        for python, name in zip(pythons, ("old", "new"))
    )
    try:
        return measure([point], old, new, reader, plant, say)[point]
    finally:
        old.close()
        new.close()


def compared(
    target: targets.Target,
    pythons: tuple[str, str],
    names: tuple[str, str],
    reader: Reader = Reader(),
    say: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Two builds' times (`compare`, their environments' Pythons), as a bisection keeps
    them (verdict.compared): the test of time of a bisection over releases or nightlies."""
    say(f"time: {names[0]} against {names[1]}, read in pairs ...")
    return verdict.compared(compare(target, pythons, reader, say), *names)


def record(timed: dict[Point, verdict.Timed], reader: Reader, plant: float, path: Path) -> None:
    """Every pair's readings as read (blocks included), for replaying the verdict offline:
    written beside the gate's asv runs, never kept in results/."""
    points = [
        {"benchmark": b, "params": list(c), "skipped": t.skipped, "logs": t.logs,
         "readings": [list(r) for r in t.readings]}
        for (b, c), t in timed.items()
    ]  # fmt: skip
    body = {"reader": dataclasses.asdict(reader), "plant": plant, "points": points}
    path.write_text(json.dumps(body, default=str))


def summary(
    timed: dict[Point, verdict.Timed], reader: Reader, cpu_of: Mapping[Point, str]
) -> dict[str, Any]:
    """What the time reader did, as a kept gate run keeps it: how it read, how many points
    each answer holds, the unknown ones named and the change they may hide (no row is no
    proof of no change); each point's estimate, and the id of the CPU it was read on."""
    told = {p: t.verdict for p, t in timed.items() if t.skipped is None}
    answers = {p: v.answer for p, v in told.items()}
    unseen = sorted(  # under 8 pairs: none
        v.unseen for v in told.values() if v.answer == verdict.UNKNOWN and v.unseen is not None
    )
    return {
        "design": reader.design,
        "margin": reader.margin,
        "level": verdict.LEVEL,
        "pairs": [reader.first, reader.most],
        "watch": reader.watch,
        "apart": reader.apart,
        "seconds": reader.seconds,
        "skipped": sum(t.skipped is not None for t in timed.values()),
        **{a: sum(v == a for v in answers.values()) for a in (verdict.DIFFERENT, verdict.SAME)},
        "unknown": sorted(_name(p) for p, a in answers.items() if a == verdict.UNKNOWN),
        # the change an unknown point may hide (its interval's farther bound), at the median
        # point and the widest: what "no row" leaves open
        "unseen": [statistics.median(unseen), unseen[-1]] if unseen else None,
        # every point's estimate and interval, whatever its answer: a release chained onto
        # a history moves each point by its estimate (tfbench.history.chain)
        "points": [
            {
                "point": _name(p),
                "cpu": cpu_of.get(p),
                "answer": v.answer,
                "ratio": v.ratio,
                "low": v.low,
                "high": v.high,
                "pairs": v.pairs,
            }
            for p, v in sorted(told.items())
        ],  # fmt: skip
    }


def _name(point: Point) -> str:
    """A point as the report names it: benchmark(asv's values)."""
    name, values = point
    return f"{name}({', '.join(values)})"
