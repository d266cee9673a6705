"""asv's results for the release commits, machine by machine, read with asv's own loaders."""

from __future__ import annotations

import itertools
import json
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from asv import util
from asv.benchmarks import Benchmarks
from asv.commands.compare import _isna
from asv.config import Config
from asv.results import Results

from tfbench.history import releases, repo


@dataclass
class MachineResults:
    machine: str
    releases: list[str] = field(default_factory=list)  # tags with results, oldest first
    # (benchmark, param values, tag) -> (value, stats, samples); value None = failed, nan = skipped
    values: dict[tuple[str, tuple[str, ...], str], tuple[Any, Any, Any]] = field(
        default_factory=dict
    )
    # (Costs class, probe key, tag) -> why the probe has no figures there (a skip, an error)
    reasons: dict[tuple[str, str, str], str] = field(default_factory=dict)

    def value(self, benchmark: str, params: tuple[str, ...], tag: str) -> float | None:
        got = self.values.get((benchmark, params, tag), (math.nan,))[0]
        return None if _isna(got) else got


@dataclass
class Data:
    benchmarks: dict[str, dict]
    machines: dict[str, MachineResults]
    problems: list[str]  # results files that could not be read, and why


def _reasons(results_dir: Path, result: Results, tag: str) -> dict[tuple[str, str, str], str]:
    """The probe outcomes kept beside the results (benchmarks/common.keep_outcomes)."""
    found = {}
    for path in results_dir.glob(f"probes/{result.commit_hash[:8]}-{result.env_name}-*.json"):
        try:
            kept = json.loads(path.read_text())
            for costs, points in kept.items():
                for key, outcome in points.items():
                    if outcome.get("status") not in ("ok", "over_budget"):
                        found[(costs, key, tag)] = f"{outcome['status']}: {outcome.get('error')}"
        except (OSError, ValueError, AttributeError, KeyError, TypeError):
            continue  # an unreadable outcome file only costs the reasons
    return found


def load(conf: Config) -> Data:
    """Every machine's results for the release commits; unreadable files are named and skipped."""
    benchmarks = dict(Benchmarks.load(conf))
    tags = {commit: tag for tag, commit in repo.history_tags(Path(conf.repo)).items()}
    order = {f"v{v}": i for i, v in enumerate(releases.tracked_versions())}
    machines: dict[str, MachineResults] = {}
    problems = []
    for machine_json in sorted(Path(conf.results_dir).glob("*/machine.json")):
        found = MachineResults(machine_json.parent.name)
        for path in sorted(machine_json.parent.glob("*.json")):
            if path.name == "machine.json":
                continue
            try:
                result = Results.load(str(path), machine_name=found.machine)
            except (util.UserError, ValueError, KeyError, TypeError, OSError) as e:
                problems.append(f"{path}: {e}")
                continue
            tag = tags.get(result.commit_hash)
            if tag is None:
                problems.append(f"{path}: commit {result.commit_hash[:8]} is no tracked release")
                continue
            for key in result.get_all_result_keys():
                if (
                    key not in benchmarks
                    or result.benchmark_version.get(key) != benchmarks[key]["version"]
                ):
                    continue  # measured by other code than the current benchmark: not comparable
                params = result.get_result_params(key)
                rows = zip(
                    itertools.product(*params),
                    result.get_result_value(key, params),
                    result.get_result_stats(key, params),
                    result.get_result_samples(key, params),
                )
                for combo, value, stats, samples in rows:
                    found.values[(key, combo, tag)] = (value, stats, samples)
            found.reasons.update(_reasons(Path(conf.results_dir), result, tag))
            if tag not in found.releases:
                found.releases.append(tag)
        found.releases.sort(key=lambda t: order.get(t, len(order)))
        machines[found.machine] = found
    return Data(benchmarks, machines, problems)


def read(conf_path: str) -> tuple[Config, Data]:
    """The configuration and its results; each unreadable results file is named on stderr."""
    conf = Config.load(conf_path)
    data = load(conf)
    for problem in data.problems:
        print(f"tfbench report: skipped {problem}", file=sys.stderr)
    return conf, data
