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


def answer(measured: record.Record) -> Answer:
    """The answer a step's record gives (a whole record, or a kept one)."""
    if not record.measured(measured):
        why = measured.get("error") or measured.get("status") or "no reading"
        return Answer(FAILS, None, None, str(why))
    kept = measured.get("retained_bytes_per_iteration")
    garbage = measured.get("garbage_bytes_per_iteration")
    leak = measured.get("leak")
    if leak is None:
        return Answer(NO_VERDICT, kept, garbage)
    if leak:
        return Answer(REPRODUCES, kept, garbage)
    return Answer(GARBAGE if _garbage(measured) else FLAT, kept, garbage)


def _garbage(measured: record.Record) -> bool:
    """The collector frees at least the garbage floor a step, the slope's whole 95% interval
    above zero."""
    garbage = measured.get("garbage_bytes_per_iteration")
    interval = measured.get("garbage_interval")
    if garbage is None or garbage < floors.GARBAGE_FLOOR:
        return False
    return not interval or interval[0] > 0
