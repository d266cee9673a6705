"""Do two probes files of one release read the same? (an A/A across a change of the runner)

    python tests/validation/probes_aa.py BEFORE.json AFTER.json

Each point of each Costs class, its repeats combined as the suite combines them: the same
status and, for a skip or a failure, the same reason (its first line); where measured,
what the step keeps, the garbage it leaves and the heap's peak within the gate's floors
(tfbench/floors.py) and the same leak verdict.
Prints one line a difference and a count; exits 1 where any point differs.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tfbench import floors
from tfbench.measure import record

FIGURES = {
    "retained_bytes_per_iteration": floors.retained,
    "garbage_bytes_per_iteration": floors.garbage,
    "heap_peak_increase_bytes": floors.heap_peak,
}


def differences(before: dict, after: dict) -> tuple[int, list[str]]:
    """(points compared, one line a difference)."""
    compared, found = 0, []
    for costs, grid in before.items():
        if not costs.endswith("Costs"):
            continue  # the format and the CPU
        for point, repeats in grid.items():
            compared += 1
            where = f"{costs} {point}"
            if point not in after.get(costs, {}):
                found.append(f"{where}: only before")
                continue
            old, new = record.combine(repeats), record.combine(after[costs][point])
            if (old["status"], _first(old)) != (new["status"], _first(new)):
                found.append(
                    f"{where}: {old['status']} {_first(old)!r} -> {new['status']} {_first(new)!r}"
                )
                continue
            if not record.measured(old):
                continue
            for figure, floor in FIGURES.items():
                a, b = old.get(figure), new.get(figure)
                if (a is None) != (b is None) or (a is not None and abs(a - b) > floor([a, b])):
                    found.append(f"{where}: {figure} {a} -> {b}")
            if old.get("leak") != new.get("leak"):
                found.append(f"{where}: leak {old.get('leak')} -> {new.get('leak')}")
    return compared, found


def _first(result: dict) -> str:
    """A reason's first line (a traceback's later lines name objects by their address)."""
    return (result.get("error") or "").partition("\n")[0]


def main(before: Path, after: Path) -> int:
    compared, found = differences(json.loads(before.read_text()), json.loads(after.read_text()))
    for line in found:
        print(line)
    print(f"{compared} points, {len(found)} read differently")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), Path(sys.argv[2])))
