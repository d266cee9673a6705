"""Where asv's step detection puts a step at a release of a history, and whether the pair of
that release and the one before read it (docs/history.md#chained keeps a run's lines).

    python tests/validation/chain_steps.py RESULTS HISTORY TAG --gate MACHINE

RESULTS is a results directory (a scratch copy where a release was left out and added
again: chained, or its raw results put in the history's place); HISTORY the machine whose
CPython 3.11 series is read; TAG the release. For every time point, asv's own detector
(asv.step_detect.detect_steps, as its graphs and regressions page use it) over the
history's releases; a step that starts at TAG is listed with its size and what the kept
gate run's pair of TAG and the release before read there (different, and which way).
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import sys
from pathlib import Path

from asv import step_detect

from tfbench.history import releases, repo

ROOT = Path(__file__).resolve().parents[2]
ENV = "virtualenv-py3.11"


def series(results: Path, history: str) -> dict[str, list[float | None]]:
    """Each time point's figure on every tracked release (None: none)."""
    commits = repo.history_tags(ROOT / "releases" / "history.git")
    tags = [f"v{v}" for v in releases.tracked_versions()]
    found: dict[str, list[float | None]] = {}
    for k, tag in enumerate(tags):
        path = results / history / f"{commits[tag][:8]}-{ENV}.json"
        if not path.exists():
            continue
        for key, row in json.loads(path.read_text())["results"].items():
            if ".time_" not in key:
                continue
            for combo, value in zip(itertools.product(*row[1]), row[0]):
                ok = isinstance(value, float) and math.isfinite(value) and value > 0
                found.setdefault(f"{key}({', '.join(combo)})", [None] * len(tags))[k] = (
                    value if ok else None
                )
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", type=Path)
    parser.add_argument("history")
    parser.add_argument("tag")
    parser.add_argument("--gate", required=True, help="the machine whose gate run read the pair")
    args = parser.parse_args()
    tags = [f"v{v}" for v in releases.tracked_versions()]
    at = tags.index(args.tag)
    pair = (tags[at - 1], args.tag)
    run = args.results / "gate" / args.gate / f"{pair[0]}-{pair[1]}.json"
    kept = json.loads(run.read_text())
    pairs = {p["point"]: p for p in kept["time"]["points"]}
    read, unread, points = [], [], 0
    for point, ys in sorted(series(args.results, args.history).items()):
        idx = [i for i, y in enumerate(ys) if y is not None]
        if at not in idx[1:] or point not in pairs:
            continue
        points += 1
        steps = step_detect.detect_steps([ys[i] for i in idx])
        here = [k for k, s in enumerate(steps) if idx[s[0]] == at and k > 0]
        if not here:
            continue
        size = steps[here[0]][2] / steps[here[0] - 1][2]
        p = pairs[point]
        way = 0 if p["answer"] != "different" else (1 if p["ratio"] > 1 else -1)
        line = f"{point}: a step x{size:.3f}; its pair {p['answer']} x{p['ratio']:.3f}"
        (read if way == (1 if size > 1 else -1) else unread).append(line)
    print(
        f"{args.history}, {args.tag}: {points} time points; asv's detector puts a step at "
        f"{args.tag} at {len(read) + len(unread)}: {len(read)} its pair read different that "
        f"way, {len(unread)} its pair did not read"
    )
    for line in unread:
        print(f"  not read by its pair: {line}")
    for line in read:
        print(f"  read by its pair: {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
