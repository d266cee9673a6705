"""Which nightly changed a figure: the bisection over daily builds, on any backend.

A build is read in fresh processes until its readings decide (Pinpoint's way): two builds'
readings are *apart* when their ranges part by more than the figure's floor (the one rule,
tfbench.floors.apart), *alike* when their medians sit within it; anything else needs more
readings, MAX_READINGS at most. Time is compared the gate's way (`Pair`: tfbench.pairs):
DIFFERENT is apart, SAME alike, UNKNOWN undecided. A build that cannot be installed or
imported is skipped, and said so. The ends and SAMPLE builds between them are read first (a
change that comes and goes between builds reading alike is seen), then every span whose
ends read apart is split until its builds are neighbours, or its middle reads like both.

What the bisection can conclude (`Found.kind`):
- step: neighbouring builds that read apart, each named (`steps`, largest first; the
  largest is the last good and first bad build);
- drift: the change is spread over builds (no two neighbours read apart): no single build
  is named, the builds read draw the curve;
- none: every build read alike: no nightly in the range shows the change (it is on the
  release branch, or in a dependency);
- unknown: a build could not be decided, or every build between the ends was broken.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tfbench import figures, floors, sweep
from tfbench.measure.record import Record
from tfbench.units import format_value

MIN_READINGS = 2  # each build's first readings: the spread of one reading is not known
MAX_READINGS = 6
SAMPLE = 5  # builds read between the ends before any split


class Broken(Exception):
    """A build that cannot be installed or imported (the message says why)."""


@dataclass(frozen=True)
class Build:
    version: str  # 2.22.0.dev20260924
    uploaded: str  # ISO 8601 UTC
    git_version: str | None = None  # tf.version.GIT_VERSION, once installed


Measure = Callable[[Build], Record]  # one reading of a build in a fresh process; Broken
# two builds' times compared in pairs (tfbench.pairs.verdict.compared's form), old then new
Pair = Callable[[Build, Build], dict[str, Any]]
SEPARATED = {"different": "apart", "same": "alike"}  # a time verdict as a separation


@dataclass
class Found:
    metric: str
    kind: str  # step | drift | none | unknown
    builds: list[Build]  # the range, oldest first
    readings: dict[str, list[Record]] = field(default_factory=dict)  # version -> readings
    broken: dict[str, str] = field(default_factory=dict)  # version -> why
    last_good: Build | None = None  # of the largest step
    first_bad: Build | None = None
    steps: list[tuple[Build, Build]] = field(default_factory=list)  # largest first
    undecided: str | None = None  # the build that could not be decided
    times: list[dict[str, Any]] = field(default_factory=list)  # time: each pair compared

    def value(self, version: str) -> float | None:
        """The median of a build's readings of the figure."""
        return median(self.metric, self.readings.get(version, []))


def figure(metric: str, reading: Record) -> float | None:
    """The number a metric reads from one reading (a verdict as 1 or 0); None where the
    reading holds none (a kept series where a number stands: a step's, not a footprint's)."""
    found = figures.named(metric).of(reading)
    if isinstance(found, bool):
        return float(found)
    return found if isinstance(found, int | float) else None


def figure_text(metric: str, value: float | None, per: str = "iteration") -> str:
    """A figure of the metric as the outputs show it (a slope's bytes `per` call or
    iteration)."""
    return format_value(value, figures.named(metric).unit, ".2f", per)


def median(metric: str, readings: list[Record]) -> float | None:
    values = [v for r in readings if (v := figure(metric, r)) is not None]
    return statistics.median(values) if values else None


def separation(metric: str, a: list[Record], b: list[Record]) -> str:
    """apart, alike or undecided, for two builds' readings of the figure."""
    x = [v for r in a if (v := figure(metric, r)) is not None]
    y = [v for r in b if (v := figure(metric, r)) is not None]
    if not x or not y:
        return "undecided"
    if metric == "leak":
        flip = floors.flipped(x, y)
        return "undecided" if flip is None else "apart" if flip else "alike"
    if figures.apart(metric, x, y):
        return "apart"
    if abs(statistics.median(x) - statistics.median(y)) <= figures.floor(metric, x + y):
        return "alike"
    return "undecided"


class _Reader:
    """Readings of each build, taken as the decisions need them."""

    def __init__(
        self, found: Found, measure: Measure, say: Callable[[str], None], pair: Pair | None
    ) -> None:
        self.found, self.measure, self.say, self.pair = found, measure, say, pair
        self._paired: dict[tuple[str, str], dict[str, Any]] = {}

    def separate(self, old: Build, new: Build, count: int) -> str:
        """apart, alike or undecided for two builds, each read `count` times at least (time:
        read in pairs, once for the two)."""
        a, b = (self.read(build, count) or [] for build in (old, new))
        if self.pair is None or not (a and b):
            return separation(self.found.metric, a, b)
        key = (old.version, new.version)
        if key not in self._paired:
            self._paired[key] = self.pair(old, new)
            self.found.times.append(self._paired[key])
        return SEPARATED.get(self._paired[key]["answer"], "undecided")

    def change(self, old: Build, new: Build) -> float:
        """The figure's change from one build to another: the medians' difference, or for
        time the log of the pairs' ratio (a single reading's time is no measure of it)."""
        if self.pair is None:
            a, b = (self.found.value(build.version) for build in (old, new))
            return float(b or 0.0) - float(a or 0.0)
        compared = self._paired.get((old.version, new.version), {})
        return math.log(compared["ratio"]) if compared.get("ratio") else 0.0

    def read(self, build: Build, count: int) -> list[Record] | None:
        """At least `count` readings of the build; None when it is broken."""
        if build.version in self.found.broken:
            return None
        have = self.found.readings.setdefault(build.version, [])
        while len(have) < count:
            try:
                have.append(self.measure(build))
            except Broken as e:
                self.found.broken[build.version] = str(e)
                self.say(f"{build.version}: skipped, {e}")
                del self.found.readings[build.version]
                return None
        return have

    def decide(self, build: Build, good: Build, bad: Build) -> str | None:
        """good, bad, between (apart from both), alike (like both: a drift) or undecided for
        a build, reading it (and the ends) until they decide; None when it is broken."""
        count = MIN_READINGS
        while True:
            if self.read(build, count) is None:
                return None
            to_good, to_bad = self.separate(good, build, count), self.separate(build, bad, count)
            if to_good == "alike" and to_bad == "apart":
                return "good"
            if to_bad == "alike" and to_good == "apart":
                return "bad"
            if to_good == to_bad == "apart":
                return "between"
            if to_good == to_bad == "alike":
                return "alike"
            if count >= MAX_READINGS or self.pair:
                return "undecided"
            count += 1


def bisect(
    builds: list[Build],
    metric: str,
    measure: Measure,
    say: Callable[[str], None] = print,
    pair: Pair | None = None,
) -> Found:
    """Every step between the builds (oldest first): the ends and SAMPLE builds between
    them read, then every span whose ends read apart split, the largest change first, until
    its builds are neighbours (a step) or its middle reads like both ends (a drift)."""
    found = Found(metric, "unknown", list(builds))
    reader = _Reader(found, measure, say, pair)
    ends = _working_ends(builds, reader)
    if ends is None:
        return found
    lo, hi = ends
    read = [i for i in _spread(lo, hi) if reader.read(builds[i], MIN_READINGS) is not None]
    verdicts = {(i, j): _ends(reader, builds[i], builds[j]) for i, j in zip(read, read[1:])}
    spans = [span for span, verdict in verdicts.items() if verdict == "apart"]
    drifts, undecided = 0, None
    while spans:
        span = max(spans, key=lambda s: abs(reader.change(builds[s[0]], builds[s[1]])))
        spans.remove(span)
        mid = _next(builds, *span, found.broken)
        if mid is None:  # neighbouring working builds: a step
            found.steps.append((builds[span[0]], builds[span[1]]))
            continue
        side = reader.decide(builds[mid], builds[span[0]], builds[span[1]])
        if side is None:  # broken: the next split passes it by
            spans.append(span)
        elif side == "undecided":
            found.undecided, undecided = builds[mid].version, span
        elif side == "alike":  # like both ends: the change is spread over the span
            drifts += 1
        else:
            spans += [(span[0], mid)] * (side in ("bad", "between"))
            spans += [(mid, span[1])] * (side in ("good", "between"))
    found.steps.sort(key=lambda s: -abs(reader.change(*s)))
    if found.steps:
        found.kind = "step"
        found.last_good, found.first_bad = found.steps[0]
    elif undecided:  # the span it could not split
        found.last_good, found.first_bad = builds[undecided[0]], builds[undecided[1]]
    elif drifts:
        found.kind = "drift"
    elif "undecided" not in verdicts.values():
        found.kind = "none"
    return found


def _spread(lo: int, hi: int) -> list[int]:
    """lo, hi and up to SAMPLE indices spread evenly between them."""
    return [lo + k for k in sweep.spread(hi - lo + 1, SAMPLE + 2)]


def _working_ends(builds: list[Build], reader: _Reader) -> tuple[int, int] | None:
    """The first and last builds that install and run (broken ones skipped inward)."""
    lo, hi = 0, len(builds) - 1
    while lo < hi and reader.read(builds[lo], MIN_READINGS) is None:
        lo += 1
    while hi > lo and reader.read(builds[hi], MIN_READINGS) is None:
        hi -= 1
    return (lo, hi) if lo < hi else None


def _ends(reader: _Reader, good: Build, bad: Build) -> str:
    """Whether the ends part: read until they decide, or MAX_READINGS."""
    count = MIN_READINGS
    while True:
        verdict = reader.separate(good, bad, count)
        if verdict != "undecided" or count >= MAX_READINGS or reader.pair:
            return verdict
        count += 1


def _next(builds: list[Build], lo: int, hi: int, broken: dict[str, str]) -> int | None:
    """The untried working build nearest the middle of (lo, hi); None when none is left."""
    inside = [i for i in range(lo + 1, hi) if builds[i].version not in broken]
    middle = (lo + hi) / 2
    return min(inside, key=lambda i: (abs(i - middle), i)) if inside else None
