"""One scenario per planted change, each planted only where the measured commit says so.

The commit's `plant` file (read through TFBENCH_PLANTED_REPO and ASV_COMMIT, which the gate
sets) lists the changes of that side: `slow` makes the step 25% slower, `leak` keeps 64 KiB
per call, `peak` adds a transient 16 MiB. A side without them runs the plain step.
"""

import os
import subprocess

import numpy as np

from benchmarks import common
from tfbench import scenarios
from tfbench.units import KiB, MiB

KEPT: list[np.ndarray] = []
WORK = 40_000  # Python additions per step (about 2 ms): steadier between processes than BLAS


def planted() -> set[str]:
    commit, repo = os.environ.get("ASV_COMMIT"), os.environ.get("TFBENCH_PLANTED_REPO")
    if not commit or not repo:
        return set()
    text = subprocess.run(
        ["git", "-C", repo, "show", f"{commit}:plant"], capture_output=True, text=True
    ).stdout
    return set(text.split())


def prepare(change: str):
    active = change in planted()
    additions = WORK * 5 // 4 if active and change == "slow" else WORK

    def step():
        total = 0
        for i in range(additions):
            total += i
        if active and change == "leak":
            KEPT.append(np.ones(64 * KiB // 8))  # written: resident
        if active and change == "peak":
            np.ones(16 * MiB // 8).sum()

    return step


for _change in ("slow", "leak", "peak"):
    scenarios.register(
        scenarios.Scenario(
            f"planted.{_change}", f"planted {_change}", lambda c=_change: prepare(c)
        )
    )

GRID = [["slow", "leak", "peak"]]


class Planted(common.StepBenchmark):
    family, params, param_names, version = "planted", GRID, ["variant"], "1"


class PlantedCosts(common.ProbeCosts):
    family, params, param_names, version = "planted", GRID, ["variant"], "1"

    def setup_cache(self):
        return self.measure()
