"""`tfbench explain`: why a step grows: Python objects, TensorFlow's state or native memory.

A command of its own, not a `measure` option: the explaining run traces the step (gc,
tracemalloc, memray), which changes its time and memory, so it is a run of its own with
figures of its own, and its output is another shape than a measurement's.
`--leaking` explains every point the newest release's results call a leak, in that
release's environment, and keeps the answers for the report.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from tfbench.cli import common, output
from tfbench.cli.common import Subcommands


def add(sub: Subcommands) -> None:
    e = sub.add_parser(
        "explain",
        help="say why a step grows: the Python objects and allocation sites, TensorFlow's "
        "state (graph ops, traces, Sessions) or native memory that holds its growth",
    )
    e.add_argument(
        "target", nargs="?", help="scenario id or path/to/file.py::function (or --leaking)"
    )
    e.add_argument("--param", action="append", default=[], metavar="KEY=VALUE")
    common.add_measuring(e)
    common.add_json(e)
    e.add_argument(
        "--releases", help="all, or a comma list: explain on each tracked release, in its own"
    )
    e.add_argument(
        "--leaking",
        action="store_true",
        help="explain every point the newest release's results call a leak, in its "
        "environment; kept in RESULTS/explain/MACHINE/TAG.json for the report",
    )
    e.add_argument("--machine", help="with --leaking: whose results (default: the only one)")
    common.add_config(e)
    common.add_environments(e)
    e.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from tfbench.explain import explain_isolated

    if args.leaking:
        return leaking(args)
    if not args.target:
        raise common.BadInput("name a scenario or path/to/file.py::function, or --leaking")
    target = common.step(args.target, args.param)
    if args.releases:
        from tfbench.sweep import measure_releases

        versions = common.releases(args.releases)
        runner = common.runner(args, target)
        runner.measure = explain_isolated
        records = common.checked_records(measure_releases(runner, versions))
        print(json.dumps(records, indent=2) if args.json else output.explanations(records))
        return 0 if all(r["status"] == "ok" for r in records) else 1
    there = common.elsewhere(args, target)
    if there:
        there[0].measure = explain_isolated
    found = there[0](there[1]) if there else explain_isolated(target, common.measuring(args))
    (found,) = common.checked_records([found])
    print(json.dumps(found, indent=2) if args.json else output.explanation(found))
    return 0 if found["status"] == "ok" else 1


def leaking(args: argparse.Namespace) -> int:
    """Every leaking point of the newest release on one machine, explained in its env."""
    from tfbench.explain import explain_isolated
    from tfbench.publish import explained, site
    from tfbench.targets import ScenarioTarget

    if args.target:
        raise common.BadInput("--leaking explains the results' leaking points: no target")
    data = site.read(common.config(args))
    names = sorted(data.machines)
    name = args.machine or (names[0] if len(names) == 1 else None)
    if name not in data.machines:
        raise common.BadInput(f"--machine: choose from {', '.join(names) or 'none'}")
    machine = data.machines[name]
    tag = machine.releases[-1]
    points = explained.leaking(data, machine, tag)
    found = {}
    for k, (point, scenario, params) in enumerate(points, 1):
        common.progress(f"[{k}/{len(points)}] {point}")
        runner = common.runner(args, ScenarioTarget(scenario, params))
        runner.measure = explain_isolated
        found[point] = runner(tag.removeprefix("v"))
        common.progress(f"  {found[point].get('conclusion') or found[point]['status']}")
    kept = explained.write(
        data.results_dir or Path(args.config).parent / "results", name, tag, found
    )
    print(f"{kept}: {len(found)} leaking point(s) of {tag} explained")
    return 0 if all(r["status"] == "ok" for r in found.values()) else 1
