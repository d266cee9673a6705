"""`tfbench upstream ROW|TARGET`: a report TensorFlow's maintainers can act on, in
results/upstream/<machine>/<slug>/: the nightly bisection (bisect.json, kept), issue.md,
repro.py and plot.png. `tfbench upstream tensorflow#N`: the comment a maintainer could post
on a reported leak the suite holds (tfbench.scenarios.reported), from the history's answers,
in results/upstream/<machine>/tensorflow-N/comment.md."""

from __future__ import annotations

import argparse
import ast
import re
from pathlib import Path
from typing import TYPE_CHECKING

from tfbench import figures, naming
from tfbench.cli import common, output
from tfbench.cli.common import BadInput, Subcommands

if TYPE_CHECKING:
    from tfbench.targets import Target

# A row's benchmark method -> the figure bisected (tfbench.figures: those a single
# measurement reads; the table's order is the order a gate's worse rows are taken in)
METRIC_OF = {f.method: f.name for f in figures.FIGURES if f.bisect}
ROW = re.compile(r"^(?P<bench>[\w.]+)\((?P<params>.*)\)$")
REPORT = re.compile(r"^tensorflow#(?P<number>\d+)$")


def add(sub: Subcommands) -> None:
    u = sub.add_parser(
        "upstream",
        help="bisect a change over tf-nightly builds and write the issue to file with "
        "TensorFlow (issue.md, repro.py, plot.png)",
    )
    u.add_argument(
        "target",
        help="a gate or report row as asv prints it (module.ClassCosts.track_x(params)), a "
        "scenario id, path/to/file.py::function, `gate`: the kept gate run's worse rows, or "
        "tensorflow#N: the comment on a reported leak the suite answers",
    )
    u.add_argument("--top", type=int, default=2, help="with `gate`: at most this many rows")
    u.add_argument("--param", action="append", default=[], metavar="KEY=VALUE")
    u.add_argument("range", nargs="*", metavar="OLD NEW", help="default: the newest two")
    u.add_argument("--metric", help="for a scenario or function: retained (default), ...")
    u.add_argument("--machine", help="asv machine name (default: this host's)")
    u.add_argument("--again", action="store_true", help="bisect again, not the kept run")
    common.add_measuring(u)
    common.add_environments(u)
    common.add_config(u)
    u.set_defaults(run=run)


def row_target(text: str, config: Path) -> tuple[Target, str] | None:
    """The target and metric of a row as asv prints it, from the suite's benchmarks.json;
    None when the text is no row."""
    from asv.benchmarks import Benchmarks

    from tfbench.history.asvconf import load_config
    from tfbench.publish import families
    from tfbench.targets import FootprintTarget, ScenarioTarget

    match = ROW.match(text)
    if not match or "." not in match["bench"]:
        return None
    bench, method = match["bench"].rsplit(".", 1)
    if method not in METRIC_OF:
        raise BadInput(f"{text}: a row of {', '.join(METRIC_OF)} is needed, not {method}")
    combo = tuple(v.strip() for v in _split(match["params"]))
    if figures.BY_METHOD[method].kind == figures.FOOTPRINT:  # TensorFlow's, on a device
        device = ast.literal_eval(combo[0]) if combo else "CPU"
        if device != "CPU":
            raise BadInput(f"{text}: only the CPU's footprint is bisected (tf-nightly)")
        return FootprintTarget({"device": device}), METRIC_OF[method]
    benchmarks = dict(Benchmarks.load(load_config(config)))
    name = naming.step_class(bench)
    timed = benchmarks.get(f"{name}.time_step")
    if timed is None:
        raise BadInput(f"{text}: no benchmark {name} in the suite's results")
    family = families.Family(name, timed["param_names"], timed["params"])
    found = families.scenario_of(family, combo)
    if found is None:
        raise BadInput(f"{text}: no CPU scenario measures this point")
    scenario, params = found
    return ScenarioTarget(scenario, params), METRIC_OF[method]


def _split(params: str) -> list[str]:
    """asv's params text ('a', 100, 'CPU') into each value's repr."""
    if not params.strip():
        return []
    values = ast.literal_eval(f"({params},)")
    return [repr(v) for v in values]


def run(args: argparse.Namespace) -> int:
    from asv.machine import Machine

    config = common.config(args)
    machine = common.machine(args.machine or Machine.get_unique_machine_name())
    reported = REPORT.match(args.target)
    if reported:
        return comment(int(reported["number"]), machine, config)
    versions = common.release_range(args.range or common.tracked()[-2:])
    if args.target == "gate":
        chosen = gate_rows(config, machine, (f"v{versions[0]}", f"v{versions[-1]}"), args.top)
        codes = [report(args, t, m, versions, machine, config, row) for t, m, row in chosen]
        return 0 if codes and all(c == 0 for c in codes) else 1
    found = row_target(args.target, config)
    target, metric = found or (common.target(args.target, args.param), args.metric or "retained")
    if metric not in figures.BISECTED:
        raise BadInput(f"unknown metric {metric!r}; choose from {', '.join(figures.BISECTED)}")
    return report(args, target, metric, versions, machine, config, args.target if found else None)


def comment(number: int, machine: str, config: Path) -> int:
    """The comment on reported leak `number`, from the machine's history, written and
    printed."""
    from tfbench import whole
    from tfbench.publish import families, reported, site

    found = {r.number: r for r in reported.REPORTS}
    if number not in found:
        known = ", ".join(f"tensorflow#{n}" for n in sorted(found))
        raise BadInput(f"tensorflow#{number} is no report the suite holds; it holds {known}")
    data = site.read(config)
    history = data.machines.get(machine)
    if history is None or not history.releases:
        raise BadInput(f"no history on machine {machine} to answer tensorflow#{number} from")
    by_name = {f.name: f for f in families.families(data.benchmarks)}
    (answers,) = [a for a in reported.answered(by_name, history) if a.report.number == number]
    if not any(s.newest() for s in answers.steps):
        raise BadInput(f"tensorflow#{number} is not read on machine {machine} yet")
    text = reported.comment(answers, history.releases, machine)
    path = config.parent / "results" / "upstream" / machine / f"tensorflow-{number}" / "comment.md"
    whole.write(path, text)
    print(text, end="")
    print(f"written: {path}")
    return 0


def gate_rows(
    config: Path, machine: str, pair: tuple[str, str], top: int
) -> list[tuple[Target, str, str]]:
    """The kept gate run's worse rows a nightly bisection can read (gate.kept.worse_rows's
    order), those of points a target measures, at most `top`: (target, metric, the row)."""
    from tfbench.gate import kept

    run = kept.read(config.parent / "results", machine, pair)
    if run is None:
        raise BadInput(f"no kept gate run of {pair[0]} {pair[1]} on {machine}")
    chosen = []
    for row in kept.worse_rows(run):
        params = ", ".join(repr(v) for v in row["params"].values())
        name = f"{row['benchmark']}({params})"
        try:
            found = row_target(name, config)
        except BadInput:
            continue  # no CPU scenario measures it
        if found is not None:
            chosen.append((*found, name))
    return chosen[:top]


def report(
    args: argparse.Namespace,
    target: Target,
    metric: str,
    versions: list[str],
    machine: str,
    config: Path,
    row: str | None = None,
) -> int:
    """The report to file upstream (tfbench.nightly.run.file_upstream), printed; a time
    `row`'s point as each CPU's kept gate read it, in its issue."""
    from tfbench.nightly import repro, upstream
    from tfbench.nightly import run as nightly
    from tfbench.publish import by_cpu

    limits = common.measuring(args)
    try:  # before hours of bisecting: the step must be one a reproducer can hold
        repro.source(target, limits.iterations or 1, limits.warmup or 1)
    except repro.NotInlined as e:
        raise BadInput(f"no reproducer of {e}") from None
    folder = config.parent / "results" / "upstream" / machine / upstream.slug(target, metric)
    runner = common.runner(args, target)
    pair = (f"v{versions[0]}", f"v{versions[-1]}")
    elsewhere = (
        by_cpu.point(config.parent / "results", pair, row, []) if row and metric == "time" else []
    )
    data, written = nightly.file_upstream(
        target,
        metric,
        versions[0],
        versions[-1],
        folder,
        runner,
        args.again,
        common.progress,
        elsewhere,
    )
    print(output.nightly(data))
    for what, path in written.items():
        print(f"{what}: {path}")
    print(f"kept: {folder / 'bisect.json'}")
    return 0 if data["kind"] == "step" else 1
