"""A step's time, read in blocks: the time reader's measuring side (tfbench.pairs.timing).

A reading is one process's: the step warmed, then called a fixed number of times in
blocks of a fixed number of calls, each block's start and end taken on the machine's
monotonic clock (perf_counter: CLOCK_MONOTONIC, one clock for every process of the
machine, so two processes' blocks can be paired by when they ran). The garbage collector
is off within a block, as timeit (and so asv's time_) has it. Both sides of a comparison
are given the same warm-up, calls and blocks: a step whose cost grows with the calls made
(a graph that grows) is compared call for call.
"""

from __future__ import annotations

import gc
import os
import select
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BLOCK_S = 0.01  # a block's length, about: many of them outlast the machine's slow spells
CANARY_LOOPS = 2000  # about 60 us here: a few percent of a block
MIN_BLOCKS = 5  # a reading's fast end needs blocks to choose from (a slow step's are long)
BARRIER_S = 120.0  # how long a reading waits for the other side's to be warm
CALIBRATE_S, CALIBRATE_MAX = 0.05, 1000  # the calls timed one by one to size the blocks
WORK_LOOPS = 200  # a planted slowdown's unit, about 8 us here: fine grained in a block


@dataclass(frozen=True)
class Plan:
    """How a point is read, the same for every reading of both sides: the untimed calls
    after the first, the timed calls, the calls a block, and the step's seconds a call
    (what a planted slowdown is a share of: the reader sets it to what its first reading
    read)."""

    warmup: int
    calls: int
    block: int
    each: float = 0.0

    def as_json(self) -> dict[str, Any]:
        return {"warmup": self.warmup, "calls": self.calls, "block": self.block, "each": self.each}


def plan(step: Callable[[], Any], seconds: float) -> Plan:
    """A plan for the step: calls timed one by one (CALIBRATE_S, at most CALIBRATE_MAX:
    the warm-up of every later reading) give its time a call; blocks of about BLOCK_S, and
    calls enough for `seconds` (MIN_BLOCKS blocks at least)."""
    began, times = time.perf_counter(), list[float]()
    while time.perf_counter() - began < CALIBRATE_S and len(times) < CALIBRATE_MAX:
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    each = max(statistics.median(times), 1e-9)
    block = max(1, round(BLOCK_S / each))
    calls = block * max(MIN_BLOCKS, round(seconds / (each * block)))
    return Plan(len(times), calls, block, each)


def canary() -> None:
    """A fixed piece of CPU work, timed beside each block: how fast the machine runs at
    that moment (a slow spell slows it as it slows the step)."""
    work(CANARY_LOOPS)


class Turns:
    """Two readings taking turns block by block: each waits for its turn before a block and
    hands it over after, through a FIFO a side in a folder both know. Their blocks then
    alternate a block apart, so a slow spell of the machine (tenths of a second here) falls
    on both sides' neighbouring blocks, while only one side runs at a time."""

    def __init__(self, folder: Path, side: str, other: str, first: bool) -> None:
        # read-write: opening a FIFO so does not wait for the other end
        self._mine = os.open(folder / f"{side}.turn", os.O_RDWR)
        self._theirs = os.open(folder / f"{other}.turn", os.O_RDWR)
        self._held = first

    def take(self) -> None:
        if not self._held:
            if not select.select([self._mine], [], [], BARRIER_S)[0]:
                raise TimeoutError("the other side's reading never handed over its turn")
            os.read(self._mine, 1)
            self._held = True

    def give(self) -> None:
        os.write(self._theirs, b"t")
        self._held = False


def blocks(
    step: Callable[[], Any],
    plan: Plan,
    warmed: bool = False,
    beside: bool = False,
    turns: Turns | None = None,
) -> list[tuple[int, ...]]:
    """The step called by the plan (its warm-up first, untimed, unless `warmed`: the plan
    was just made, its calibration the warm-up): each block's (start, end) in nanoseconds
    of the monotonic clock, and its calls; `beside`: the canary's nanoseconds, timed just
    before the block, too."""
    for _ in range(0 if warmed else plan.warmup):
        step()
    found: list[tuple[int, ...]] = []
    done = 0
    while done < plan.calls:
        n = min(plan.block, plan.calls - done)
        if turns is not None:  # waiting is untimed, and a timeout leaves the collector on
            turns.take()
        collecting = gc.isenabled()
        gc.disable()
        try:
            if beside:
                began = time.perf_counter_ns()
                canary()
                sung = time.perf_counter_ns() - began
            start = time.perf_counter_ns()
            for _ in range(n):
                step()
            end = time.perf_counter_ns()
        finally:
            if turns is not None:
                turns.give()
            if collecting:
                gc.enable()
        found.append((start, end, n, sung) if beside else (start, end, n))
        done += n
    return found


def planted(step: Callable[[], Any], share: float, plan: Plan) -> Callable[[], Any]:
    """The step with `share` more work (a planted slowdown, to calibrate the time reader):
    CPU-bound work, not a sleep, so a slow spell slows it as it slows the step. The work
    is a run of a pure-Python loop (`work`) after every plan.block calls, so in every block
    of a reading alike, as long as takes `share` of a block (plan.each a call) timed
    alone (fractions carried to the next run). Not TensorFlow's work: after the step's own
    work an eager matmul costs more than it does alone, by an amount that varies with the
    step (a 5% plant of them read 7-10%: docs/validation/gate.md); the loop costs what it
    costs alone."""
    for _ in range(100):
        work()
    began, n = time.perf_counter(), 1000
    for _ in range(n):
        work()
    per_run = share * plan.each * plan.block / ((time.perf_counter() - began) / n)
    calls, owed = [0], [0.5]

    def more() -> Any:
        found = step()
        calls[0] += 1
        if calls[0] % plan.block == 0:
            owed[0] += per_run
            while owed[0] >= 1:
                work()
                owed[0] -= 1
        return found

    return more


def work(loops: int = WORK_LOOPS) -> None:
    """Pure CPU work of the interpreter (a planted slowdown's unit: a few microseconds)."""
    total = 0
    for k in range(loops):
        total += k * k


def meet(folder: Path, side: str, timeout: float) -> None:
    """Wait (warm) until every side's reading is warm, so that both time the same moments:
    each marks itself ready in `folder` and waits for the others' marks (at most
    `timeout`: a side that failed is not waited for long)."""
    (folder / f"{side}.ready").touch()
    deadline = time.monotonic() + timeout
    while len(list(folder.glob("*.ready"))) < 2 and time.monotonic() < deadline:
        time.sleep(0.001)
