"""A step measured release by release, each in its release's environment, and the
bisection that finds the release where its behaviour changes.

What counts as a change between two single measurements (a bisection compares two), by
the floors of tfbench.floors:
- leak: the verdict flips (leak/flat: from what the step retains, where the heap is read),
  or the run's status does (a step that fails on one release and runs on another);
- retained (the heap in use) and growth (RSS): the two 95% intervals of the fitted slope
  are apart, and by more than the figure's floor;
- heap-peak and peak (RSS): apart by more than the figure's floor;
- time: the two releases read in pairs of processes, side by side (tfbench.pairs, the
  gate's reader): a change where its verdict is DIFFERENT; an UNKNOWN one is said and kept
  with the bisection, and counts as no change.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from tfbench import figures, targets
from tfbench.history import envs, pythons
from tfbench.measure.record import Record, measured
from tfbench.pairs import timing, verdict

Say = Callable[[str], None]


def differ(metric: str, a: Record, b: Record) -> bool:
    """Whether b's behaviour differs from a's on this metric (see the module's rules)."""
    figure = figures.named(metric)
    if not (measured(a) and measured(b)):
        return a["status"] != b["status"] or metric == "leak" and a.get("leak") != b.get("leak")
    if figure.kind == figures.VERDICT:
        return a["leak"] != b["leak"]
    va, vb = figure.of(a), figure.of(b)
    if va is None or vb is None:
        return False  # not read on one side (no heap figures there)
    if figure.interval:  # a slope: its 95% intervals must part too
        ia, ib = a.get(figure.interval), b.get(figure.interval)
        if ia is None or ib is None or not (ib[0] > ia[1] or ia[0] > ib[1]):
            return False
    return abs(vb - va) > figures.floor(metric, [va, vb])


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


@dataclass
class Bisection:
    metric: str
    last_before: str | None  # None: no change in the range
    first_after: str | None
    readings: list[Record]  # every release measured, in the order visited
    times: list[dict[str, Any]] = field(default_factory=list)  # time: each pair compared


def bisect(run: Runner, versions: list[str], metric: str) -> Bisection:
    """The first release in `versions` (oldest first) whose behaviour differs from the
    oldest's, measuring as few as a bisection needs."""
    paired = figures.named(metric).kind == figures.TIME  # ValueError naming the choices
    found = Bisection(metric, None, None, [])

    def at(i: int) -> Record:
        found.readings.append(run(versions[i], f"[visit {len(found.readings) + 1}] "))
        return found.readings[-1]

    def differs(a: Record, b: Record) -> bool:
        if not (paired and measured(a) and measured(b)):
            return differ(metric, a, b)
        found.times.append(run.times(a["release"], b["release"]))
        return found.times[-1]["answer"] == verdict.DIFFERENT

    lo, hi = 0, len(versions) - 1
    base, newest = at(lo), at(hi)
    if not differs(base, newest):
        return found
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if differs(base, at(mid)):
            hi = mid
        else:
            lo = mid
    found.last_before, found.first_after = versions[lo], versions[hi]
    return found
