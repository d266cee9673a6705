"""A step measured release by release, each in its release's environment, and the
bisection that finds every release where its behaviour changes.

What counts as a change between two single measurements (two releases a bisection reads),
by the floors of tfbench.floors:
- leak: the verdict flips (leak/flat: from what the step retains, where the heap is read),
  or the run's status does (a step that fails on one release and runs on another), or a
  leak grows or shrinks (what it keeps changes by retained's rule, below);
- retained (the heap in use) and growth (RSS): the two 95% intervals of the fitted slope
  are apart, and by more than the figure's floor;
- heap-peak and peak (RSS): apart by more than the figure's floor;
- time: the two releases read in pairs of processes, side by side (tfbench.pairs, the
  gate's reader): a change where its verdict is DIFFERENT; an UNKNOWN one is said and kept
  with the bisection, and counts as no change.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from packaging.version import Version

from tfbench import figures, floors, targets
from tfbench.history import envs, pythons
from tfbench.measure.record import Record, measured
from tfbench.pairs import timing, verdict
from tfbench.units import format_value

Say = Callable[[str], None]


def differ(metric: str, a: Record, b: Record) -> bool:
    """Whether b's behaviour differs from a's on this metric (see the module's rules)."""
    figure = figures.named(metric)
    if not (measured(a) and measured(b)):
        return a["status"] != b["status"] or metric == "leak" and a.get("leak") != b.get("leak")
    if figure.kind == figures.VERDICT:
        return a["leak"] != b["leak"] or bool(a["leak"]) and differ(_kept(a, b), a, b)
    va, vb = figure.of(a), figure.of(b)
    if va is None or vb is None:
        return False  # not read on one side (no heap figures there)
    if figure.interval:  # a slope: its 95% intervals must part too
        ia, ib = a.get(figure.interval), b.get(figure.interval)
        if ia is None or ib is None or not (ib[0] > ia[1] or ia[0] > ib[1]):
            return False
    return bool(figures.apart(metric, [va], [vb]))


def _kept(a: Record, b: Record) -> str:
    """The figure of what a leak keeps: the heap's where both read it, else RSS's growth."""
    return "retained" if all(r.get("leak_basis") == "heap" for r in (a, b)) else "growth"


@dataclass
class Runner:
    """Measures one target in the environment of any release, saying what it does."""

    target: targets.Target
    limits: targets.Limits
    flavour: str = "cpu"
    root: Path | None = None
    say: Say = print
    measure: Callable[..., Record] = targets.measure  # or tfbench explain's run
    python: str = pythons.DEFAULT  # CPython X.Y of the release environments
    reader: timing.Reader = timing.Reader()  # how two releases' times are compared

    def environment(self, version: str, prefix: str) -> Path:
        """The release's environment, made if need be (envs.EnvError)."""
        root = self.root or envs.default_root()
        env = envs.ReleaseEnv(version, self.flavour, root, self.python)
        python, spent = envs.ensure(
            env,
            lambda: self.say(
                f"{prefix} creating its environment (uv, from the {self.flavour} lock) ..."
            ),
        )
        if spent is not None:
            self.say(f"{prefix} environment ready in {spent:.1f} s")
        return python

    def __call__(self, version: str, label: str = "") -> Record:
        prefix = f"{label}{version}:"
        try:
            python = self.environment(version, prefix)
        except envs.EnvError as e:
            self.say(f"{prefix} cannot be installed: {e}")
            record = targets.describe(self.target)
            record.update(status="error", error=f"install failed: {e}", tf_version=None)
            return dict(record, release=version)
        start = time.monotonic()
        self.say(f"{prefix} measuring {self.target.name} ...")
        limits = replace(self.limits, python=str(python), quiet=True)
        record = self.measure(self.target, limits)
        self.say(f"{prefix} {record['status']} in {time.monotonic() - start:.1f} s")
        return dict(record, release=version)

    def times(self, old: str, new: str) -> dict[str, Any]:
        """The step's time on two releases (both installed), read in pairs as the gate
        reads a point: the verdict, as a bisection keeps it."""
        made = [str(self.environment(v, f"{v}:")) for v in (old, new)]
        return timing.compared(self.target, (made[0], made[1]), (old, new), self.reader, self.say)


def measure_releases(run: Runner, versions: list[str]) -> list[Record]:
    """The target on each release, oldest first; a release that fails does not stop the rest."""
    return [run(v, f"[{k}/{len(versions)}] ") for k, v in enumerate(versions, 1)]


@dataclass(frozen=True)
class ReleaseChange:
    """A release where the behaviour changes: the releases on each side (neighbours, or the
    ends of a span whose releases in between each read like a neighbour: a drift), whether
    it is worse or better, by how much (the figure's change, new less old; time: the log of
    the pairs' ratio; None where the step stopped or started running) and what, in words."""

    last_before: str
    first_after: str
    direction: str  # WORSE or BETTER
    size: float | None
    said: str


WORSE, BETTER = "worse", "better"
# Read before any search: every one of up to this many releases (the tracked ones), else
# this many spread over them; then every span whose ends differ is split until neighbours.
SAMPLE = 12


@dataclass
class Sweep:
    metric: str
    changes: list[ReleaseChange]  # largest first
    readings: list[Record]  # every release measured, in the order visited
    times: list[dict[str, Any]] = field(default_factory=list)  # time: each pair compared

    @property
    def first(self) -> ReleaseChange | None:
        """The oldest change: where the behaviour first differs from the range's start."""
        order = self.order
        return min(self.changes, key=lambda c: order[c.first_after], default=None)

    @property
    def order(self) -> dict[str, int]:
        return {r["release"]: k for k, r in enumerate(self.in_order())}

    def in_order(self) -> list[Record]:
        """The readings in release order."""
        return sorted(self.readings, key=lambda r: Version(r["release"]))

    def to_json(self) -> dict[str, Any]:
        """The kept form (`tfbench bisect --json`): the oldest change's releases as
        last_before and first_after (null when nothing changed), every change ranked."""
        first = self.first
        return {
            "metric": self.metric,
            "last_before": first and first.last_before,
            "first_after": first and first.first_after,
            "changes": [asdict(c) for c in self.changes],
            "readings": self.readings,
            "times": self.times,
        }


def spread(count: int, most: int) -> list[int]:
    """Up to `most` indices of `count` spread evenly, both ends included."""
    if count <= most:
        return list(range(count))
    return sorted({round(k * (count - 1) / (most - 1)) for k in range(most)})


def bisect(run: Runner, versions: list[str], metric: str) -> Sweep:
    """Every release in `versions` (oldest first) where the behaviour changes, largest
    first: the releases of a handful read, every one (SAMPLE); then every span whose ends
    differ split until its releases are neighbours. A change that comes and goes between two
    releases read alike in a sample of many is not seen."""
    paired = figures.named(metric).kind == figures.TIME  # ValueError naming the choices
    found = Sweep(metric, [], [])
    read: dict[int, Record] = {}
    timed: dict[tuple[int, int], dict[str, Any]] = {}

    def at(i: int) -> Record:
        if i not in read:
            read[i] = run(versions[i], f"[{len(read) + 1}] ")
            found.readings.append(read[i])
        return read[i]

    def differs(i: int, j: int) -> bool:
        a, b = at(i), at(j)
        if not (paired and measured(a) and measured(b)):
            return differ(metric, a, b)
        timed[(i, j)] = run.times(a["release"], b["release"])
        found.times.append(timed[(i, j)])
        return timed[(i, j)]["answer"] == verdict.DIFFERENT

    sample = spread(len(versions), SAMPLE)
    for i in sample:
        at(i)
    spans = [(i, j) for i, j in zip(sample, sample[1:]) if differs(i, j)]
    while spans:
        lo, hi = spans.pop(0)
        mid = (lo + hi) // 2
        inside = [s for s in ((lo, mid), (mid, hi)) if hi - lo > 1 and differs(*s)]
        if not inside:  # neighbours, or a drift no one release holds
            found.changes.append(change(metric, read[lo], read[hi], timed.get((lo, hi))))
        spans += inside
    found.changes.sort(key=lambda c: (c.size is not None, -abs(c.size or 0.0)))
    return found


def change(
    metric: str, a: Record, b: Record, times: dict[str, Any] | None = None
) -> ReleaseChange:
    """How b differs from a on this metric (they do: `differ`), in words: worse or better,
    by how much, and what it means for a step's memory."""
    figure = figures.named(metric)
    ends = (a["release"], b["release"])
    if not (measured(a) and measured(b)):
        if measured(a):
            why = (b.get("error") or "").partition("\n")[0]
            return ReleaseChange(
                *ends, WORSE, None, f"stops running: {b['status']}: {why}".rstrip(": ")
            )
        if measured(b):
            return ReleaseChange(*ends, BETTER, None, f"runs again (was {a['status']})")
        return ReleaseChange(*ends, WORSE, None, f"{a['status']} -> {b['status']}")
    if times is not None:
        ratio = times["ratio"]
        size = math.log(ratio) if ratio else 0.0
        return ReleaseChange(*ends, WORSE if size > 0 else BETTER, size, f"time x{ratio:.3f}")
    if metric == "leak":
        return _leak(a, b)
    va, vb = figure.of(a), figure.of(b)
    size = float(vb or 0.0) - float(va or 0.0)
    text = (
        f"{figure.label} {format_value(va, figure.unit, '.3g', 'call')} -> "
        f"{format_value(vb, figure.unit, '.3g', 'call')}"
    )
    return ReleaseChange(*ends, WORSE if size > 0 else BETTER, size, text)


def _leak(a: Record, b: Record) -> ReleaseChange:
    """A leak that appears, stops, grows or shrinks (and where it keeps less, whether its
    bytes become garbage, and how high a loop piles that): its size what the step keeps a
    call (RSS's growth where the heap was not read)."""
    ends = (a["release"], b["release"])
    kept = figures.named(_kept(a, b))
    va, vb = float(kept.of(a) or 0.0), float(kept.of(b) or 0.0)
    size = vb - va
    bytes_ = lambda v: format_value(v, kept.unit, ".3g", "call")  # noqa: E731
    moved = f"keeps {bytes_(va)} -> {bytes_(vb)}"
    if b["leak"] and not a["leak"]:
        return ReleaseChange(*ends, WORSE, size, f"a leak appears: {moved}")
    if a["leak"] and not b["leak"]:
        said = f"the leak stops: {moved}"
    else:
        said = f"the leak {'grows' if size > 0 else 'shrinks'}: {moved}"
    ga, gb = (float(figures.named("garbage").of(r) or 0.0) for r in (a, b))
    if size < 0 and gb - ga > floors.garbage([ga, gb]):
        said += f"; it becomes garbage, {bytes_(ga)} -> {bytes_(gb)}"
        pile = (b.get("collector") or {}).get("pile_bytes")
        if pile:
            said += f" that a loop piles to {format_value(pile, 'bytes')}"
    return ReleaseChange(*ends, WORSE if size > 0 else BETTER, size, said)
