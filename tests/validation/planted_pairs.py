"""Is +3% of what a step keeps found every time, and 64 against 64 never?

    python tests/validation/planted_pairs.py [--pairs 5] > table.md

Builds the planted project (tests/planted: a step keeping 64 KiB a call, made 66 KiB in
v1.0.1), then runs `tfbench gate --bench PlantedCosts` on v1.0.0 against v1.0.1 and v1.0.0
against itself, `--pairs` times each, and prints every gate's rows for the `kept` step and
the count of all its rows. docs/validation/gate.md keeps the table of a run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import planted  # noqa: E402  (tests/planted, beside this directory)

from tfbench.units import KiB  # noqa: E402


def gate(project: Path, old: str, new: str) -> tuple[list[dict], float]:
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "tfbench", "gate", old, new, "--bench", "PlantedCosts",
         "--config", str(project / "asv.conf.json"), "--machine", "planted",
         "--interpreter", sys.executable, "--json"],
        capture_output=True, text=True, cwd=project,
        env={**os.environ, "TFBENCH_PLANTED_REPO": str(project / "repo")},
    )  # fmt: skip
    if done.returncode not in (0, 1):
        sys.exit(f"gate {old} {new} failed ({done.returncode}):\n{done.stderr}")
    return json.loads(done.stdout), time.monotonic() - started


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, default=5)
    args = parser.parse_args()
    print("| gate | kept: rows | before -> after (KiB/call) | rows in all | s |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        project = planted.make_project(Path(tmp))
        for n in range(1, args.pairs + 1):
            for old, new in (("v1.0.0", "v1.0.1"), ("v1.0.0", "v1.0.0")):
                rows, seconds = gate(project, old, new)
                kept = [r for r in rows if r["params"].get("variant") == "kept"]
                figures = ", ".join(f"{r['old'] / KiB:.1f} -> {r['new'] / KiB:.1f}" for r in kept)
                names = ", ".join(f"{r['metric']} {r['direction']}" for r in kept) or "none"
                print(
                    f"| {n}: {old} {new} | {names} | {figures or '-'} | {len(rows)} "
                    f"| {seconds:.0f} |",
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
