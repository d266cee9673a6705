"""`tfbench watch`: every tf-nightly build read the day it is published on the sentinels,
kept in results/nightly/<machine>/, and each step named with its commit range."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path

from tfbench.cli import common, output
from tfbench.cli.common import BadInput, Subcommands


def add(sub: Subcommands) -> None:
    w = sub.add_parser(
        "watch",
        help="read the tf-nightly builds not read yet on the sentinel set, and call each step "
        "with its commits (results/nightly/<machine>/)",
    )
    w.add_argument("--since", metavar="VERSION", help="read from this build (a backfill)")
    w.add_argument("--until", metavar="VERSION", help="read up to this build")
    w.add_argument(
        "--every", type=int, default=1, help="read every Nth build of the window (a step "
        "between two is then placed by reading the builds between)",
    )  # fmt: skip
    w.add_argument(
        "--no-time", action="store_true", help="leave time out (it is only read within a run)"
    )
    w.add_argument("--machine", help="asv machine name (default: this host's)")
    w.add_argument("--results", type=Path, default=Path("results"), help="default: results")
    w.add_argument(
        "--env-dir", type=Path, help="where environments live (default: ~/.cache/tfbench/envs)"
    )
    common.add_measuring(w)
    common.add_json(w, "the calls")
    w.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from asv.machine import Machine

    from tfbench.grammar import NIGHTLY
    from tfbench.nightly import run as nightly
    from tfbench.nightly import series

    for name in ("since", "until"):
        value = getattr(args, name)
        if value is not None and not NIGHTLY.fullmatch(value):
            raise BadInput(f"--{name} {value!r}: a tf-nightly version, as 2.22.0.dev20260215")
    if args.every < 1:
        raise BadInput(f"--every must be at least 1, got {args.every}")
    machine = common.machine(args.machine or Machine.get_unique_machine_name())
    try:
        read, calls = nightly.watching(
            args.results, machine, common.measuring(args), args.since, args.until, args.every,
            not args.no_time, args.env_dir, common.progress,
        )  # fmt: skip
    except series.HistoryBusy as e:
        raise BadInput(str(e)) from None
    versions = [b.version for b in read]
    if args.json:
        found = [dict(asdict(c), compare_url=c.compare_url) for c in calls]
        print(json.dumps({"read": versions, "calls": found}, indent=2))
    else:
        print(output.watch_calls(versions, calls))
    return 1 if any(c.kind == "step" and c.confirmed for c in calls) else 0
