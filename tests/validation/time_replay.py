"""What the time reader's verdict says on recorded gates, replayed: each point's pairs taken
as the reader takes them (tfbench.pairs.verdict.replayed) under a margin and a level, from
the readings a gate records (.asv/gate/OLD-NEW/time.json, or their logs alone).

    python tests/validation/time_replay.py A/A.json [...] [--planted P.json ...]
        [--margin M] [--level L] [--first F] [--most MOST] [--watch W] [--no-apart] [--strip DIR]
        [--null N] [--shift S ...] [--power PAIRS ...] [--drawn] [--own P.json ...]

The rule's defaults are the reader's (tfbench.pairs.timing.Reader). Per run: how many
points are different, same, unknown; for a planted run the share found worse, overall and
by point class (a point's spread in the A/A runs: the standard deviation of a pair's log
ratio, under 3%, 3-6%, over 6%). --strip writes each run's log ratios alone
(tests/data/time/: what the unit test replays). --null N: the rule's false rows a gate,
from N gates drawn from the A/A runs (each point's pairs resampled up to --most, each sign
flipped at random: an A/A pair is as likely either way), a bound on what more pairs would
cost in false rows. --shift S: a true change of S, each A/A run's pairs moved by it,
found where; with --power PAIRS: found where with that many pairs a point, drawn from
the A/A runs as --null draws them, then moved (what a larger budget would find); with
--drawn: found where by the rule itself (first pairs, then more while it reads on, up to
--most), pairs drawn so and moved. --own: gates drawn so, each point moved by the change
it read in these planted gates (the mean of their estimates): a plant as it reads, point
by point, not a flat share. Nothing is measured: any machine runs it.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
from pathlib import Path

from tfbench.pairs import timing, verdict

CLASSES = (("under 3%", 0.0, 0.03), ("3-6%", 0.03, 0.06), ("over 6%", 0.06, math.inf))


def read_by(reader: timing.Reader) -> argparse.Namespace:
    """The reader's rule, as the replay takes it (its margin, level, pairs, watch, apart)."""
    return argparse.Namespace(
        margin=reader.margin, level=verdict.LEVEL, first=reader.first, most=reader.most,
        watch=reader.watch, apart=reader.apart,
    )  # fmt: skip


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
        name: verdict.replayed(
            logs, args.margin, args.first, args.most, args.level, args.watch, args.apart
        )
        for name, logs in runs.items()
    }


def spread(aa: list[dict[str, list[float]]]) -> dict[str, float]:
    """Each point's sd of a pair's log ratio over every A/A run's pairs."""
    return {n: statistics.stdev(v) for n, v in pooled(aa).items() if len(v) > 1}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("aa", nargs="+", type=Path)
    parser.add_argument("--planted", nargs="*", type=Path, default=[])
    rule = read_by(timing.Reader())  # the gate's, unless told otherwise
    parser.add_argument("--margin", type=float, default=rule.margin)
    parser.add_argument("--level", type=float, default=rule.level)
    parser.add_argument("--first", type=int, default=rule.first)
    parser.add_argument("--most", type=int, default=rule.most)
    parser.add_argument("--watch", type=float, default=rule.watch)
    parser.add_argument("--apart", action=argparse.BooleanOptionalAction, default=rule.apart)
    parser.add_argument("--strip", type=Path)
    parser.add_argument("--null", type=int, default=0)
    parser.add_argument("--shift", type=float, nargs="*", default=[])
    parser.add_argument("--power", type=int, nargs="*", default=[])
    parser.add_argument("--drawn", action="store_true")
    parser.add_argument("--own", nargs="*", type=Path, default=[])
    args = parser.parse_args()
    aa = [logs_of(p) for p in args.aa]
    planted = [logs_of(p) for p in args.planted]
    if args.strip:
        args.strip.mkdir(parents=True, exist_ok=True)
        for path, run in zip([*args.aa, *args.planted], [*aa, *planted]):
            (args.strip / path.name).write_text(json.dumps({"points": run}, indent=0) + "\n")
    sd = spread(aa)
    print(
        f"margin {args.margin:.0%}, level {args.level:.0%}, pairs {args.first}-{args.most}, "
        f"watch {args.watch:.0%}{' or apart' if args.apart else ''}"
    )
    for path, run in zip([*args.aa, *args.planted], [*aa, *planted]):
        told = answers(run, args)
        count = {a: sum(v.answer == a for v in told.values()) for a in verdict.ANSWERS}
        line = f"{path.name}: {len(told)} points, " + ", ".join(
            f"{v} {a}" for a, v in count.items()
        )
        if path in args.planted:
            line += "; " + found(told, sd)
        print(line)
    for share in args.shift:
        for path, run in zip(args.aa, aa):
            moved = {n: [x + math.log1p(share) for x in v] for n, v in run.items()}
            print(f"{path.name} moved {share:+.0%}: {found(answers(moved, args), sd)}")
        for pairs in args.power:
            print(f"{pairs} pairs drawn, moved {share:+.0%}: {power(aa, share, pairs, args)}")
        if args.drawn:
            print(f"drawn under the rule, moved {share:+.0%}: {power(aa, share, None, args)}")
    if args.own:
        own = as_read([logs_of(p) for p in args.own])
        print(f"drawn under the rule, moved as {len(args.own)} planted gate(s) read: "
              f"{power(aa, own, None, args)}")  # fmt: skip
    if args.null:
        null(aa, args)


def as_read(planted: list[dict[str, list[float]]]) -> dict[str, float]:
    """Each point's change as the planted gates read it: the mean of their estimates."""
    found: dict[str, list[float]] = {}
    for run in planted:
        for name, logs in run.items():
            told = verdict.interval(logs)
            if told is not None:
                found.setdefault(name, []).append(told[0])
    return {n: math.expm1(statistics.mean(v)) for n, v in found.items()}


def found(told: dict[str, verdict.Verdict], sd: dict[str, float]) -> str:
    """The share of points found worse, overall and by the A/A spread's class."""
    worse = {n for n, v in told.items() if v.answer == verdict.DIFFERENT and v.ratio > 1}
    line = f"found worse at {len(worse) / len(told):.0%}"
    for label, low, high in CLASSES:
        members = [n for n in told if low <= sd.get(n, math.inf) < high]
        if members:
            line += f"; {label}: {sum(n in worse for n in members)}/{len(members)}"
    return line


def power(
    aa: list[dict[str, list[float]]],
    share: float | dict[str, float],
    pairs: int | None,
    args: argparse.Namespace,
) -> str:
    """found() over 20 gates of `pairs` pairs a point (None: as the rule reads them, up to
    --most) drawn with random signs, then moved; the pairs read a gate beside it."""
    fixed = {"first": pairs, "most": pairs} if pairs else {}
    rule = argparse.Namespace(**{**vars(args), **fixed})
    found, read = drawn(aa, share, rule, 20, seed=1)
    share_found = statistics.mean(found) / len(pooled(aa))
    return f"found worse at {share_found:.0%} (20 gates), {read:.0f} pairs a gate"


def null(aa: list[dict[str, list[float]]], args: argparse.Namespace) -> None:
    """False rows a gate under the rule, from A/A pairs resampled with random signs."""
    false, read = drawn(aa, 0.0, args, args.null, seed=0)
    print(
        f"null ({args.null} gates drawn from the A/A pairs): {statistics.mean(false):.2f} false "
        f"rows a gate, {sum(f > 0 for f in false) / len(false):.0%} of gates with one or more, "
        f"{read:.0f} pairs a gate"
    )


def drawn(
    aa: list[dict[str, list[float]]],
    share: float | dict[str, float],
    rule: argparse.Namespace,
    gates: int,
    seed: int,
) -> tuple[list[int], float]:
    """Gates drawn from the A/A runs' pairs (each point's pairs resampled, up to the rule's
    most, each sign flipped at random: an A/A pair is as likely either way), moved by
    `share` (or each point by its own) and read by the rule: each gate's points different
    (worse, where moved) and the pairs a gate read, on average."""
    draw, pairs = random.Random(seed), pooled(aa)
    shift = {n: math.log1p(share.get(n, 0.0) if isinstance(share, dict) else share) for n in pairs}
    found, read = [], []
    for _ in range(gates):
        gate = {
            n: [draw.choice(v) * draw.choice((-1, 1)) + shift[n] for _ in range(rule.most)]
            for n, v in pairs.items()
        }
        told = answers(gate, rule)
        hit = [v for v in told.values() if v.answer == verdict.DIFFERENT]
        found.append(sum(v.ratio > 1 for v in hit) if share else len(hit))
        read.append(sum(v.pairs for v in told.values()))
    return found, statistics.mean(read)


def pooled(aa: list[dict[str, list[float]]]) -> dict[str, list[float]]:
    """Each point's pairs over every A/A run."""
    found: dict[str, list[float]] = {}
    for run in aa:
        for name, logs in run.items():
            found.setdefault(name, []).extend(logs)
    return found


if __name__ == "__main__":
    main()
