"""The seed articles' claims, and whether each holds on each release, by the numbers."""

from __future__ import annotations

from dataclasses import dataclass

from tfbench.publish.families import Family, reason
from tfbench.publish.results import MachineResults


@dataclass(frozen=True)
class Claim:
    """A claim of an article (tfbench.publish.articles) on catalog points."""

    text: str
    family: str
    # "leak": `a` leaks (what it keeps); "flat": `a` does not; "garbage": `a` leaves garbage
    # Python's collector frees; "no-garbage": it leaves none; "time"/"peak": `a` above `b`
    metric: str
    a: dict[str, str]
    b: dict[str, str] | None = None
    article: str = ""  # the name of the article it is of, as the report gives it


def p(**params: object) -> dict[str, str]:
    """A point's params as asv's reprs."""
    return {k: repr(v) for k, v in params.items()}


@dataclass(frozen=True)
class Outcome:
    release: str
    holds: bool | None  # None: no value on this release
    ratio: float | None  # a / b, for claims that compare two points
    reason: str | None = None  # why there is no value, where the probe kept it


@dataclass(frozen=True)
class Answer:
    claim: Claim
    outcomes: list[Outcome]

    @property
    def newest(self) -> Outcome | None:
        return self.outcomes[-1] if self.outcomes else None

    @property
    def reasons(self) -> list[str]:
        """The distinct reasons for the releases without a value, in release order."""
        return list(dict.fromkeys(o.reason for o in self.outcomes if o.reason))


# A call leaves garbage where Python's collector frees this much of it a call, or more.
GARBAGE = 1024


def holds(claim: Claim, a: float, b: float | None) -> bool:
    """The claim's polarity: a leak claim holds where `a` leaks, a flat claim where it does
    not, a garbage claim where `a` leaves GARBAGE a call or more (no-garbage: less), a
    comparison where `a` is above `b`."""
    if claim.metric in ("leak", "flat"):
        return (a >= 1) == (claim.metric == "leak")
    if claim.metric in ("garbage", "no-garbage"):
        return (a >= GARBAGE) == (claim.metric == "garbage")
    return b is not None and a > b


def judge(claim: Claim, family: Family | None, machine: MachineResults) -> Answer:
    """Whether the claim holds on each release of this machine."""
    a = family.match(claim.a) if family else None
    b = family.match(claim.b) if family and claim.b else None
    metric = {"flat": "leak", "no-garbage": "garbage"}.get(claim.metric, claim.metric)
    outcomes = []
    for tag in machine.releases:

        def value(point: tuple[str, ...] | None, read: str, tag: str = tag) -> float | None:
            return machine.value(family.benchmark(read), point, tag) if family and point else None

        # a peak is the heap's where it was read (both points), else RSS's
        heap = metric == "peak" and all(
            value(p, "heap-peak") is not None for p in (a, b) if p is not None
        )
        read = "heap-peak" if heap else metric
        va, vb = value(a, read), value(b, read)
        if va is None or (claim.b and vb is None):
            missing = a if va is None else b
            why = family and missing and reason(family, machine, missing, tag)
            outcomes.append(Outcome(tag, None, None, why or None))
            continue
        outcomes.append(Outcome(tag, holds(claim, va, vb), va / vb if claim.b and vb else None))
    return Answer(claim, outcomes)
