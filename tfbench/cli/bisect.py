"""`tfbench bisect`: every release where a step's behaviour changes."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from tfbench import figures
from tfbench.cli import common, output
from tfbench.cli.common import Subcommands

if TYPE_CHECKING:
    from tfbench.targets import Target


def add(sub: Subcommands) -> None:
    b = sub.add_parser(
        "bisect",
        help="find every release where a step's behaviour changes (leak, growth, peak or "
        "time), largest first",
    )
    common.add_target(b)
    b.add_argument(
        "range",
        nargs="*",
        metavar="OLD NEW",
        help="tracked releases (default: all; with --nightlies the newest two)",
    )
    b.add_argument(
        "--nightlies",
        action="store_true",
        help="bisect the tf-nightly builds between OLD and NEW (each in its own environment, "
        "that day's dependencies): the last good and first bad build, and their commits",
    )
    b.add_argument(
        "--metric",
        default="leak",
        help="leak (default), retained, heap-peak (the heap), growth, peak (RSS) or time",
    )
    common.add_measuring(b)
    common.add_json(b)
    common.add_environments(b)
    b.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from tfbench.sweep import bisect
    from tfbench.targets import FootprintTarget

    if args.metric not in figures.BISECTED:
        known = ", ".join(figures.BISECTED)
        raise common.BadInput(f"unknown metric {args.metric!r}; choose from {known}")
    target = common.target(args.target, args.param)
    if args.metric == "time" and isinstance(target, FootprintTarget):
        raise common.BadInput("the footprint is no step: it has no time a call to bisect")
    if args.nightlies:
        return nightlies(args, target)
    versions = common.release_range(args.range)
    found = bisect(common.runner(args, target), versions, args.metric)
    common.checked_records(found.readings)
    print(json.dumps(found.to_json(), indent=2) if args.json else output.bisection(found))
    return 0 if found.changes else 1


def nightlies(args: argparse.Namespace, target: Target) -> int:
    """The nightly bisection: printed, and with --json its kept form."""
    from tfbench.nightly import run

    versions = common.release_range(args.range or common.tracked()[-2:])
    old, new = versions[0], versions[-1]
    data = run.bisect_between(
        target, common.measuring(args), old, new, args.metric, args.env_dir, common.progress
    )
    print(json.dumps(data, indent=2) if args.json else output.nightly(data))
    return 0 if data["kind"] == "step" else 1
