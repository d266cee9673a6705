"""Every reading of each grid point of one side of a comparison, from asv results.

A side is one release measured in one or more asv runs (a gate's rounds, or one history
run). asv keeps one number per point for a `track_`; the probe's repeats are kept beside
the results (tfbench.probes), and a `time_` keeps its samples when asv runs with
--record-samples. A side pools them all, so a comparison sees each side's spread.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from asv.results import Results

from tfbench import keptfiles, naming
from tfbench.figures import PROBED as FIGURES
from tfbench.pairs.timing import Point
from tfbench.probes import GridPoint


@dataclass
class Side:
    """One release's readings: point -> the values of each run that measured it (a run's
    samples or probe repeats); point -> why a reading is missing."""

    runs: dict[Point, list[list[float]]] = field(default_factory=dict)
    missing: dict[Point, list[str]] = field(default_factory=dict)
    count: int = 0  # asv runs read
    _last: dict[Point, int] = field(default_factory=dict, repr=False)  # run of runs[p][-1]

    def add(self, point: Point, value: Any, why: str = "no value") -> None:
        """A reading of the run read last (a point need not be in every run)."""
        if _absent(value):
            self.missing.setdefault(point, []).append(why)
            return
        runs = self.runs.setdefault(point, [])
        if self._last.get(point) != self.count:
            runs.append([])
            self._last[point] = self.count
        runs[-1].append(float(value))

    def values(self, point: Point) -> list[float]:
        """Every reading of the point, pooled over runs."""
        return pooled(self.runs.get(point, []))


def _absent(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def pooled(runs: list[list[float]]) -> list[float]:
    return [v for run in runs for v in run]


def add_result(
    side: Side,
    result: Results,
    kept: keptfiles.probes.Probes,
    versions: dict[str, str] | None = None,
) -> None:
    """One asv results file's readings (and its probe repeats, `kept`) into the side; with
    `versions`, only the benchmarks measured by that version of their code."""
    side.count += 1
    for key in result.get_all_result_keys():
        if versions is not None and result.benchmark_version.get(key) != versions.get(key):
            continue
        params = result.get_result_params(key)
        module_class, _, method = key.rpartition(".")
        repeats = kept.get(module_class.rpartition(".")[2], {})
        rows = zip(
            itertools.product(*params),
            result.get_result_value(key, params),
            result.get_result_samples(key, params),
        )
        for combo, value, samples in rows:
            point = GridPoint(key, tuple(combo))
            probed = repeats.get(point.key) if method in FIGURES else None
            if probed and _absent(value) and any(r.get("status") == "ok" for r in probed):
                continue  # probed with its grid, but not a point this asv run selected
            if probed:
                add_probed(side, point, probed)
            elif samples and naming.timed(method):
                for s in samples:
                    side.add(point, s)
            else:
                side.add(point, value)


def add_probed(side: Side, point: Point, repeats: list[dict]) -> None:
    """The point's figure from each of the probe's repeats (kept records) of its grid point."""
    method = point[0].rpartition(".")[2]
    for r in repeats:
        side.add(point, FIGURES[method].of(r), f"{r.get('status')}: {r.get('error')}")


def add_again(side: Side, again: dict[Point, list[dict]]) -> None:
    """Probe repeats of grid points measured again outside asv (point: module.Class and
    asv's param values; tfbench.gate.confirm), as one more run of the side: each figure
    of the points the side's asv runs read."""
    side.count += 1
    for (costs, combo), repeats in again.items():
        for method in FIGURES:
            point = (f"{costs}.{method}", combo)
            if point in side.runs or point in side.missing:
                add_probed(side, point, repeats)


def read_side(results_dirs: list[Path], machine: str, commit: str) -> Side:
    """The side of `commit` on `machine`, pooled over results directories (one per run)."""
    side = Side()
    for results_dir in results_dirs:
        for path in sorted((results_dir / machine).glob(f"{commit[:8]}-*.json")):
            result = Results.load(str(path), machine_name=machine)
            kept = keptfiles.probes.beside(
                results_dir, machine, result.commit_hash, result.env_name
            )
            add_result(side, result, kept)
    return side
