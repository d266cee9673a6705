"""Whether two builds' times differ, from paired readings: a verdict of three answers.

A pair is one reading of each side (tfbench.pairs.timing), its log ratio: new over old.
Read at the same time (a duet), the pair is scored by the calls each side made over the
same moments, so a slow spell of the machine falls on both; taking turns block by block,
by their neighbouring blocks, likewise; read one after the other, each reading is scored
alone (the fast end of its blocks: slow spells set aside). Over the
pairs, the change is the Hodges-Lehmann estimate (the median of the pairs' Walsh averages)
and its interval the exact Wilcoxon signed-rank one: distribution-free, and an outlying
process moves it by one rank, not by its size.

The verdict against a margin m: DIFFERENT where the interval lies beyond m on one side,
SAME where it lies within it, UNKNOWN where it straddles a bound. An unknown point is read
again only while its interval leaves open a change of WATCH or more, or lies apart from no
change (a change smaller than WATCH, not yet beyond the margin): the budget goes to the
points that could still hide one, or show one. The interval is a 98% one (LEVEL), and a
comparison keeps the level it was read at.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

DIFFERENT, SAME, UNKNOWN = "different", "same", "unknown"
ANSWERS = (DIFFERENT, SAME, UNKNOWN)
QUANTILE = 0.1  # of a reading's blocks: tests/validation/time_designs.py chose it
# 98%: a point is looked at after every pair from the 8th to the 40th, and each look is a
# chance of a false row; chosen with WATCH on A/A gates' pairs (docs/validation/gate.md#watch)
LEVEL = 0.98
WATCH = 0.05  # the change a gate is for: a point whose interval rules it out is not read on
Blocks = list[tuple[int, int, int]]  # (start ns, end ns, calls) of each block of a reading


def per_call(blocks: Blocks) -> list[float]:
    """Each block's seconds a call."""
    return [(end - start) / 1e9 / calls for start, end, calls, *_ in blocks]


def reading(blocks: Blocks) -> float:
    """A reading's seconds a call: the QUANTILE of its blocks. The machine has slow spells
    (a block two times its usual length is common here) and no fast ones: the fast end of
    a reading's blocks is its steady speed, the same from one reading to the next where
    the median moves with the spells."""
    times = sorted(per_call(blocks))
    return times[min(len(times) - 1, int(QUANTILE * len(times)))]


def _calls_within(blocks: Blocks, low: int, high: int) -> float:
    """The calls a reading made between two moments, a block's calls spread evenly over it."""
    done = 0.0
    for start, end, calls, *_ in blocks:
        overlap = min(end, high) - max(start, low)
        if overlap > 0:
            done += calls * overlap / (end - start)
    return done


def duet(old: Blocks, new: Blocks) -> float | None:
    """The log ratio of two readings taken at the same time: the calls each made over the
    same moments (those both were timing), old's over new's (the new one slower: > 0); a
    slow spell of the machine slows both. None where they did not overlap."""
    low, high = max(old[0][0], new[0][0]), min(old[-1][1], new[-1][1])
    if high <= low:
        return None
    a, b = _calls_within(old, low, high), _calls_within(new, low, high)
    return math.log(a / b) if a > 0 and b > 0 else None


def turns(old: Blocks, new: Blocks) -> float:
    """The log ratio of two readings that took turns block by block: the median of their
    neighbouring blocks' log ratios (a slow spell slows both blocks of a pair)."""
    return statistics.median(
        math.log(b / a) for a, b in zip(per_call(old), per_call(new), strict=True)
    )


def apart(old: Blocks, new: Blocks) -> float:
    """The log ratio of two readings taken one after the other."""
    return math.log(reading(new) / reading(old))


@lru_cache(maxsize=64)
def _signed_rank_cdf(n: int) -> tuple[float, ...]:
    """P(W <= w) of the Wilcoxon signed-rank statistic for n pairs, w = 0..n(n+1)/2."""
    counts = [1] + [0] * (n * (n + 1) // 2)
    for k in range(1, n + 1):
        for w in range(len(counts) - 1, k - 1, -1):
            counts[w] += counts[w - k]
    total, cdf, acc = 2**n, [], 0
    for c in counts:
        acc += c
        cdf.append(acc / total)
    return tuple(cdf)


def interval(logs: list[float], level: float = LEVEL) -> tuple[float, float, float] | None:
    """The Hodges-Lehmann estimate of the pairs' log ratio and its exact Wilcoxon interval
    at `level`; None where so few pairs reach no interval at that level (at 99%: under 8)."""
    n = len(logs)
    cdf = _signed_rank_cdf(n) if n else ()
    alpha = (1 - level) / 2
    k = sum(1 for p in cdf if p <= alpha)  # the interval: the k-th Walsh average from each end
    if k == 0:
        return None
    walsh = sorted((logs[i] + logs[j]) / 2 for i in range(n) for j in range(i, n))
    return statistics.median(walsh), walsh[k - 1], walsh[-k]


@dataclass(frozen=True)
class Verdict:
    answer: str  # DIFFERENT, SAME, UNKNOWN
    ratio: float | None  # new over old, the estimate
    low: float | None  # its interval
    high: float | None
    pairs: int
    level: float = LEVEL  # of the interval

    @property
    def unseen(self) -> float | None:
        """The largest change the interval leaves open, either way (a share: 0.15 is x1.15
        or x1/1.15): what an UNKNOWN point may hide."""
        if self.low is None or self.high is None:
            return None
        return math.exp(max(abs(math.log(self.low)), abs(math.log(self.high)))) - 1

    @property
    def apart(self) -> bool:
        """Whether the interval lies wholly above no change or wholly below it."""
        return self.low is not None and self.high is not None and (self.low > 1 or self.high < 1)


def decide(logs: list[float], margin: float, level: float = LEVEL) -> Verdict:
    """The verdict of the pairs' log ratios against a relative margin."""
    found = interval(logs, level)
    if found is None:
        return Verdict(UNKNOWN, None, None, None, len(logs), level)
    estimate, low, high = found
    bound = math.log1p(margin)
    if low > bound or high < -bound:
        answer = DIFFERENT
    elif -bound <= low and high <= bound:
        answer = SAME
    else:
        answer = UNKNOWN
    return Verdict(answer, math.exp(estimate), math.exp(low), math.exp(high), len(logs), level)


def reads_on(found: Verdict, watch: float = WATCH, apart: bool = True) -> bool:
    """Whether a point is read again: its verdict unknown, and its interval leaving open a
    change of `watch` or more (or no interval yet), or, with `apart`, lying apart from no
    change (docs/validation/gate.md#watch)."""
    return found.answer == UNKNOWN and (
        found.unseen is None or found.unseen >= watch or (apart and found.apart)
    )


def replayed(
    logs: list[float],
    margin: float,
    first: int,
    most: int,
    level: float = LEVEL,
    watch: float = WATCH,
    apart: bool = True,
) -> Verdict:
    """The verdict the reader stops at on these pairs, taken in order: after `first`, then one
    more at a time while it `reads_on`, `most` at most (tfbench.pairs.timing.measure's
    rule): a recorded gate's readings replayed under another margin, level or watch."""
    last = min(most, len(logs))
    for n in range(min(first, last), last + 1):
        found = decide(logs[:n], margin, level)
        if not reads_on(found, watch, apart):
            return found
    return decide(logs[:last], margin, level)


@dataclass
class Timed:
    """A point's pairs of readings (tfbench.pairs.timing) and what they say."""

    point: tuple[str, tuple[str, ...]]  # (benchmark, asv's param values)
    margin: float
    plan: dict[str, Any] | None = None  # how each reading reads it (tfbench.measure.timer)
    logs: list[float] = field(default_factory=list)  # each pair's log ratio
    readings: list[tuple[dict, dict]] = field(default_factory=list)  # (old, new) replies
    skipped: str | None = None  # why a side has no reading
    kept_old: float | None = None  # `old` as a shard kept it (its readings are not)

    @property
    def verdict(self) -> Verdict:
        return decide(self.logs, self.margin)

    @property
    def old(self) -> float | None:
        """The old side's median reading, seconds a call: from its readings, or as kept."""
        if self.readings:
            return statistics.median(reading(old["blocks"]) for old, _ in self.readings)
        return self.kept_old


def time_line(time: Mapping[str, Any] | None, on: str | None = None) -> str:
    """What the time reader found, `on` which CPU (tfbench.cpu.named), with the points it
    could not decide counted: no row for them is no proof of no change."""
    if not time:
        return ""
    decided = time["different"] + time["same"]
    unknown = len(time["unknown"])
    unseen = time.get("unseen")  # absent in runs kept before it
    first, most = time["pairs"]  # read: first, then more while unknown and the budget lasts
    pairs = f"{first}" if first == most else f"{first} to {most}"
    watch = time.get("watch") if first != most else None  # absent in runs kept before it
    apart = " or lay apart from no change" if time.get("apart") else ""  # likewise
    return (
        f"time: {decided + unknown} point(s) read in pairs{f' on {on}' if on else ''} "
        f"({time['design']}, "
        f"{time['seconds']:g} s readings, {time['level']:.0%} intervals), "
        f"{time['different']} different and {time['same']} the same within "
        f"{time['margin']:.0%}; {unknown} unknown after {pairs} pairs"
        + (
            f" (their intervals leave open a change of {unseen[0]:.0%} at the median "
            f"point, {unseen[1]:.0%} at the widest)"
            if unseen
            else ""
        )
        + (
            f"; a point was read on while it left a change of {watch:.0%} open{apart}"
            if watch
            else ""
        )
        + (f"; {time['skipped']} skipped" if time["skipped"] else "")
    )


def compared(found: Timed, old: str, new: str) -> dict[str, Any]:
    """A comparison of two builds' times as kept (bisect's `times`): the verdict, its ratio
    (new over old) and interval, the pairs it took; why it was not read, where a build
    skipped the step."""
    told = found.verdict
    return {
        "old": old,
        "new": new,
        "answer": told.answer if found.skipped is None else "skipped",
        "ratio": told.ratio,
        "low": told.low,
        "high": told.high,
        "pairs": told.pairs,
        "margin": found.margin,
        "level": told.level,
        "skipped": found.skipped,
    }


def compared_line(c: Mapping[str, Any]) -> str:
    """Two builds' times compared (`compared`), in a line: the ratio, its
    interval, the pairs, the answer against the margin."""
    head = f"{c['old']} -> {c['new']}: "
    if c["answer"] == "skipped":
        return head + f"not read: {c['skipped']}"
    if c["ratio"] is None:
        return head + f"{c['answer']} after {c['pairs']} pairs"
    return head + (
        f"x{c['ratio']:.3f} ({c['level']:.0%} interval x{c['low']:.3f}-{c['high']:.3f}, "
        f"{c['pairs']} pairs): {c['answer']} (margin {c['margin']:.0%})"
    )
