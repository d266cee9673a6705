"""A step measured release by release, each in its release's environment, and the
bisection that finds the release where its behaviour changes.

What counts as a change between two single measurements (a bisection compares two), by
the floors of tfbench.floors:
- leak: the verdict flips (leak/flat: from what the step retains, where the heap is read),
  or the run's status does (a step that fails on one release and runs on another);
- retained (the heap in use) and growth (RSS): the two 95% intervals of the fitted slope
  are apart, and by more than the figure's floor;
- heap-peak and peak (RSS): apart by more than the figure's floor;
- time: a ratio beyond TIME_RATIO either way (one process a side: only a large one).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from tfbench import floors, targets
from tfbench.history import envs, pythons
from tfbench.measure.record import Record, measured

METRICS = (
    *("leak", "retained", "heap-peak", "growth", "peak", "time"),
    *("footprint-rss", "footprint-heap"),
)

Say = Callable[[str], None]
# metric -> (the figure, its 95% interval, its floor); (the figure, its floor)
SLOPES = {
    "retained": ("retained_bytes_per_iteration", "retained_interval", floors.retained),
    "growth": ("growth_bytes_per_iteration", "growth_interval", floors.growth),
}
PEAKS = {
    "heap-peak": ("heap_peak_increase_bytes", floors.heap_peak),
    "peak": ("peak_increase_bytes", floors.peak),
    # the target `footprint`: TensorFlow imported and started, in a fresh process
    "footprint-rss": ("rss_bytes", lambda values: floors.FOOTPRINT_RSS_FLOOR),
    "footprint-heap": ("heap_bytes", lambda values: floors.FOOTPRINT_HEAP_FLOOR),
}


def floor(metric: str, values: list[float]) -> float:
    """How far apart readings `values` (both sides') of a metric must be to count as a change
    (time: TIME_RATIO of the smaller)."""
    if metric == "time":
        return (floors.TIME_RATIO - 1) * min(map(abs, values))
    return (SLOPES.get(metric) or PEAKS[metric])[-1](values)


def differ(metric: str, a: Record, b: Record) -> bool:
    """Whether b's behaviour differs from a's on this metric (see the module's rules)."""
    if not (measured(a) and measured(b)):
        return a["status"] != b["status"] or metric == "leak" and a.get("leak") != b.get("leak")
    if metric == "leak":
        return a["leak"] != b["leak"]
    if metric in SLOPES:
        figure, interval, floor = SLOPES[metric]
        if a.get(interval) is None or b.get(interval) is None:
            return False  # not read on one side (no heap figures there)
        (lo_a, hi_a), (lo_b, hi_b) = a[interval], b[interval]
        apart = lo_b > hi_a or lo_a > hi_b
        ga, gb = a[figure], b[figure]
        return apart and abs(gb - ga) > floor([ga, gb])
    if metric in PEAKS:
        figure, floor = PEAKS[metric]
        pa, pb = a.get(figure), b.get(figure)
        return pa is not None and pb is not None and abs(pb - pa) > floor([pa, pb])
    ta, tb = a["seconds_per_iteration"], b["seconds_per_iteration"]
    return max(ta, tb) > floors.TIME_RATIO * min(ta, tb)


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

    def __call__(self, version: str, label: str = "") -> Record:
        root = self.root or envs.default_root()
        env = envs.ReleaseEnv(version, self.flavour, root, self.python)
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
        limits = replace(self.limits, python=str(python), quiet=True)
        record = self.measure(self.target, limits)
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
