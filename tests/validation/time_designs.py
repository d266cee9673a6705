"""Which design reads a time change best on this machine: every `time_` point of the suite
read in pairs by each design of the time reader (tfbench.pairs.timing), one release against
itself (A/A) or against itself with a planted slowdown (more of the same calls).

    python tests/validation/time_designs.py [--python PY] [--bench REGEX] [--pairs 8]
        [--seconds 0.5] [--designs turns,interleaved,duet,duet-unpinned] [--plant 0.05]
        [--out readings.json]

Prints, per design, each point's log ratios' spread (the standard deviation of the pairs'
log ratios, as a percentage: the process-to-process noise a pair carries) and estimate,
and the design's time; --out keeps every pair's log ratio, to replay the verdict on.
Nothing else may run on the machine meanwhile.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import re
import statistics
import sys
import time
from pathlib import Path

from tfbench.pairs import timing, verdict
from tfbench.paths import ROOT


def points(bench: str) -> list[timing.Point]:
    """The CPU grid points of every time_step benchmark of the suite's committed index."""
    index = json.loads((ROOT / "results" / "benchmarks.json").read_text())
    found = []
    for name, spec in sorted(index.items()):
        if name == "version" or not name.endswith(".time_step"):
            continue
        cls = name.rpartition(".")[0]
        for combo in itertools.product(*spec["params"]):
            point = f"{cls}({', '.join(combo)})"
            if "'GPU'" not in combo and re.search(bench, point):
                found.append((name, tuple(combo)))
    return found


def run(design: str, chosen: list, python: str, args: argparse.Namespace, logs: Path) -> dict:
    old = timing.SideServer(python, ROOT / "benchmarks", logs / f"{design}-old.log")
    new = timing.SideServer(python, ROOT / "benchmarks", logs / f"{design}-new.log")
    plant = (0.0, args.plant)
    found = {p: verdict.Timed(p, 0.02) for p in chosen}
    began = time.monotonic()
    try:
        for k in range(args.pairs):
            old.renew()
            new.renew()
            for p in chosen:
                if found[p].skipped is None:
                    timing.read_pair(
                        found[p], old, new, design, args.seconds, k, plant, args.canary
                    )
            print(f"{design}: pair {k + 1} of {args.pairs}", file=sys.stderr, flush=True)
    finally:
        old.close()
        new.close()
    seconds = time.monotonic() - began
    return {"seconds": seconds, "points": {_name(p): _summary(r) for p, r in found.items()}}


def _name(point: timing.Point) -> str:
    return f"{point[0].rpartition('.')[0]}({', '.join(point[1])})"


def _summary(r: verdict.Timed) -> dict:
    step = None
    if r.readings:
        old, _ = r.readings[0]
        step = statistics.median((e - s) / 1e9 / n for s, e, n, *_ in old["blocks"])
    blocks = [[a["blocks"], b["blocks"]] for a, b in r.readings]
    return {"logs": r.logs, "skipped": r.skipped, "plan": r.plan, "step_s": step, "blocks": blocks}


def report(results: dict) -> None:
    for design, found in results.items():
        spreads = []
        print(f"\n## {design} ({found['seconds']:.0f} s)\n")
        print("| point | step | pairs | sd of log ratio | estimate |")
        print("|---|---|---|---|---|")
        for name, p in found["points"].items():
            logs = p["logs"]
            if p["skipped"] or len(logs) < 2:
                print(f"| {name} | | | skipped: {p['skipped']} | |")
                continue
            sd = statistics.stdev(logs)
            spreads.append(sd)
            est = math.exp(statistics.median(logs))
            print(f"| {name} | {p['step_s'] * 1e3:.3f} ms | {len(logs)} | {sd:.1%} | x{est:.3f} |")
        if len(spreads) > 1:
            q = statistics.quantiles(spreads, n=10)
            print(
                f"\n{design}: {len(spreads)} points; sd of a pair's log ratio: median "
                f"{statistics.median(spreads):.1%}, 10th {q[0]:.1%}, 90th {q[-1]:.1%}; "
                f"under 3%: {sum(s < 0.03 for s in spreads)}, 3-6%: "
                f"{sum(0.03 <= s < 0.06 for s in spreads)}, over 6%: "
                f"{sum(s >= 0.06 for s in spreads)}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--bench", default=".")
    parser.add_argument("--pairs", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=0.5)
    parser.add_argument("--designs", default="turns,interleaved,duet,duet-unpinned")
    parser.add_argument("--plant", type=float, default=0.0)
    parser.add_argument("--canary", action="store_true", help="time a canary beside each block")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--logs", type=Path, default=ROOT / ".asv" / "time-designs")
    args = parser.parse_args()
    args.logs.mkdir(parents=True, exist_ok=True)
    chosen = points(args.bench)
    print(f"{len(chosen)} points", file=sys.stderr)
    results = {d: run(d, chosen, args.python, args, args.logs) for d in args.designs.split(",")}
    if args.out:
        args.out.write_text(json.dumps(results, indent=1))
    report(results)


if __name__ == "__main__":
    main()
