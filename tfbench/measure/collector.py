"""Python's cyclic collector around a measured window: what a step keeps for good apart from
the garbage a collection frees.

CPython frees objects in reference cycles only when its collector runs, and the oldest
generation only when the objects promoted to it since exceed a quarter of those it holds
(3.11-3.13): with TensorFlow and Keras imported (~300,000 objects), a loop of
`model.predict` collects it about once in 1,300 calls, and until then its cycles read as
heap in use. So a window reads: kept, the heap after a full collection at up to POINTS
points (its slope is the leak signal); garbage, what every collection frees (CPython's young
ones, run as in a user's loop, and the points' full ones); and, from a tail of calls with
young collections alone, the sawtooth of a user's loop: how often each generation is
collected, what it frees, and the heap's growth between full collections.

At the window's start every live object is frozen (`gc.freeze`), so a full collection walks
only what the window made (~2 ms, not ~0.2 s); CPython's own full collections are off in the
window, so garbage is what tfbench's collections count, not their timing.
"""

from __future__ import annotations

import array
import gc
import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypedDict

import numpy as np

from tfbench.measure import growth

# Full collections a window makes at most (and its first, at its start): enough points for a
# slope and its interval, few enough that the collections cost less than most steps.
POINTS = 50
# CPython 3.11-3.13 collect the oldest generation when generation 1 has been collected more
# than its threshold times and the objects promoted since exceed a quarter of those there
# (Modules/gcmodule.c); 3.14's incremental collector has another rule.
PENDING_SHARE = 4
NO_FULL = 1 << 30  # threshold2 in the window: CPython's own full collections are off
# The tail, where a step leaves garbage: calls with no full collection of tfbench's, until
# CPython's own collections of generation 1 have run this many times, or TAIL_CALLS times
# the window's calls, or this share of the window's time (a second at least).
TAIL_PROMOTIONS = 3
TAIL_CALLS = 10
TAIL_SHARE, TAIL_SECONDS = 0.5, 1.0
# The rounds after a window that grew a little (tfbench.measure.growth) take at most this
# share of the time the window's pace gives their calls, and this many seconds: a
# measurement's process has a timeout (600 s by default).
CONFIRM_SHARE, CONFIRM_SECONDS = 1.5, 60.0


class Collector(TypedDict):
    """Python's collector as the window found it, and the sawtooth a loop of the step draws
    (from the tail: None where it ran no tail, or saw too little to say)."""

    python: str  # X.Y.Z
    thresholds: list[int]  # gc.get_threshold() in the user's process
    tracked: int  # objects gc tracks when the window starts (after a full collection)
    tail_calls: int  # the tail's calls (0: the window freed no garbage, no tail)
    young_every: float | None  # calls between CPython's young collections (generations 0, 1)
    young_pile_bytes: float | None  # what one of them frees, on average
    promoted_per_call: float | None  # objects young collections promote to the oldest a call
    old_garbage_per_call: float | None  # bytes a call leaves that only a full collection frees
    full_every: float | None  # calls between a loop's full collections (CPython 3.11-3.13)
    pile_bytes: float | None  # the garbage a full collection then frees


@dataclass
class Collected:
    """The window's readings at its points and what every collection freed."""

    kept: list[int]  # heap in use after each full collection, the window's start first
    garbage: list[int]  # bytes the collections freed between one point and the next
    stride: int  # calls between points
    garbage_objects: int  # objects the collections freed up to the window's last point
    collector: Collector
    # the rounds read after the window (tfbench.measure.growth); none where it needed none
    rounds: list[growth.Round]


def stride(iterations: int) -> int:
    """Calls between full collections: every call up to POINTS calls, else so that there
    are POINTS points."""
    return max(1, math.ceil(iterations / POINTS))


class Window:
    """The measured window's collector: `start` after warm-up, `point` at every `stride`
    calls, `tail` after the window's last call, `stop` at its end (every setting as it was).

    Every collection's freed bytes are read in a gc callback by `heap`, which should be cheap
    (the preloaded counter's in-use figure: O(1)); the points read the heap with `kept`
    (mallinfo2). A collection that frees no object frees no garbage: what the heap gives
    back then is CPython's free lists, which a full collection empties."""

    def __init__(self, kept: Callable[[], int], heap: Callable[[], int], iterations: int):
        self.read_kept, self.heap, self.stride = kept, heap, stride(iterations)
        # preallocated, like the step loop's readings: a list growing by an int a point
        # read as ~64 B a call kept at two calls a point
        points = iterations // self.stride + 1
        self._kept, self._garbage = array.array("q", bytes(8 * points)), array.array("q")
        self._garbage.frombytes(bytes(8 * points))
        self._round = array.array("q", bytes(8 * (points + 1)))  # a round's points
        self.rounds: list[growth.Round] = []
        self.points = 0
        self.began = 0.0  # when the window started
        self.freed = self.objects = self._counted = self.window_objects = 0
        self.tail_calls = self.tracked = 0
        # the tail's: CPython's own collections and what they free, by generation; the
        # survivors its generation-1 collections promote; what the last full one frees
        self.natural, self.natural_freed = [0, 0, 0], [0, 0, 0]
        self.last = [0, 0, 0]  # the tail's call at the last of each generation's collections
        self.promoted = self.old = 0
        self._start: tuple[int, int] = (0, 0)  # heap, young objects at a collection's start
        self._ours = False
        self.thresholds = list(gc.get_threshold())
        self.enabled = gc.isenabled()

    def start(self) -> None:
        gc.collect()
        gc.freeze()  # counted frozen, not listed: a list of them would be the peak's
        self.tracked = gc.get_freeze_count()
        gc.set_threshold(self.thresholds[0], self.thresholds[1], NO_FULL)
        gc.enable()
        gc.callbacks.append(self._count)
        self._kept[0], self.points = self.read_kept(), 1
        self.began = time.monotonic()

    def _count(self, phase: str, info: dict[str, Any]) -> None:
        generation = info["generation"]
        if phase == "start":
            young = len(gc.get_objects(0)) + len(gc.get_objects(1)) if generation == 1 else 0
            self._start = (self.heap(), young)
            return
        freed = self._start[0] - self.heap() if info["collected"] else 0
        self.freed += freed
        self.objects += info["collected"]
        if self._ours:
            self.old += freed if generation == 2 else 0
            return
        self.natural[generation] += 1
        self.natural_freed[generation] += freed
        self.last[generation] = self.tail_calls
        if generation == 1:  # CPython promotes its survivors (its long_lived_pending)
            self.promoted += self._start[1] - info["collected"] - info["uncollectable"]

    def due(self, call: int) -> bool:
        """Whether the window's `call`-th call (from 1) ends at a point."""
        return call % self.stride == 0

    def _collect(self, *generations: int) -> None:
        self._ours = True
        try:
            for generation in generations:
                gc.collect(generation)
        finally:
            self._ours = False

    def point(self) -> None:
        """A full collection at a point, and the heap it leaves."""
        self._collect(2)
        self._kept[self.points] = self.read_kept()
        self._garbage[self.points] = self.freed - self._counted
        self._counted, self.window_objects = self.freed, self.objects
        self.points += 1

    def kept(self) -> list[int]:
        """The heap after each full collection of the window so far."""
        return self._kept[: self.points].tolist()

    def confirm(self, step: Callable[[], object], calls: int, over: Callable[[], bool]) -> None:
        """Rounds after the window (tfbench.measure.growth), the k-th of `calls` times 2**k
        calls read at as many points as the window (a full collection at each, the heap it
        leaves), until they settle the verdict, within CONFIRM_SHARE times the time the
        window's pace gives them (a step that slows as it leaks; a second at least) and
        CONFIRM_SECONDS, and until `over`; a round cut short is not kept."""
        window = growth.round_of(np.asarray(self.kept()), self.stride)
        pace = (time.monotonic() - self.began) / calls
        seconds = CONFIRM_SHARE * pace * calls * (2**growth.ROUNDS - 1)
        limit = time.monotonic() + min(CONFIRM_SECONDS, max(1.0, seconds))
        for k in range(growth.ROUNDS):
            stride, read, stopped = self.stride << k, 1, False
            self._collect(2)
            self._round[0] = self.read_kept()
            for call in range(1, (calls << k) + 1):
                step()
                if call % stride == 0:
                    self._collect(2)
                    self._round[read] = self.read_kept()
                    read += 1
                if time.monotonic() > limit or over():
                    stopped = True
                    break
            if not stopped:  # a round cut short by the clock counts for nothing
                points = np.frombuffer(self._round, dtype=np.int64)[:read]
                self.rounds.append(growth.round_of(points, stride))
            last = stopped or k == growth.ROUNDS - 1
            if last or (self.rounds and growth.settled(window, self.rounds, last) is not None):
                return

    def tail(
        self, step: Callable[[], object], calls: int, seconds: float, over: Callable[[], bool]
    ) -> None:
        """Where the window freed garbage: calls of the step with CPython's young collections
        alone, as in a user's loop, to read how often they run and what they free, what
        they promote to the oldest generation (so how often a loop collects it) and what
        of that only a full collection frees; then the young generations collected, and the
        oldest."""
        if not self.objects:
            return
        self.natural, self.natural_freed, self.promoted = [0, 0, 0], [0, 0, 0], 0
        self.last = [0, 0, 0]
        # from an empty young generation, as after a loop's full collection: what ran since
        # (the window's verdict, its rounds) would move the first young collection
        self._collect(2)
        limit = time.monotonic() + max(TAIL_SECONDS, TAIL_SHARE * seconds)
        while self.tail_calls < TAIL_CALLS * calls and self.natural[1] < TAIL_PROMOTIONS:
            step()
            self.tail_calls += 1
            if time.monotonic() > limit or over():
                break
        self.old = 0
        self._collect(1, 2)

    def stop(self) -> Collected:
        gc.callbacks.remove(self._count)
        gc.set_threshold(*self.thresholds)
        gc.unfreeze()
        if not self.enabled:
            gc.disable()
        return Collected(
            kept=self.kept(),
            garbage=self._garbage[1 : self.points].tolist(),
            stride=self.stride,
            garbage_objects=self.window_objects,
            collector=self.named(),
            rounds=self.rounds,
        )

    def named(self) -> Collector:
        """The collector as a user's process runs it and, from the tail, the sawtooth of a
        loop of the step: how often its young collections free garbage and how much, and
        how often its full collections would run (CPython 3.11-3.13's rule: more than
        thresholds[2] collections of generation 1, and promoted objects past a quarter of
        those tracked) and what they would free."""
        calls = self.tail_calls
        found = dict.fromkeys(
            ("young_every", "young_pile_bytes", "promoted_per_call", "old_garbage_per_call")
        )
        full_every = pile = None
        if calls:
            young = self.natural[0] + self.natural[1]
            found = {
                "young_every": max(self.last[:2]) / young if young else None,
                "young_pile_bytes": sum(self.natural_freed[:2]) / young if young else None,
                "promoted_per_call": self.promoted / calls,
                "old_garbage_per_call": self.old / calls,
            }
        promoted = found["promoted_per_call"]
        if promoted and self.natural[1] and sys.version_info[:2] <= (3, 13):
            by_pending = self.tracked / PENDING_SHARE / promoted
            by_count = (self.thresholds[2] + 1) * self.last[1] / self.natural[1]
            full_every = max(by_pending, by_count)
            pile = full_every * (found["old_garbage_per_call"] or 0.0)
        return Collector(
            python=".".join(map(str, sys.version_info[:3])),
            thresholds=self.thresholds,
            tracked=self.tracked,
            tail_calls=calls,
            full_every=full_every,
            pile_bytes=pile,
            **found,  # type: ignore[typeddict-item]
        )
