"""Which nightly changed a figure: the bisection over daily builds, on any backend.

A build is read in fresh processes until its readings decide (Pinpoint's way): like the
range's first build, like its last, or neither after MAX_READINGS (unknown). Two builds'
readings are *apart* when their ranges part by more than the figure's floor (the gate's
rule, tfbench.floors), *alike* when their medians sit within it; anything else needs more
readings. Time is compared the gate's way instead (`Pair`: the two builds read in pairs of
processes, tfbench.pairs): DIFFERENT is apart, SAME alike, UNKNOWN undecided. A build that
cannot be installed or imported is skipped, and said so.

What the bisection can conclude (`Found.kind`):
- step: one pair of adjacent builds holds most of the change between the ends (more than
  STEP_SHARE; smaller moves elsewhere are read, not named);
- drift: the change is spread over builds (no span of builds holds more than STEP_SHARE):
  no single build is named, the curve is;
- none: the ends read alike: no nightly in the range shows the change (it is on the
  release branch, or in a dependency);
- unknown: a build could not be decided, or every build between the ends was broken.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tfbench import figures
from tfbench.units import format_value

MIN_READINGS = 2  # each build's first readings: the spread of one reading is not known
MAX_READINGS = 6
STEP_SHARE = 0.5  # a step holds more than half the change between the ends
CURVE_POINTS = 5  # builds read between the ends to draw a drift


class Broken(Exception):
    """A build that cannot be installed or imported (the message says why)."""


@dataclass(frozen=True)
class Build:
    version: str  # 2.22.0.dev20260924
    uploaded: str  # ISO 8601 UTC
    git_version: str | None = None  # tf.version.GIT_VERSION, once installed


Reading = dict[str, Any]  # a measured record
Measure = Callable[[Build], Reading]  # one reading of a build in a fresh process; Broken
# two builds' times compared in pairs (tfbench.pairs.verdict.compared's form), old then new
Pair = Callable[[Build, Build], dict[str, Any]]
SEPARATED = {"different": "apart", "same": "alike"}  # a time verdict as a separation


@dataclass
class Found:
    metric: str
    kind: str  # step | drift | none | unknown
    builds: list[Build]  # the range, oldest first
    readings: dict[str, list[Reading]] = field(default_factory=dict)  # version -> readings
    broken: dict[str, str] = field(default_factory=dict)  # version -> why
    last_good: Build | None = None
    first_bad: Build | None = None
    undecided: str | None = None  # the build that could not be decided
    times: list[dict[str, Any]] = field(default_factory=list)  # time: each pair compared

    def value(self, version: str) -> float | None:
        """The median of a build's readings of the figure."""
        return median(self.metric, self.readings.get(version, []))


def figure(metric: str, reading: Reading) -> float | None:
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


def median(metric: str, readings: list[Reading]) -> float | None:
    values = [v for r in readings if (v := figure(metric, r)) is not None]
    return statistics.median(values) if values else None


def separation(metric: str, a: list[Reading], b: list[Reading]) -> str:
    """apart, alike or undecided, for two builds' readings of the figure."""
    x = [v for r in a if (v := figure(metric, r)) is not None]
    y = [v for r in b if (v := figure(metric, r)) is not None]
    if not x or not y:
        return "undecided"
    if metric == "leak":
        if len(set(x)) == len(set(y)) == 1:
            return "alike" if x[0] == y[0] else "apart"
        return "undecided"
    floor = figures.floor(metric, x + y)
    if min(y) - max(x) > floor or min(x) - max(y) > floor:
        return "apart"
    if abs(statistics.median(x) - statistics.median(y)) <= floor:
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

    def read(self, build: Build, count: int) -> list[Reading] | None:
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
        """good, bad, between (apart from both) or undecided for a build, reading it (and
        the ends) until they decide; None when the build is broken."""
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
    """Bisect the builds (oldest first) for the change between the first and the last.

    The span holding the largest change is split first, so that a step is found beside
    smaller moves elsewhere (a build between the ends may read apart from both); when no
    span left holds more than STEP_SHARE of the change, it is a drift."""
    found = Found(metric, "unknown", list(builds))
    reader = _Reader(found, measure, say, pair)
    ends = _working_ends(builds, reader)
    if ends is None:
        return found
    verdict = _ends(reader, builds[ends[0]], builds[ends[1]])
    if verdict != "apart":
        found.kind = "none" if verdict == "alike" else "unknown"
        return found

    def change(span: tuple[int, int]) -> float:
        return reader.change(builds[span[0]], builds[span[1]])

    total = change(ends)
    spans = [ends]  # spans of builds whose ends read apart
    while True:
        span = max(spans, key=lambda s: abs(change(s)))
        if total == 0 or change(span) / total <= STEP_SHARE:
            found.kind = "drift"
            _curve(builds, ends, reader)
            return found
        lo, hi = span
        mid = _next(builds, lo, hi, found.broken)
        if mid is None:  # adjacent working builds: the step
            found.kind, found.last_good, found.first_bad = "step", builds[lo], builds[hi]
            return found
        side = reader.decide(builds[mid], builds[lo], builds[hi])
        if side is None:  # broken: the next split passes it by
            continue
        if side == "undecided":
            found.undecided = builds[mid].version
            found.last_good, found.first_bad = builds[lo], builds[hi]
            return found
        spans.remove(span)
        if side in ("bad", "between"):
            spans.append((lo, mid))
        if side in ("good", "between"):
            spans.append((mid, hi))


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


def _curve(builds: list[Build], ends: tuple[int, int], reader: _Reader) -> None:
    """Read CURVE_POINTS builds spread over the range: the shape of a drift."""
    lo, hi = ends
    for k in range(1, CURVE_POINTS + 1):
        reader.read(builds[lo + round(k * (hi - lo) / (CURVE_POINTS + 1))], MIN_READINGS)
