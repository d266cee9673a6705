"""How often does the nightly bisection name the right build, and a flat range no build?

    python tests/validation/nightly_policy.py [--trials 300] > table.md

The policy (tfbench.nightly.policy) on simulated readings over a window as long as the
2.22 nightlies' (142 builds), the step placed at random, each reading drawn afresh with
Gaussian noise: the heap's footprint (180 MiB; noise sigma 128 KiB, a quarter of its floor
and 30 times what the real builds read) and what a step keeps (20 KiB a call; sigma
0.25 KiB, a quarter of its floor). Prints, per case, how each bisection concluded and the
builds and readings it took. docs/validation/nightly.md keeps the table of a run.
"""

from __future__ import annotations

import argparse
import collections
import random
import statistics
from collections.abc import Callable

from tfbench.nightly import policy
from tfbench.nightly.policy import Build
from tfbench.units import KiB, MiB

BUILDS = [Build(f"2.22.0.dev{k:03d}", "2026-02-04T16:00:00Z") for k in range(142)]
# metric -> (its figure's key in a reading, the base, the noise's sigma, the floor)
REGIMES = {
    "footprint-heap": ("heap_bytes", 180 * MiB, 128 * KiB, 512 * KiB),
    "retained": ("retained_bytes_per_iteration", 20 * KiB, 256, 1 * KiB),
}
Shape = Callable[[int, int, float], float]  # (build, step's first bad, floor) -> change


def cases() -> dict[str, tuple[Shape, str]]:
    """name -> (the change at a build, what a right answer is)."""
    return {
        "flat (A/A)": (lambda i, at, f: 0.0, "none"),
        "step of 1.5 floors": (lambda i, at, f: 1.5 * f * (i >= at), "step"),
        "step of 2 floors": (lambda i, at, f: 2 * f * (i >= at), "step"),
        "step of 4 floors": (lambda i, at, f: 4 * f * (i >= at), "step"),
        "step of 32 floors, moves of 2-8 floors after it": (_step_and_moves, "step"),
        "linear drift of 20 floors": (lambda i, at, f: 20 * f * i / 141, "drift"),
    }


def _step_and_moves(i: int, at: int, f: float) -> float:
    """As the real footprint read: +16 MiB in one build, then -2 and +8 floors further on."""
    return 32 * f * (i >= at) - 2 * f * (i >= at + 40) + 8 * f * (i >= at + 80)


def trial(metric: str, shape: Shape, rng: random.Random) -> tuple[policy.Found, int, int]:
    key, base, sigma, floor = REGIMES[metric]
    at = rng.randrange(1, 142 - (81 if shape is _step_and_moves else 0))
    reads = []

    def measure(build: Build) -> dict:
        i = BUILDS.index(build)
        reads.append(i)
        value = base + shape(i, at, floor) + rng.gauss(0, sigma)
        return {"status": "ok", "iterations": 100, key: value}

    found = policy.bisect(BUILDS, metric, measure, say=lambda s: None)
    return found, at, len(reads)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=300)
    trials = parser.parse_args().trials
    print("| figure | case | right | concluded (of each trial) | builds read | readings |")
    print("|---|---|---|---|---|---|")
    for metric in REGIMES:
        for name, (shape, right) in cases().items():
            rng = random.Random(f"{metric} {name}")
            kinds: collections.Counter[str] = collections.Counter()
            builds, readings, exact = [], [], 0
            for _ in range(trials):
                found, at, count = trial(metric, shape, rng)
                kinds[found.kind] += 1
                named = found.first_bad and BUILDS.index(found.first_bad)
                exact += found.kind == "step" and named == at
                builds.append(len(found.readings))
                readings.append(count)
            share = exact if right == "step" else kinds[right]
            told = ", ".join(f"{k} {n}" for k, n in kinds.most_common())
            print(
                f"| {metric} | {name} | {share}/{trials}"
                f"{' (the exact build)' if right == 'step' else ''} | {told} | "
                f"median {statistics.median(builds):.0f}, max {max(builds)} | "
                f"median {statistics.median(readings):.0f}, max {max(readings)} |"
            )


if __name__ == "__main__":
    main()
