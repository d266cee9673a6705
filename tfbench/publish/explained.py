"""Why the leaking points of a release leak, as `tfbench explain --leaking` found it:
RESULTS/explain/<machine>/<tag>.json, {"release": tag, "points": {point: explanation},
"cpu": the CPU it was read on}, a point named as the report names it (family(param
values)). The report gives each its one-line conclusion; untrusted input like any result.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

from tfbench import cpu, keptfiles
from tfbench.probes import GridPoint
from tfbench.publish import families
from tfbench.publish.results import Data, MachineResults


def point_label(family: families.Family, combo: tuple[str, ...]) -> str:
    return GridPoint(family.name, combo).name


def leaking(
    data: Data, machine: MachineResults, tag: str
) -> list[tuple[str, str, dict[str, Any]]]:
    """The CPU points whose probe calls them a leak on `tag`: (point, scenario, params)."""
    found = []
    for family in families.families(data.benchmarks):
        for combo in itertools.product(*family.params):
            if machine.value(family.benchmark("leak"), combo, tag) != 1:
                continue
            scenario = families.scenario_of(family, combo)
            if scenario:
                found.append((point_label(family, combo), *scenario))
    return found


def write(results_dir: Path, machine: str, tag: str, points: dict[str, dict]) -> Path:
    """The explaining records of a release's leaking points, with the CPU that read them."""
    run = {"release": tag, "points": points, "cpu": cpu.identity()}
    return keptfiles.explained.write(keptfiles.explained.path(results_dir, machine, tag), run)


def read(data: Data, machine: str, tag: str) -> dict[str, str]:
    """Point -> the one line explaining it (its conclusion, or why there is none); a file
    that cannot be read is a problem named in the report."""
    if data.results_dir is None:
        return {}
    kept = keptfiles.explained.path(data.results_dir, machine, tag)
    if not kept.exists() and not kept.is_symlink():
        return {}
    try:
        return keptfiles.explained.read(kept)["points"]
    except keptfiles.KeptFileError as e:
        data.problems.append(str(e))
        return {}
