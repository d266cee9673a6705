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
PLANT_LOOPS = 20  # a planted slowdown's unit, under a microsecond: it overshoots by no more


@dataclass(frozen=True)
class Plan:
    """How a point is read, the same for every reading of both sides: the untimed calls
    after the first, the timed calls, the calls a block, and the step's seconds a call (as
    the plan's calibration read it)."""

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
    plant: float = 0.0,
) -> list[tuple[int, ...]]:
    """The step called by the plan (its warm-up first, untimed, unless `warmed`: the plan
    was just made, its calibration the warm-up): each block's (start, end) in nanoseconds
    of the monotonic clock, and its calls; `beside`: the canary's nanoseconds, timed just
    before the block, too. `plant`: a planted slowdown (calibration): after each block's
    calls, CPU work (a pure-Python loop, not a sleep) for that share of their time, so the
    block reads that much longer at whatever speed the machine ran it (a plant sized once
    is not: docs/validation/gate.md#plant-in-the-block)."""
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
            if plant:
                until = end + plant * (end - start)
                while time.perf_counter_ns() < until:
                    work(PLANT_LOOPS)
                end = time.perf_counter_ns()
        finally:
            if turns is not None:
                turns.give()
            if collecting:
                gc.enable()
        found.append((start, end, n, sung) if beside else (start, end, n))
        done += n
    return found


def work(loops: int) -> None:
    """Pure CPU work of the interpreter: a fixed amount of it (the canary), or a planted
    slowdown's unit."""
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
