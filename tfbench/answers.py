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


@dataclass(frozen=True)
class Answer:
    text: str  # one of ANSWERS
    kept: float | None  # bytes kept for good a step (the retained slope)
    garbage: float | None  # bytes a step left to the cyclic collector
    why: str = ""  # where it does not run: the error

    def said(self) -> str:
        """The answer in a line, with the figure it rests on (a step: the reporter's loop
        body)."""
        if self.text == REPRODUCES and self.kept is not None:
            return f"{REPRODUCES}: {format_bytes(self.kept)} kept a step"
        if self.text == GARBAGE and self.garbage is not None:
            return f"{GARBAGE}: {format_bytes(self.garbage)} a step until a collection"
        if self.text == FAILS:
            return f"{FAILS}: {self.why}"
        return self.text


def answer(measured: record.Record) -> Answer:
    """The answer a step's record gives (a whole record, or a kept one)."""
    if not record.measured(measured):
        why = measured.get("error") or measured.get("status") or "no reading"
        return Answer(FAILS, None, None, str(why))
    return judged(
        measured.get("leak"),
        measured.get("retained_bytes_per_iteration"),
        measured.get("garbage_bytes_per_iteration"),
        measured.get("garbage_interval"),
    )


def judged(
    leak: bool | None,
    kept: float | None,
    garbage: float | None,
    interval: list[float] | None = None,
) -> Answer:
    """The answer of a step that measured, from its figures: the leak verdict, what it keeps
    and the garbage it leaves a step, with that garbage's 95% interval where read (the
    history's medians have none)."""
    if leak is None:
        return Answer(NO_VERDICT, kept, garbage)
    if leak:
        return Answer(REPRODUCES, kept, garbage)
    return Answer(GARBAGE if _garbage(garbage, interval) else FLAT, kept, garbage)


def _garbage(garbage: float | None, interval: list[float] | None) -> bool:
    """The collector frees at least the garbage floor a step, the slope's 95% interval, where
    read, wholly above zero."""
    if garbage is None or garbage < floors.GARBAGE_FLOOR:
        return False
    return not interval or interval[0] > 0
