"""How far each way of adding a release read on another CPU puts its step from the step a
same-runner pair reads (docs/history.md#chained keeps a run's tables).

    python tests/validation/chain_error.py OLD NEW --history MACHINE --raw MACHINE \
        [--gate MACHINE] [--pairs tests/data/time/FILE.json] > table.md

At every time point of the pair OLD -> NEW, from the kept files alone:

- pair: the gate's estimate of NEW over OLD, both read on one runner in pairs of processes
  (results/gate/GATE/OLD-NEW.json), the reference;
- beside: the step a user saw before chaining: the history's OLD beside the runner's raw
  NEW (results/RAW/ beside results/HISTORY/), over the pair;
- re-read: the step of a history read whole on the runner (its raw OLD and NEW, asv's
  medians of one session), over the pair;
- chained: the step the chain publishes: the pair's own estimate (no error by
  construction), its interval's half-width the chain's uncertainty a link;
- history: the step the history read itself (another CPU, asv's medians), over the pair:
  what a step read on one CPU says of another;
- pairs: where --pairs names recorded pairs of the same two releases read on another
  machine (tests/data/time/), their estimate over the pair: the CPU dependence of the pair
  reading itself.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import statistics
import sys
from pathlib import Path

from tfbench.history import repo
from tfbench.pairs import verdict

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "results"
ENV = "virtualenv-py3.11"


def figures(machine: str, tag: str) -> dict[str, float]:
    """A machine's time figures of a release: point -> seconds (measured points only)."""
    commit = repo.history_tags(ROOT / "releases" / "history.git")[tag]
    path = RESULTS / machine / f"{commit[:8]}-{ENV}.json"
    if not path.exists():
        return {}
    data = json.loads(path.read_text())
    found = {}
    for key, row in data["results"].items():
        if ".time_" not in key:
            continue
        for combo, value in zip(itertools.product(*row[1]), row[0]):
            if isinstance(value, float) and math.isfinite(value) and value > 0:
                found[f"{key}({', '.join(combo)})"] = value
    return found


def gate_points(machine: str, old: str, new: str) -> dict[str, dict]:
    data = json.loads((RESULTS / "gate" / machine / f"{old}-{new}.json").read_text())
    return {p["point"]: p for p in data["time"]["points"] if p["ratio"] is not None}


def recorded(path: Path) -> dict[str, float]:
    """Recorded pairs (tests/data/time/: point -> each pair's log ratio): each point's
    estimate over all its pairs."""
    found = {}
    for point, logs in json.loads(path.read_text())["points"].items():
        told = verdict.interval(logs)
        if told is not None:
            found[point] = math.exp(told[0])
    return found


def spread(ratios: list[float]) -> str:
    """The distribution of ratios (1: the pair's step exactly): median, the widest
    disagreement either way, and the shares within 2% and 5%."""
    if not ratios:
        return "n/a | n/a | n/a | n/a"
    off = [abs(math.log(r)) for r in ratios]
    widest = ratios[off.index(max(off))]
    within = [sum(o <= math.log(1 + m) for o in off) / len(off) for m in (0.02, 0.05)]
    return f"x{statistics.median(ratios):.3f} | x{widest:.3f} | {within[0]:.0%} | {within[1]:.0%}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("--history", required=True)
    parser.add_argument("--raw", required=True)
    parser.add_argument("--gate", help="default: --raw")
    parser.add_argument("--pairs", type=Path, help="recorded pairs of the pair, another CPU's")
    args = parser.parse_args()
    pairs = gate_points(args.gate or args.raw, args.old, args.new)
    history = {t: figures(args.history, t) for t in (args.old, args.new)}
    raw = {t: figures(args.raw, t) for t in (args.old, args.new)}
    other = recorded(args.pairs) if args.pairs else {}
    rows: dict[str, list[float]] = {k: [] for k in ("beside", "re-read", "history", "pairs")}
    halves = []
    for point, p in sorted(pairs.items()):
        ratio = p["ratio"]
        halves.append(math.sqrt(p["high"] / p["low"]))
        h_old, h_new = history[args.old].get(point), history[args.new].get(point)
        r_old, r_new = raw[args.old].get(point), raw[args.new].get(point)
        if h_old and r_new:
            rows["beside"].append(r_new / h_old / ratio)
        if r_old and r_new:
            rows["re-read"].append(r_new / r_old / ratio)
        if h_old and h_new:
            rows["history"].append(h_new / h_old / ratio)
        if point in other:
            rows["pairs"].append(other[point] / ratio)
    print(f"{args.old} -> {args.new}: {len(pairs)} time points with a pair estimate\n")
    print("| step published | points | median | widest | within 2% | within 5% |")
    print("|---|---|---|---|---|---|")
    said = {
        "beside": f"raw {args.new} beside the history ({args.raw} beside {args.history})",
        "re-read": f"the history re-read whole on {args.raw} (asv's medians)",
        "history": f"the history's own step ({args.history}, asv's medians)",
        "pairs": f"pairs of the two read on another machine ({args.pairs})",
    }
    for key, ratios in rows.items():
        if ratios or key != "pairs":
            print(f"| {said[key]}, over the pair | {len(ratios)} | {spread(ratios)} |")
    print(
        f"| chained, over the pair | {len(pairs)} | x1.000 | x1.000 | 100% | 100% |\n\n"
        f"A link's interval, half-width: median x{statistics.median(halves):.3f}, "
        f"widest x{max(halves):.3f} ({len(halves)} points)."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
