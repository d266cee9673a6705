"""Does a grid point read the same from the suite's probe and from `tfbench measure`?

    python tests/validation/agreement.py VERSION [--python X.Y] > table.md

For every CPU grid point the committed history measured on VERSION (results/probes/, three
fresh processes a point), measures the same scenario and params with `tfbench measure` in
the release's environment (one fresh process) and prints a Markdown table: what the step
keeps and the heap's peak from each, whether they agree within the gate's floors, and the
leak verdicts. docs/validation/probe.md keeps its figures.
"""

from __future__ import annotations

import argparse
import ast
import json
import statistics
import sys
from pathlib import Path

from tfbench import floors, targets
from tfbench.history import repo
from tfbench.publish import families
from tfbench.sweep import Runner
from tfbench.units import format_bytes

ROOT = Path(__file__).resolve().parents[2]


def suite_points(version: str, python: str) -> list[tuple[str, dict, list[dict]]]:
    """(scenario, params, the history's repeats) of each CPU point measured."""
    commit = repo.history_tags(ROOT / "releases" / "history.git")[f"v{version}"]
    probes = ROOT / "results" / "probes" / f"{commit[:8]}-virtualenv-py{python}-cpu.json"
    kept = json.loads(probes.read_text())
    index = json.loads((ROOT / "results" / "benchmarks.json").read_text())
    found = []
    for costs, grid in kept.items():
        if not isinstance(grid, dict):
            continue  # the format number
        module = next(k.rsplit(".", 1)[0] for k in index if f".{costs}." in f".{k}")
        step = index[f"{module.removesuffix('Costs')}.time_step"]
        family = families.Family(
            step["name"].rsplit(".", 1)[0], step["param_names"], step["params"]
        )
        for key, repeats in grid.items():
            wanted = key.split("|")
            combo = tuple(
                next(v for v in values if str(ast.literal_eval(v)) == part)
                for part, values in zip(wanted, family.params)
            )
            scenario = families.scenario_of(family, combo)
            if scenario and all(r.get("status") == "ok" for r in repeats):
                found.append((*scenario, repeats))
    return found


def median(repeats: list[dict], figure: str) -> float | None:
    values = [r[figure] for r in repeats if r.get(figure) is not None]
    return statistics.median(values) if values else None


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("version")
    parser.add_argument("--python", default="3.11")
    args = parser.parse_args()
    head = ["point", "retained: suite", "measure", "within", "heap peak: suite", "measure"]
    print("| " + " | ".join([*head, "within", "leak"]) + " |")
    print("|---|---|---|---|---|---|---|---|")
    agree = total = 0
    for scenario, params, repeats in suite_points(args.version, args.python):
        target = targets.ScenarioTarget(scenario, params)
        runner = Runner(target, targets.Limits(), say=lambda s: None, python=args.python)
        alone = runner(args.version)
        if alone["status"] != "ok":
            print(f"| {scenario} {params} | measure: {alone['status']} |||||||")
            continue
        cells, ok = [], True
        for figure, floor in (
            ("retained_bytes_per_iteration", floors.retained),
            ("heap_peak_increase_bytes", floors.heap_peak),
        ):
            a, b = median(repeats, figure), alone[figure]
            within = a is not None and b is not None and abs(a - b) <= floor([a, b])
            ok &= within
            cells += [format_bytes(a), format_bytes(b), "yes" if within else "**no**"]
        verdicts = f"{median(repeats, 'leak')} / {alone['leak']}"
        total, agree = total + 1, agree + ok
        name = " ".join([scenario, *(f"{k}={v}" for k, v in params.items())])
        print(f"| {name} | " + " | ".join(cells) + f" | {verdicts} |", flush=True)
    print(f"\n{agree} of {total} points agree within the floors.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
