"""One scenario per planted change, each planted only where the measured commit says so.

The commit's `plant` file (read through TFBENCH_PLANTED_REPO and ASV_COMMIT, which the gate
sets) lists the changes of that side: `slow` makes the step 25% slower, `leak` keeps 64 KiB
per call, `peak` adds a transient 16 MiB, `kept` keeps 66 KiB per call where its plain
step keeps 64 KiB (+3%, a change of what a leak keeps). A side without them runs the plain
step. Every process that prepares a step writes a file to its temporary folder that only
an exit handler removes, as TensorFlow's autograph writes its modules (LEFT: a process that
exits without the handlers leaves it behind).

The step spins for a span of its thread's CPU time rather than computes: on some days the
machine's CPU switches between two speeds every second or so, which decides whether a
planted 25% of work is found. CPU time, not the clock: a sleep's wake-up, or a clock
deadline, adds the time the step waits for a core to both sides, which grows with the
machine's load (a busy CI machine read the planted 25% as 18% with sleeps; with other
processes on the two cores a clock deadline read it as 13-19%, CPU time as 25%); CPU time
stretches both sides alike, as work does. The test checks the gate's path from asv's
results to its row; its sensitivity to CPU-bound changes is measured on the suite
(docs/gate.md).
"""

import atexit
import contextlib
import os
import subprocess
import tempfile
import time

import common  # the suite's glue alone: the project's suite imports TensorFlow
import numpy as np

from tfbench import scenarios
from tfbench.units import KiB, MiB

from . import LEFT

KEPT: list[np.ndarray] = []
SPIN_S = 0.002  # the plain step's CPU time


def planted() -> set[str]:
    commit, repo = os.environ.get("ASV_COMMIT"), os.environ.get("TFBENCH_PLANTED_REPO")
    if not commit or not repo:
        return set()
    text = subprocess.run(
        ["git", "-C", repo, "show", f"{commit}:plant"], capture_output=True, text=True
    ).stdout
    return set(text.split())


def _remove(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):  # a forked child may have run it first
        os.remove(path)


def _spin(seconds: float) -> None:
    until = time.thread_time() + seconds
    while time.thread_time() < until:
        pass


def prepare(change: str):
    with tempfile.NamedTemporaryFile(prefix=LEFT, suffix=".py", delete=False) as written:
        atexit.register(_remove, written.name)
    active = change in planted()
    spin = SPIN_S * 1.25 if active and change == "slow" else SPIN_S

    def step():
        _spin(spin)
        if active and change == "leak":
            KEPT.append(np.ones(64 * KiB // 8))  # written: resident
        if change == "kept":
            KEPT.append(np.ones((66 if active else 64) * KiB // 8))
        if active and change == "peak":
            np.ones(16 * MiB // 8).sum()

    return step


for _change in ("slow", "leak", "peak", "kept"):
    scenarios.register(
        scenarios.Scenario(
            f"planted.{_change}",
            f"planted {_change}",
            lambda c=_change: prepare(c),
            tensorflow=False,  # its measuring parents skip the import
        )
    )

GRID = [["slow", "leak", "peak", "kept"]]


class Planted(common.StepBenchmark):
    family, params, param_names, version = "planted", GRID, ["variant"], "1"


class PlantedCosts(common.ProbeCosts):
    family, params, param_names, version = "planted", GRID, ["variant"], "1"

    def setup_cache(self):
        return self.measure()
