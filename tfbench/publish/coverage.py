"""What the history holds: for each machine, which benchmarks of results/benchmarks.json it
has at their current version, on every release and Python the history covers; and what is
left to measure there.

The history covers every tracked release on the history's Python (pythons.DEFAULT) and, on
each newer Python, the newest releases that run on it (up to NEWER_RELEASES): where the
report compares Pythons. A benchmark counts as held on a release and Python when its results
file there has a value at the benchmark's version for it: a figure, or a skip with its reason
(asv's n/a); a failure (a timeout, a crash) is not an answer and is measured again.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from tfbench.history import pythons

# The machine the history is read on, its CPU recorded: the report and the site lead with it
REFERENCE = "linux-2cpu-24gb-amd-25.17.1-2c-69f8ba"
NEWER = ("3.12", "3.13")  # the Pythons newer than the history's the history covers
NEWER_RELEASES = 4  # the newest releases each of them is read on


@dataclass(frozen=True, order=True)
class ReleasePython:
    """One release on one Python: one asv results file a machine."""

    tag: str  # v2.21.0
    python: str  # 3.11

    def __str__(self) -> str:
        return f"{self.tag} py{self.python}"


def extent(tracked: list[str], supports: Callable[[str, str], bool | None]) -> list[ReleasePython]:
    """The release x Python cells the history covers, the history's Python first, oldest
    release first: `tracked` versions (oldest first), `supports(version, python)` the locks'
    answer."""
    cells = [ReleasePython(f"v{v}", pythons.DEFAULT) for v in tracked]
    for python in NEWER:
        runs = [v for v in tracked if supports(v, python)]
        cells += [ReleasePython(f"v{v}", python) for v in runs[-NEWER_RELEASES:]]
    return cells


def spans(cells: list[ReleasePython]) -> str:
    """The extent in words: each Python's releases, first-last (count)."""
    said = []
    for python in dict.fromkeys(c.python for c in cells):
        tags = [c.tag for c in cells if c.python == python]
        said.append(f"{python}: {tags[0]}-{tags[-1]} ({len(tags)})")
    return "; ".join(said)


def family(benchmark: str) -> str:
    """A benchmark's family: its module (loops.MatrixPowerCosts.track_leak -> loops)."""
    return benchmark.partition(".")[0]


@dataclass
class Holding:
    """One machine's history: what it holds at current versions, and what it lacks."""

    machine: str
    cpu: str | None  # its record's CPU id; None where the record names none
    # cell -> the benchmarks it has no current answer for
    missing: dict[ReleasePython, set[str]] = field(default_factory=dict)

    def held(self, fam: str, benchmarks: Iterable[str]) -> int:
        """The cells that hold every benchmark of family `fam`."""
        names = {b for b in benchmarks if family(b) == fam}
        return sum(1 for lacks in self.missing.values() if not names & lacks)

    def lacking(self) -> dict[ReleasePython, set[str]]:
        """The cells with something left to measure, in the extent's order."""
        return {cell: lacks for cell, lacks in self.missing.items() if lacks}

    def families_lacking(self) -> list[str]:
        return sorted({family(b) for lacks in self.missing.values() for b in lacks})


def answered(value: object) -> bool:
    """A point's value counts as an answer: a figure, or NaN (asv's skip, with its reason)."""
    return value is not None


def holding(
    machine: str,
    cpu: str | None,
    cells: list[ReleasePython],
    versions: dict[str, str],
    files: dict[ReleasePython, tuple[dict[str, str], dict[str, list]]],
) -> Holding:
    """A machine's history from its results files: `files` cell -> (benchmark -> version,
    benchmark -> its values), `versions` the current version of each benchmark."""
    found = Holding(machine, cpu)
    for cell in cells:
        kept_versions, values = files.get(cell, ({}, {}))
        found.missing[cell] = {
            name
            for name, version in versions.items()
            if kept_versions.get(name) != version
            or not values.get(name)
            or not all(answered(v) for v in values[name])
        }
    return found


def bench_pattern(names: Iterable[str]) -> str:
    """asv's --bench selecting exactly these benchmarks, at every param: asv searches a
    parameterized benchmark's name with its params, `name(1, 'cpu')`."""
    return "^(?:" + "|".join(re.escape(n) for n in sorted(names)) + r")(?:\(|$)"


@dataclass(frozen=True)
class Suite:
    """The benchmarks of results/benchmarks.json: each one's current version, and the
    setup_cache it shares (asv's key, "loops:25"; None for none)."""

    versions: dict[str, str]
    caches: dict[str, str | None]

    @classmethod
    def read(cls, results_dir: Path) -> Suite:
        from tfbench import keptfiles

        loaded = keptfiles.load(results_dir / "benchmarks.json")
        benches = {
            name: bench
            for name, bench in loaded.items()
            if isinstance(bench, dict) and isinstance(bench.get("version"), str)
        }
        return cls(
            {name: bench["version"] for name, bench in benches.items()},
            {name: bench.get("setup_cache_key") for name, bench in benches.items()},
        )

    def durations(self, files: Iterable[tuple[dict[str, str], dict]]) -> dict[str, list[float]]:
        """What each benchmark and setup_cache ("<setup_cache KEY>") took, per results file
        (its benchmark versions, asv's durations): those read at the current version where
        any are, else the older ones; a setup_cache's where the file holds every benchmark
        sharing it at its current version. A version can change a benchmark's cost (the leak
        verdict's rounds took the loop grid from 3 to 17 minutes)."""
        sharing: dict[str, set[str]] = {}  # setup_cache -> the benchmarks that share it
        for name, cache in self.caches.items():
            if cache is not None:
                sharing.setdefault(cache, set()).add(name)
        current: dict[str, list[float]] = {}
        older: dict[str, list[float]] = {}
        for versions, durations in files:
            held = {n for n, v in versions.items() if self.versions.get(n) == v}
            # a setup_cache read for fewer benchmarks than share it now took less time
            caches = {c for c, names in sharing.items() if names <= held}
            held |= {f"<setup_cache {c}>" for c in caches}
            for key, seconds in durations.items():
                if isinstance(seconds, int | float):
                    (current if key in held else older).setdefault(key, []).append(seconds)
        return older | current

    def estimate(self, names: Iterable[str], durations: dict[str, list[float]]) -> float:
        """Seconds to measure `names` once, from durations kept before: each benchmark's and
        each setup_cache's median over the files that time it (a benchmark never timed counts
        the median of those that were). Older versions' durations serve: an estimate, which
        the run corrects by its own pace."""
        names = set(names)
        known = [_median(durations[n]) for n in names if durations.get(n)]
        fill = _median(known) if known else 0.0
        cost = sum(_median(durations[n]) if durations.get(n) else fill for n in names)
        caches = {self.caches.get(n) for n in names} - {None}
        return cost + sum(_median(durations.get(f"<setup_cache {c}>", [])) for c in caches)

    def untimed(self, names: Iterable[str], durations: dict[str, list[float]]) -> set[str]:
        """The setup_caches of `names` that no file timed, which `estimate` cannot count: a
        grid no run has read yet may take most of a file's time."""
        caches = {c for n in names if (c := self.caches.get(n))}
        return {c for c in caches if not durations.get(f"<setup_cache {c}>")}


def _median(values: list[float]) -> float:
    ordered = sorted(v for v in values if not math.isnan(v))
    if not ordered:
        return 0.0
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


@dataclass
class History:
    """Every machine's history under a results folder, and what its files took to measure."""

    suite: Suite
    cells: list[ReleasePython]
    machines: list[Holding]
    durations: dict[str, list[float]]  # benchmark or "<setup_cache KEY>" -> seconds, per file

    def machine(self, name: str) -> Holding:
        """A machine's history: an empty one (everything left) where it has no results."""
        found = next((m for m in self.machines if m.machine == name), None)
        return found or holding(name, None, self.cells, self.suite.versions, {})


def read(results_dir: Path, repo: Path, tracked: list[str], supports) -> History:
    """Every machine's history under `results_dir` (the files asv and the report can read;
    the report names the others), at the versions of its benchmarks.json."""
    from tfbench import keptfiles
    from tfbench.history import repo as history
    from tfbench.publish.results import readable_files

    suite = Suite.read(results_dir)
    cells = extent(tracked, supports)
    tags = {commit: tag for tag, commit in history.history_tags(repo).items()}
    machines, _ = readable_files(results_dir)
    found: list[Holding] = []
    timed: list[tuple[dict[str, str], dict]] = []  # each file's versions and durations
    for machine_json, (name, loaded) in machines.items():
        files: dict[ReleasePython, tuple[dict[str, str], dict[str, list]]] = {}
        for _, result in loaded:
            tag = tags.get(result.commit_hash)
            python = result.params.get("python", pythons.DEFAULT)
            if tag is not None:
                files[ReleasePython(tag, python)] = (
                    dict(result.benchmark_version),
                    _values(result),
                )
            timed.append((dict(result.benchmark_version), result.duration))
        cpu = keptfiles.machine.read(machine_json)["cpu"]
        found.append(holding(name, cpu, cells, suite.versions, files))
    return History(suite, cells, found, suite.durations(timed))


def _values(result) -> dict[str, list]:
    return {
        key: list(result.get_result_value(key, result.get_result_params(key)))
        for key in result.get_all_result_keys()
    }
