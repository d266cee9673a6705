"""`tfbench bisect`: the first release where a step's behaviour changes."""

from __future__ import annotations

import argparse
import json

from tfbench.cli import common, measure, output
from tfbench.cli.common import Subcommands


def add(sub: Subcommands) -> None:
    b = sub.add_parser(
        "bisect",
        help="find the first release where a step's behaviour changes (leak, growth, peak "
        "or time)",
    )
    common.add_target(b)
    b.add_argument("range", nargs="*", metavar="OLD NEW", help="tracked releases (default: all)")
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
    from tfbench.sweep import METRICS, bisect

    if args.metric not in METRICS:
        raise common.BadInput(f"unknown metric {args.metric!r}; choose from {', '.join(METRICS)}")
    versions = common.release_range(args.range)
    target = common.target(args.target, args.param)
    found = bisect(measure.runner(args, target), versions, args.metric)
    common.checked_records(found.readings)
    if args.json:
        keys = ("metric", "last_before", "first_after", "readings")
        print(json.dumps({k: getattr(found, k) for k in keys}, indent=2))
    else:
        print(output.bisection(found))
    return 0 if found.first_after else 1
