"""`tfbench measure`: a scenario or a user's file::function, here or on tracked releases."""

from __future__ import annotations

import argparse
import json

from tfbench.cli import common, output
from tfbench.cli.common import Subcommands


def add(sub: Subcommands) -> None:
    m = sub.add_parser(
        "measure", help="measure a scenario or path/to/file.py::function in a fresh process"
    )
    common.add_target(m)
    common.add_measuring(m)
    common.add_json(m)
    m.add_argument(
        "--releases",
        help="all, or a comma list (2.12.1,2.21.0): measure on each "
        "tracked release, in its own environment (made from its lock, cached)",
    )
    common.add_environments(m)
    m.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from tfbench.targets import measure

    target = common.target(args.target, args.param)
    if args.releases:
        from tfbench.sweep import measure_releases

        versions = common.releases(args.releases)
        records = common.checked_records(measure_releases(common.runner(args, target), versions))
        print(json.dumps(records, indent=2) if args.json else output.releases(records))
        return 0 if all(r["status"] == "ok" for r in records) else 1
    there = common.elsewhere(args, target)
    found = there[0](there[1]) if there else measure(target, common.measuring(args))
    (result,) = common.checked_records([found])
    print(json.dumps(result, indent=2) if args.json else output.result(result))
    return 0 if result["status"] == "ok" else 1
