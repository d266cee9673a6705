"""`tfbench explain`: why a step grows: Python objects, TensorFlow's state or native memory.

A command of its own, not a `measure` option: the explaining run traces the step (gc,
tracemalloc, memray), which changes its time and memory, so it is a run of its own with
figures of its own, and its output is another shape than a measurement's.
"""

from __future__ import annotations

import argparse
import json

from tfbench.cli import common, measure, output


def add(sub) -> None:
    e = sub.add_parser(
        "explain",
        help="say why a step grows: the Python objects and allocation sites, TensorFlow's "
        "state (graph ops, traces, Sessions) or native memory that holds its growth",
    )
    common.add_target(e)
    common.add_measuring(e)
    common.add_json(e)
    e.add_argument(
        "--releases", help="all, or a comma list: explain on each tracked release, in its own"
    )
    common.add_environments(e)
    e.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from tfbench.explain import explain_isolated

    target = common.target(args.target, args.param)
    if args.releases:
        from tfbench.sweep import measure_releases

        versions = common.releases(args.releases)
        runner = measure.runner(args, target)
        runner.measure = explain_isolated
        records = common.checked_records(measure_releases(runner, versions))
        print(json.dumps(records, indent=2) if args.json else output.explanations(records))
        return 0 if all(r["status"] == "ok" for r in records) else 1
    (found,) = common.checked_records([explain_isolated(target, **common.measuring(args))])
    print(json.dumps(found, indent=2) if args.json else output.explanation(found))
    return 0 if found["status"] == "ok" else 1
