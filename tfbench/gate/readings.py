"""Every reading of each grid point of one side of a comparison, from asv results.

A side is one release measured in one or more asv runs (a gate's rounds, or one history
run). asv keeps one number per point for a `track_`; the probe's repeats are kept beside
the results (benchmarks/common.keep_outcomes), and a `time_` keeps its samples when asv
runs with --record-samples. A side pools them all, so a comparison sees each side's spread.
"""

from __future__ import annotations

import ast
import itertools
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from asv.results import Results

# asv's track_ benchmark -> the probe record's figure it reports (benchmarks/common.py)
PROBE_FIGURES = {
    "track_peak_increase": "peak_increase_bytes",
    "track_growth_per_iteration": "growth_bytes_per_iteration",
    "track_leak": "leak",
    "track_allocator_peak": "allocator_peak_bytes",
    "track_graph_ops": "graph_ops",
    "track_traces": "traces",
    "track_graph_ops_per_call": "graph_ops_per_call",
}

Point = tuple[str, tuple[str, ...]]  # (benchmark, asv's param values as it prints them)


@dataclass
class Side:
    """One release's readings: point -> the values of each run that measured it (a run's
    samples or probe repeats); point -> why a reading is missing."""

    runs: dict[Point, list[list[float]]] = field(default_factory=dict)
    missing: dict[Point, list[str]] = field(default_factory=dict)
    count: int = 0  # asv runs read

    def add(self, point: Point, value: Any, why: str = "no value") -> None:
        if value is None or (isinstance(value, float) and math.isnan(value)):
            self.missing.setdefault(point, []).append(why)
            return
        runs = self.runs.setdefault(point, [])
        if len(runs) < self.count:
            runs.append([])
        runs[-1].append(float(value))

    def values(self, point: Point) -> list[float]:
        """Every reading of the point, pooled over runs."""
        return [v for run in self.runs.get(point, []) for v in run]


def probe_key(combo: tuple[str, ...]) -> str:
    """The probe's key of a grid point (benchmarks/common._key) from asv's param reprs."""
    return "|".join(str(ast.literal_eval(v)) for v in combo)


def _probes(results_dir: Path, result: Results) -> dict[str, dict[str, list[dict]]]:
    kept: dict[str, dict[str, list[dict]]] = {}
    for path in results_dir.glob(f"probes/{result.commit_hash[:8]}-{result.env_name}-*.json"):
        try:
            kept.update(json.loads(path.read_text()))
        except (OSError, ValueError):
            continue  # without them the side has asv's one value per point
    return kept


def add_result(
    side: Side, results_dir: Path, result: Results, versions: dict[str, str] | None = None
) -> None:
    """One asv results file's readings (and its probe repeats) into the side; with
    `versions`, only the benchmarks measured by that version of their code."""
    probes = _probes(results_dir, result)
    side.count += 1
    for key in result.get_all_result_keys():
        if versions is not None and result.benchmark_version.get(key) != versions.get(key):
            continue
        params = result.get_result_params(key)
        module_class, _, method = key.rpartition(".")
        repeats = probes.get(module_class.rpartition(".")[2], {})
        rows = zip(
            itertools.product(*params),
            result.get_result_value(key, params),
            result.get_result_samples(key, params),
        )
        for combo, value, samples in rows:
            point = (key, tuple(combo))
            probed = repeats.get(probe_key(combo)) if method in PROBE_FIGURES else None
            if probed:
                name = PROBE_FIGURES[method]
                for r in probed:
                    figure = r[name] if name in r else r.get("counters", {}).get(name)
                    side.add(point, figure, f"{r.get('status')}: {r.get('error')}")
            elif samples and method.startswith("time_"):
                for s in samples:
                    side.add(point, s)
            else:
                side.add(point, value)


def read_side(results_dirs: list[Path], machine: str, commit: str) -> Side:
    """The side of `commit` on `machine`, pooled over results directories (one per run)."""
    side = Side()
    for results_dir in results_dirs:
        for path in sorted((results_dir / machine).glob(f"{commit[:8]}-*.json")):
            add_result(side, results_dir, Results.load(str(path), machine_name=machine))
    return side
