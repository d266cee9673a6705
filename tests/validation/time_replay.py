"""What the time reader's verdict says on recorded gates, replayed: each point's pairs taken
as the reader takes them (tfbench.pairs.verdict.replayed) under a margin and a level, from
the readings a gate records (.asv/gate/OLD-NEW/time.json, or their logs alone).

    python tests/validation/time_replay.py A/A.json [...] [--planted P.json ...]
        [--margin 0.02] [--level 0.99] [--first 8] [--most 14] [--strip DIR] [--null N]

Per run: how many points are different, same, unknown; for a planted run the share found
worse, overall and by point class (a point's spread in the A/A runs: the standard deviation
of a pair's log ratio, under 3%, 3-6%, over 6%). --strip writes each run's log ratios alone
(tests/data/time/: what the unit test replays). --null N: the rule's false rows a gate,
from N gates drawn from the A/A runs (each point's pairs resampled up to --most, each sign
flipped at random: an A/A pair is as likely either way), a bound on what more pairs would
cost in false rows. Nothing is measured: any machine runs it.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
from pathlib import Path

from tfbench.pairs import verdict

CLASSES = (("under 3%", 0.0, 0.03), ("3-6%", 0.03, 0.06), ("over 6%", 0.06, math.inf))


def logs_of(path: Path) -> dict[str, list[float]]:
    """Each point's pairs' log ratios, from a recorded gate or its stripped form."""
    data = json.loads(path.read_text())
    if isinstance(data.get("points"), dict):  # stripped
        return data["points"]
    return {
        f"{p['benchmark']}({', '.join(p['params'])})": p["logs"]
        for p in data["points"]
        if p["skipped"] is None
    }


def answers(runs: dict[str, list[float]], args: argparse.Namespace) -> dict[str, verdict.Verdict]:
    return {
        name: verdict.replayed(logs, args.margin, args.first, args.most, args.level)
        for name, logs in runs.items()
    }


def spread(aa: list[dict[str, list[float]]]) -> dict[str, float]:
    """Each point's sd of a pair's log ratio over every A/A run's pairs."""
    return {n: statistics.stdev(v) for n, v in pooled(aa).items() if len(v) > 1}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("aa", nargs="+", type=Path)
    parser.add_argument("--planted", nargs="*", type=Path, default=[])
    parser.add_argument("--margin", type=float, default=0.02)
    parser.add_argument("--level", type=float, default=verdict.LEVEL)
    parser.add_argument("--first", type=int, default=8)
    parser.add_argument("--most", type=int, default=14)
    parser.add_argument("--strip", type=Path)
    parser.add_argument("--null", type=int, default=0)
    args = parser.parse_args()
    aa = [logs_of(p) for p in args.aa]
    planted = [logs_of(p) for p in args.planted]
    if args.strip:
        args.strip.mkdir(parents=True, exist_ok=True)
        for path, run in zip([*args.aa, *args.planted], [*aa, *planted]):
            (args.strip / path.name).write_text(json.dumps({"points": run}, indent=0) + "\n")
    sd = spread(aa)
    print(f"margin {args.margin:.0%}, level {args.level:.0%}, pairs {args.first}-{args.most}")
    for path, run in zip([*args.aa, *args.planted], [*aa, *planted]):
        told = answers(run, args)
        count = {a: sum(v.answer == a for v in told.values()) for a in verdict.ANSWERS}
        worse = [n for n, v in told.items() if v.answer == verdict.DIFFERENT and v.ratio > 1]
        line = f"{path.name}: {len(told)} points, " + ", ".join(
            f"{v} {a}" for a, v in count.items()
        )
        if path in args.planted:
            line += f"; found worse at {len(worse) / len(told):.0%}"
            for label, low, high in CLASSES:
                members = [n for n in told if low <= sd.get(n, math.inf) < high]
                if members:
                    hit = sum(n in worse for n in members)
                    line += f"; {label}: {hit}/{len(members)}"
        print(line)
    if args.null:
        null(aa, args)


def null(aa: list[dict[str, list[float]]], args: argparse.Namespace) -> None:
    """False rows a gate under the rule, from A/A pairs resampled with random signs."""
    draw, pairs = random.Random(0), pooled(aa)
    false = []
    for _ in range(args.null):
        gate = {
            n: [draw.choice(v) * draw.choice((-1, 1)) for _ in range(args.most)]
            for n, v in pairs.items()
        }
        false.append(sum(v.answer == verdict.DIFFERENT for v in answers(gate, args).values()))
    print(
        f"null ({args.null} gates drawn from the A/A pairs): {statistics.mean(false):.2f} false "
        f"rows a gate, {sum(f > 0 for f in false) / len(false):.0%} of gates with one or more"
    )


def pooled(aa: list[dict[str, list[float]]]) -> dict[str, list[float]]:
    """Each point's pairs over every A/A run."""
    found: dict[str, list[float]] = {}
    for run in aa:
        for name, logs in run.items():
            found.setdefault(name, []).extend(logs)
    return found


if __name__ == "__main__":
    main()
