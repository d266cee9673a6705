"""The nightly watch's A/A: one tf-nightly build read as if it were published on several
days, in fresh processes, every reading kept; then what the watch's policy calls on it.

    python tests/validation/watch_aa.py read VERSION --days 8 --readings 3 --out A.json
    python tests/validation/watch_aa.py replay A.json [--draws 2000] [--seed 1]

`read` makes (or reuses) the build's environment and reads the sentinels DAYS x READINGS
times (tfbench.nightly.sentinels), writing every reading to A.json (what
tests/test_watch.py replays). `replay` prints, per sentinel and figure: the calls of the
days as read (an A/A history: every call is false); the false-step rate of a comparison of
two neighbouring builds, over DRAWS histories whose days draw their readings from the pool
at random; and the smallest step the policy names, found by planting steps of growing
size into the A/A history (the days from the middle on moved by it), with the figure's
floor beside it.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from pathlib import Path
from typing import Any

from tfbench import figures, targets
from tfbench.history import envs
from tfbench.nightly import builds, sentinels, watch
from tfbench.nightly.policy import Build
from tfbench.nightly.series import Entry, compact

Readings = dict[str, list[dict[str, Any]]]  # sentinel -> records
FACTORS = (0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0)  # planted steps, in floors


def read(version: str, days: int, readings: int, out: Path) -> None:
    build = next(b for b in builds.published() if b.version == version)
    python, known = builds.ensure(build, envs.default_root())
    found: list[Readings] = []
    began = time.monotonic()
    for day in range(days):
        taken: Readings = {}
        for _ in range(readings):
            for sentinel, record in sentinels.read(str(python), targets.DEFAULTS).items():
                taken.setdefault(sentinel, []).append(compact(record))
        found.append(taken)
        print(f"day {day + 1} read, {time.monotonic() - began:.0f} s")
    out.write_text(
        json.dumps({"build": version, "git_version": known.git_version, "days": found}) + "\n"
    )


def history(days: list[Readings]) -> list[Entry]:
    """The days as consecutive builds of the index, each its own day."""
    dates = [f"202601{d + 1:02d}" for d in range(len(days))]
    made = [Build(f"2.99.0.dev{d}", f"{d[:4]}-{d[4:6]}-{d[6:]}T20:00:00Z") for d in dates]
    return [
        Entry(b, before=made[k - 1].version if k else None, readings=r)
        for k, (b, r) in enumerate(zip(made, days, strict=True))
    ]


def planted(days: list[Readings], sentinel: str, metric: str, size: float) -> list[Readings]:
    """The history with the figure moved by `size` from the middle day on."""
    key = figures.named(metric).field or ""
    moved = json.loads(json.dumps(days))
    for day in moved[len(moved) // 2 :]:
        for record in day[sentinel]:
            if record.get(key) is not None:
                record[key] += size
    return moved


def drawn(days: list[Readings], rng: random.Random) -> list[Readings]:
    """A history of as many days, each reading drawn from the pool of every day's."""
    pool = {s: [r for d in days for r in d[s]] for s in days[0]}
    return [{s: rng.sample(pool[s], len(days[0][s])) for s in pool} for _ in days]


def replay(path: Path, draws: int, seed: int) -> None:
    days = json.loads(path.read_text())["days"]
    rng = random.Random(seed)
    as_read = watch.calls(history(days))
    print(f"{path.name}: {len(days)} days, calls as read: {len(as_read)}")
    for c in as_read:
        print(f"  false {c.kind}: {c.sentinel} {c.metric} {c.before.version} -> {c.after.version}")
    false_steps: dict[tuple[str, str], int] = {}
    for _ in range(draws):
        for c in watch.calls(history(drawn(days, rng))):
            if c.kind == watch.STEP:
                key = (c.sentinel, c.metric)
                false_steps[key] = false_steps.get(key, 0) + 1
    comparisons = draws * (len(days) - 1)
    print(
        "\n| sentinel | figure | median | spread of the readings | floor "
        "| false steps / comparisons | smallest step named |"
    )
    print("|---|---|---|---|---|---|---|")
    for sentinel, metrics in sentinels.FIGURES.items():
        for metric in metrics:
            figure = figures.named(metric)
            values = [v for d in days for r in d[sentinel] if (v := figure.of(r)) is not None]
            floor = figures.floor(metric, values)
            named = next(
                (
                    f
                    for f in FACTORS
                    if any(
                        c.kind == watch.STEP and (c.sentinel, c.metric) == (sentinel, metric)
                        for c in watch.calls(history(planted(days, sentinel, metric, f * floor)))
                    )
                ),
                None,
            )
            text = f"{named} floors" if named else f"none up to {FACTORS[-1]} floors"
            print(
                f"| {sentinel} | {metric} | {statistics.median(values):,.0f} | "
                f"{max(values) - min(values):,.0f} | {floor:,.0f} | "
                f"{false_steps.get((sentinel, metric), 0)} / {comparisons} | {text} |"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("read")
    r.add_argument("version")
    r.add_argument("--days", type=int, default=8)
    r.add_argument("--readings", type=int, default=3)
    r.add_argument("--out", type=Path, required=True)
    p = sub.add_parser("replay")
    p.add_argument("path", type=Path)
    p.add_argument("--draws", type=int, default=2000)
    p.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if args.command == "read":
        read(args.version, args.days, args.readings, args.out)
    else:
        replay(args.path, args.draws, args.seed)


if __name__ == "__main__":
    main()
