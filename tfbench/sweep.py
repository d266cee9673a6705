"""A step measured release by release, each in its release's environment, and the
bisection that finds the release where its behaviour changes.

What counts as a change between two single measurements (a bisection compares two), by
the floors of tfbench.floors:
- leak: the verdict flips (leak/flat), or the run's status does (a step that fails on one
  release and runs on another);
- growth: the two 95% intervals of the fitted slope are apart, and by more than the
  growth floor;
- peak: apart by more than the peak floor;
- time: a ratio beyond TIME_RATIO either way (one process a side: only a large one).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tfbench import floors, targets
from tfbench.history import envs
from tfbench.measure.record import Record, measured

METRICS = ("leak", "growth", "peak", "time")

Say = Callable[[str], None]


def differ(metric: str, a: Record, b: Record) -> bool:
    """Whether b's behaviour differs from a's on this metric (see the module's rules)."""
    if not (measured(a) and measured(b)):
        return a["status"] != b["status"] or metric == "leak" and a.get("leak") != b.get("leak")
    if metric == "leak":
        return a["leak"] != b["leak"]
    if metric == "growth":
        (lo_a, hi_a), (lo_b, hi_b) = a["growth_interval"], b["growth_interval"]
        apart = lo_b > hi_a or lo_a > hi_b
        ga, gb = a["growth_bytes_per_iteration"], b["growth_bytes_per_iteration"]
        return apart and abs(gb - ga) > floors.growth([ga, gb])
    if metric == "peak":
        pa, pb = a["peak_increase_bytes"], b["peak_increase_bytes"]
        return abs(pb - pa) > floors.peak([pa, pb])
    ta, tb = a["seconds_per_iteration"], b["seconds_per_iteration"]
    return max(ta, tb) > floors.TIME_RATIO * min(ta, tb)


@dataclass
class Runner:
    """Measures one target in the environment of any release, saying what it does."""

    target: targets.Target
    options: dict[str, Any]  # iterations, warmup, budget_bytes, timeout_s
    flavour: str = "cpu"
    root: Path | None = None
    say: Say = print
    measure: Callable[..., Record] = targets.measure_isolated  # or tfbench explain's run

    def __call__(self, version: str, label: str = "") -> Record:
        env = envs.ReleaseEnv(version, self.flavour, self.root or envs.default_root())
        prefix = f"{label}{version}:"
        try:
            python, spent = envs.ensure(
                env,
                lambda: self.say(
                    f"{prefix} creating its environment (uv, from the {self.flavour} lock) ..."
                ),
            )
        except envs.EnvError as e:
            self.say(f"{prefix} cannot be installed: {e}")
            record = targets.describe(self.target)
            record.update(status="error", error=f"install failed: {e}", tf_version=None)
            return dict(record, release=version)
        if spent is not None:
            self.say(f"{prefix} environment ready in {spent:.1f} s")
        start = time.monotonic()
        self.say(f"{prefix} measuring {self.target.name} ...")
        record = self.measure(self.target, python=str(python), quiet=True, **self.options)
        self.say(f"{prefix} {record['status']} in {time.monotonic() - start:.1f} s")
        return dict(record, release=version)


def measure_releases(run: Runner, versions: list[str]) -> list[Record]:
    """The target on each release, oldest first; a release that fails does not stop the rest."""
    return [run(v, f"[{k}/{len(versions)}] ") for k, v in enumerate(versions, 1)]


@dataclass
class Bisection:
    metric: str
    last_before: str | None  # None: no change in the range
    first_after: str | None
    readings: list[Record]  # every release measured, in the order visited


def bisect(run: Runner, versions: list[str], metric: str) -> Bisection:
    """The first release in `versions` (oldest first) whose behaviour differs from the
    oldest's, measuring as few as a bisection needs."""
    if metric not in METRICS:
        raise ValueError(f"unknown metric {metric!r}; choose from {', '.join(METRICS)}")
    readings: list[Record] = []

    def at(i: int) -> Record:
        readings.append(run(versions[i], f"[visit {len(readings) + 1}] "))
        return readings[-1]

    lo, hi = 0, len(versions) - 1
    base, newest = at(lo), at(hi)
    if not differ(metric, base, newest):
        return Bisection(metric, None, None, readings)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if differ(metric, base, at(mid)):
            hi = mid
        else:
            lo = mid
    return Bisection(metric, versions[lo], versions[hi], readings)
