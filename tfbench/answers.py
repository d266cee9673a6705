"""A reported leak's answer on one release, from its step's measured record
(tfbench.scenarios.reported): whether the reporter's claim reproduces there.

- reproduces: the step keeps memory for good (the record's leak verdict: the heap in use
  after full collections grows throughout the window);
- garbage only: it keeps nothing, but leaves reference cycles that only Python's cyclic
  collector frees, so memory grows until a collection (a periodic gc.collect() bounds it);
- does not reproduce: neither;
- does not run: the reproducer raised, timed out or was skipped there (the error says why);
- no verdict: it ran too few iterations for one.
"""

from __future__ import annotations

from dataclasses import dataclass

from tfbench import floors
from tfbench.measure import record
from tfbench.units import format_bytes

REPRODUCES = "reproduces"
GARBAGE = "garbage only"
FLAT = "does not reproduce"
FAILS = "does not run"
NO_VERDICT = "no verdict"
ANSWERS = (REPRODUCES, GARBAGE, FLAT, FAILS, NO_VERDICT)
HEAP, RSS = "heap", "rss"  # what a verdict rests on (the record's leak_basis)


@dataclass(frozen=True)
class Answer:
    text: str  # one of ANSWERS
    kept: float | None  # bytes kept for good a step (the retained slope)
    garbage: float | None  # bytes a step left to the cyclic collector
    why: str = ""  # where it does not run: the error
    basis: str = HEAP  # what the verdict rests on: the heap, or RSS alone where unread

    def said(self) -> str:
        """The answer in a line, with the figure it rests on (a step: the reporter's loop
        body)."""
        if self.text == FAILS:
            return f"{FAILS}: {self.why}"
        said = self.text
        if self.text == REPRODUCES and self.kept is not None:
            said = f"{REPRODUCES}: {format_bytes(self.kept)} kept a step"
        elif self.text == GARBAGE and self.garbage is not None:
            said = f"{GARBAGE}: {format_bytes(self.garbage)} a step until a collection"
        return f"{said} (RSS alone: the heap was not read)" if self.basis == RSS else said


def answer(measured: record.Record) -> Answer:
    """The answer a step's record gives (a whole record, or a kept one)."""
    if not record.measured(measured):
        why = measured.get("error") or measured.get("status") or "no reading"
        return Answer(FAILS, None, None, str(why))
    basis = measured.get("leak_basis") or HEAP
    kept = measured.get("retained_bytes_per_iteration")
    if basis == RSS:
        kept = measured.get("growth_bytes_per_iteration")
    return judged(
        measured.get("leak"),
        kept,
        measured.get("garbage_bytes_per_iteration"),
        measured.get("garbage_interval"),
        basis,
    )


def judged(
    leak: bool | None,
    kept: float | None,
    garbage: float | None,
    interval: list[float] | None = None,
    basis: str = HEAP,
) -> Answer:
    """The answer of a step that measured, from its figures: the leak verdict, what it keeps
    (RSS's growth where the verdict rests on RSS alone) and the garbage it leaves a step,
    with that garbage's 95% interval where read (the history's medians have none)."""
    if leak is None:
        text = NO_VERDICT
    elif leak:
        text = REPRODUCES
    else:
        text = GARBAGE if _garbage(garbage, interval) else FLAT
    return Answer(text, kept, garbage, basis=basis)


def _garbage(garbage: float | None, interval: list[float] | None) -> bool:
    """The collector frees at least the garbage floor a step, the slope's 95% interval, where
    read, wholly above zero."""
    if garbage is None or garbage < floors.GARBAGE_FLOOR:
        return False
    return not interval or interval[0] > 0
