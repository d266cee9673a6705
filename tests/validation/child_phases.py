"""Where a probe child's time goes, by phase (issue #82): CPU seconds of each phase in
children forked as the suite's probes fork them, from a parent that imported TensorFlow.

    python tests/validation/child_phases.py [--children 5] [SCENARIO [NAME=VALUE ...]]

Each phase is timed by wrapping the function that runs it (the child's own CPU clock:
process_time, which a fork starts at zero); a phase called more than once (a collection)
is their sum. Prints each phase's median over the children, with its range.
It runs in this process's environment: a measuring parent's has every allocation
through glibc's malloc and counted (tfbench.measure.heap.preload_env), which costs its
import ~1 CPU s more. Read it on a quiet machine: docs/profile.md keeps what it read.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tfbench import targets  # noqa: E402
from tfbench.measure import child, collector, devices, steps  # noqa: E402

SPENT: dict[str, float] = defaultdict(float)


def timed(label: str, function: Callable[..., Any]) -> Callable[..., Any]:
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        start = time.process_time()
        try:
            return function(*args, **kwargs)
        finally:
            SPENT[label] += time.process_time() - start

    return wrapped


def phased(target: targets.Step, limits: targets.Limits, primed: bool) -> dict[str, Any]:
    """targets.run, with the CPU seconds of each phase in the record."""
    SPENT.clear()
    start = time.process_time()
    record = targets.run(target, limits, primed)
    record["phases"] = {
        **SPENT,
        "the step's run (targets.run)": time.process_time() - start,
        "the child in all": time.process_time(),
    }
    return record


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--children", type=int, default=5)
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("scenario", nargs="?", default="loop.numpy")
    parser.add_argument("params", nargs="*", default=["size=64"])
    args = parser.parse_args()
    began = time.process_time()
    import tensorflow  # noqa: F401  (as a measuring parent does, before it forks)

    print(f"the parent's import of TensorFlow: {time.process_time() - began:.2f} CPU s")
    targets.prepare = timed("prepare the step", targets.prepare)
    devices.start_runtime = timed("start TensorFlow's runtime", devices.start_runtime)
    gc.collect = timed("gc.collect (the points' too)", gc.collect)
    collector.Window.start = timed("the window's start", collector.Window.start)
    collector.Window.tail = timed("the window's tail", collector.Window.tail)
    child.measure = timed("the step loop (steps.measure)", steps.measure)
    target = targets.ScenarioTarget(args.scenario, dict(p.split("=", 1) for p in args.params))
    limits = targets.Limits(iterations=args.iterations, warmup=max(1, args.iterations // 10))
    records = targets.measure_forked([target] * args.children, limits, runner=phased)
    by_phase: dict[str, list[float]] = defaultdict(list)
    for record in records:
        if record["status"] != "ok":
            sys.exit(f"{record['status']}: {record.get('error')}")
        for phase, seconds in record["phases"].items():
            by_phase[phase].append(seconds)
    print(f"| phase | CPU s, median of {args.children} | range |\n|---|---:|---|")
    for phase, seconds in sorted(by_phase.items(), key=lambda p: -statistics.median(p[1])):
        low, high = min(seconds), max(seconds)
        print(f"| {phase} | {statistics.median(seconds):.3f} | {low:.3f}-{high:.3f} |")


if __name__ == "__main__":
    main()
