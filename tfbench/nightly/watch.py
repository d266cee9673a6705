"""The nightly watch: every tf-nightly build read the day it is published, and the day a
sentinel's figure steps named with its one-day commit range.

A run reads the builds of a window not read yet (normally one: the newest) on the sentinel
set (tfbench.nightly.sentinels), each READINGS times in fresh processes, and its timed
sentinel against the build read before it, in pairs of processes (tfbench.pairs). Then it
decides per sentinel and figure over the whole history (tfbench.nightly.series):

- step: two neighbouring builds read apart (tfbench.nightly.policy.separation: their ranges
  part by more than the figure's floor). Where they are not adjacent on the index (a
  sampled backfill), the build halfway between is read, until they are; then both are read
  CONFIRMING more times, and it is called only if they still read apart. Time: the pair
  reader said different twice, the same way.
- drift: the history's ends read apart and no step explains it.
- none: the rest.

Each step is called with the compare view of its two builds' commits (builds.compare_url).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from packaging.version import Version

from tfbench.nightly import builds, policy, sentinels
from tfbench.nightly.policy import Broken, Build
from tfbench.nightly.series import Entry, oldest_first

READINGS = 2  # fresh processes a build is first read in (the heap's figures repeat)
CONFIRMING = 1  # readings more of a step's two builds before it is called
ROUNDS = 12  # builds read (or read again) a run to place and confirm steps, at most
STEP, DRIFT = "step", "drift"

# one reading of every sentinel of a build (its environment made first), and the build with
# its GIT_VERSION; Broken
ReadBuild = Callable[[Build], tuple[Build, dict[str, dict]]]
# the timed sentinel of two builds compared in pairs (keptfiles.fields.Compared's form)
Compare = Callable[[Build, Build], dict]


@dataclass(frozen=True)
class Call:
    sentinel: str
    metric: str  # a tfbench.figures name
    kind: str  # STEP or DRIFT
    before: Build
    after: Build
    values: tuple[float | None, float | None]  # the medians (time: 1 and the ratio)
    readings: tuple[tuple[float, ...], tuple[float, ...]]  # each reading (time: the ratios)
    adjacent: bool  # the two builds are neighbours on the index
    confirmed: bool  # a step read apart again (time: twice different) at adjacent builds

    @property
    def compare_url(self) -> str | None:
        return builds.compare_url(self.before.git_version, self.after.git_version)

    def shown(self) -> tuple[str, str]:
        """The call's two values as the outputs show them (time: 1 and the ratio)."""
        if self.metric == "time":
            return "1", f"x{self.values[1]:.3f}"
        a, b = (policy.figure_text(self.metric, v) for v in self.values)
        return a, b

    @property
    def state(self) -> str:
        """confirmed or not confirmed, for a step; nothing for a drift."""
        if self.kind != STEP:
            return ""
        return "confirmed" if self.confirmed else "not confirmed"

    def readings_text(self) -> str:
        """Each reading of the two builds, as the outputs show them (time: each ratio)."""
        if self.metric == "time":
            return ", ".join(f"x{r:.3f}" for r in self.readings[1])
        a, b = (", ".join(policy.figure_text(self.metric, v) for v in r) for r in self.readings)
        return f"{a}; then {b}"


def window(
    read: list[Entry],
    index: list[Build],
    since: str | None = None,
    until: str | None = None,
    every: int = 1,
) -> list[Build]:
    """The builds to read, oldest first: every `every`-th build of the index from `since`
    (default: after the newest read; none read: the newest build alone) up to `until`, the
    last always, leaving out those read."""
    done = {e.version for e in read}
    pool = [b for b in index if until is None or Version(b.version) <= Version(until)]
    if since is not None:
        pool = [b for b in pool if Version(b.version) >= Version(since)]
    elif read:
        newest = max(read, key=lambda e: e.build.uploaded).build.uploaded
        pool = [b for b in pool if b.uploaded > newest]
    else:
        pool = pool[-1:]
    sampled = pool[::every] + [b for b in pool[-1:] if (len(pool) - 1) % every]
    return [b for b in sampled if b.version not in done]


def working(entries: list[Entry], sentinel: str) -> list[Entry]:
    return [e for e in entries if e.broken is None and e.readings.get(sentinel)]


def between(a: Build, b: Build, index: list[Build], entries: list[Entry]) -> list[Build]:
    """The builds of the index between two, leaving out those known broken."""
    at = {x.version: k for k, x in enumerate(index)}
    if a.version not in at or b.version not in at:
        return []
    broken = {e.version for e in entries if e.broken}
    return [x for x in index[at[a.version] + 1 : at[b.version]] if x.version not in broken]


def _adjacent(a: Build, b: Build, entries: list[Entry]) -> bool:
    """Neighbours on the index, but for broken builds between (as each entry kept the
    build published before it): a sampled pair is not."""
    by_version = {e.version: e for e in entries}
    previous = by_version[b.version].before if b.version in by_version else None
    seen = {b.version}  # a kept `before` is an older build; the walk ends even where not
    while (
        previous in by_version
        and previous not in seen
        and previous != a.version
        and by_version[previous].broken
    ):
        seen.add(previous)
        previous = by_version[previous].before
    return previous == a.version


def _read(metric: str, entry: Entry, sentinel: str) -> tuple[float, ...]:
    found = (policy.figure(metric, r) for r in entry.readings[sentinel])
    return tuple(v for v in found if v is not None)


def figure_calls(entries: list[Entry], sentinel: str, metric: str) -> list[Call]:
    """The steps of one sentinel's figure over the history, else its drift (a build whose
    every reading failed there is passed by: the builds either side are neighbours)."""
    series = [e for e in working(entries, sentinel) if _read(metric, e, sentinel)]
    found = []
    for a, b in zip(series, series[1:]):
        if policy.separation(metric, a.readings[sentinel], b.readings[sentinel]) == "apart":
            least = min(len(a.readings[sentinel]), len(b.readings[sentinel]))
            adjacent = _adjacent(a.build, b.build, entries)
            found.append(
                Call(
                    sentinel,
                    metric,
                    STEP,
                    a.build,
                    b.build,
                    (a.median(sentinel, metric), b.median(sentinel, metric)),
                    (_read(metric, a, sentinel), _read(metric, b, sentinel)),
                    adjacent,
                    adjacent and least >= READINGS + CONFIRMING,
                )
            )
    if found or len(series) < 2:
        return found
    first, last = series[0], series[-1]
    if policy.separation(metric, first.readings[sentinel], last.readings[sentinel]) != "apart":
        return []
    values = (first.median(sentinel, metric), last.median(sentinel, metric))
    read = (_read(metric, first, sentinel), _read(metric, last, sentinel))
    return [Call(sentinel, metric, DRIFT, first.build, last.build, values, read, False, False)]


def time_calls(entries: list[Entry]) -> list[Call]:
    """The timed sentinel's steps: a build whose comparison with the build before read
    different (confirmed when a second one did too, the same way)."""
    by_version = {e.version: e.build for e in entries}
    found = []
    for e in entries:
        told = [t for t in e.times if t["answer"] == "different" and t["ratio"]]
        if not told or told[0]["old"] not in by_version:
            continue
        before = by_version[told[0]["old"]]
        told = [t for t in told if t["old"] == before.version]
        same_way = [t for t in told if t["ratio"] > 1] or [t for t in told if t["ratio"] < 1]
        ratio = math.exp(sum(math.log(t["ratio"]) for t in same_way) / len(same_way))
        adjacent = _adjacent(before, e.build, entries)
        found.append(
            Call(
                sentinels.TIMED,
                "time",
                STEP,
                before,
                e.build,
                (1.0, ratio),
                ((), tuple(t["ratio"] for t in e.times if t["old"] == before.version)),
                adjacent,
                adjacent and len(same_way) >= 2,
            )
        )
    return found


def calls(entries: list[Entry]) -> list[Call]:
    """Every call over the history: each sentinel's figures, then time."""
    found = [
        c
        for sentinel, metrics in sentinels.FIGURES.items()
        for metric in metrics
        for c in figure_calls(entries, sentinel, metric)
    ]
    return found + time_calls(entries)


class Watch:
    """A run of the watch over a history (entries, oldest first), reading builds by
    `read_build` and timing them by `compare` (None: time not read), saving each build's
    entry by `save` as soon as it is read."""

    def __init__(
        self,
        entries: list[Entry],
        index: list[Build],
        read_build: ReadBuild,
        compare: Compare | None,
        save: Callable[[Entry], object],
        environment: dict[str, Any],
        say: Callable[[str], None] = print,
    ) -> None:
        self.entries, self.index = list(entries), index
        self.read_build, self.compare, self.save = read_build, compare, save
        self.environment, self.say = environment, say

    def entry(self, build: Build) -> Entry:
        """The build's entry, made (naming the build before it on the index) if it has none."""
        known = {e.version: e for e in self.entries}
        if build.version not in known:
            at = [b.version for b in self.index].index(build.version)
            before = self.index[at - 1].version if at else None
            known[build.version] = Entry(build, before=before, environment=self.environment)
            self.entries = oldest_first([*self.entries, known[build.version]])
        return known[build.version]

    def read(self, build: Build, count: int) -> Entry:
        """The build's entry with `count` readings more (or why it is broken), saved."""
        entry = self.entry(build)
        try:
            for _ in range(count):
                entry.build, reading = self.read_build(build)
                for sentinel, record in reading.items():
                    entry.readings.setdefault(sentinel, []).append(record)
        except Broken as e:
            entry.broken = str(e)
            self.say(f"{build.version}: skipped, {e}")
        self.save(entry)
        return entry

    def time(self, entry: Entry) -> None:
        """Compare the timed sentinel with the build read before (working), saved."""
        before = [
            e
            for e in working(self.entries, sentinels.TIMED)
            if e.build.uploaded < entry.build.uploaded
        ]
        if self.compare is None or entry.broken or not before:
            return
        try:
            entry.times.append(self.compare(before[-1].build, entry.build))
        except Broken as e:
            self.say(f"time {before[-1].version} -> {entry.version}: not read, {e}")
        self.save(entry)

    def run(self, builds_to_read: list[Build]) -> list[Call]:
        """Read the builds, then place and confirm every step within ROUNDS more readings;
        every call over the history."""
        for build in builds_to_read:
            self.time(self.read(build, READINGS))
        for _ in range(ROUNDS):
            pending = [c for c in calls(self.entries) if self.unsettled(c)]
            if not pending:
                break
            self.settle(pending[0])
        return calls(self.entries)

    def unsettled(self, call: Call) -> bool:
        """A step not confirmed that more reading may settle: a build between its two not
        read yet, else its two read again (time: compared twice at most)."""
        if call.kind != STEP or call.confirmed:
            return False
        if not call.adjacent:
            return bool(self.unread(call))
        if call.metric == "time":
            return self.compare is not None and len(self.entry(call.after).times) < 2
        return True

    def unread(self, call: Call) -> list[Build]:
        """The builds of the index between a call's two that are not read yet."""
        read = {e.version for e in self.entries}
        inside = between(call.before, call.after, self.index, self.entries)
        return [b for b in inside if b.version not in read]

    def settle(self, call: Call) -> None:
        """One reading toward a step's call: the build halfway between its two (not
        adjacent), else both read again (time: compared again)."""
        inside = self.unread(call)
        if inside:
            middle = inside[(len(inside) - 1) // 2]
            self.say(f"{call.sentinel} {call.metric}: reading {middle.version}, between")
            self.time(self.read(middle, READINGS))
        elif call.metric == "time" and self.compare is not None:
            self.say(f"time {call.before.version} -> {call.after.version}: reading it again")
            entry = self.entry(call.after)
            entry.times.append(self.compare(call.before, call.after))
            self.save(entry)
        else:
            self.say(f"{call.sentinel} {call.metric}: reading both builds of the step again")
            for build in (call.before, call.after):
                self.read(build, CONFIRMING)
