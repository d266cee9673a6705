"""`tfbench run`: the suite with asv on this machine, CPU, for this interpreter's CPython
and the newest tracked release that has a wheel for it (README command 1)."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from tfbench.cli import common
from tfbench.cli.common import BadInput, Subcommands

THIS = "{}.{}".format(*sys.version_info[:2])
# One process a probe point: a third of the run's probes, and within the gate's floors of
# the history's median of three at every point of a release (docs/profile.md)
FIRST_LOOK = 1


def add(sub: Subcommands) -> None:
    r = sub.add_parser(
        "run",
        help="run the suite with asv: this machine, CPU, the newest tracked release this "
        "Python has a TensorFlow wheel for",
    )
    add_arguments(r)
    r.set_defaults(run=run)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """What says which run: `tfbench run`'s and `tfbench profile release`'s."""
    parser.add_argument(
        "range", nargs="?", help="asv's revisions (default: the newest such release, vX^!)"
    )
    parser.add_argument("--python", default=THIS, metavar="X.Y", help=f"default: this one, {THIS}")
    parser.add_argument("--machine", help="asv machine name (default: this host's)")
    parser.add_argument(
        "--repeats",
        type=int,
        default=FIRST_LOOK,
        choices=range(1, 10),
        metavar="N",
        help=f"fresh processes each probe point is read in (default {FIRST_LOOK}: a first "
        "look; the history's runs read three, and each point's spread with them)",
    )
    parser.add_argument(
        "--wait",
        action="store_true",
        help="where another run is writing the same results folder, wait for it to end "
        "(default: say so and exit 2)",
    )
    common.add_config(parser)


def runnable(python: str, tracked: list[str], supports) -> list[str]:
    """The tracked releases that have a lock for CPython `python`, oldest first."""
    return [v for v in tracked if supports(v, python)]


def refusal(python: str, tracked: list[str], supports) -> str:
    """One line: this Python runs no tracked release; which Pythons would, and how to get one."""
    from tfbench.history.pythons import CANDIDATES

    spans, best = [], None
    for other in CANDIDATES:
        found = runnable(other, tracked, supports)
        if found:
            spans.append(f"{other} ({found[0]}-{found[-1]})" if len(found) > 1 else other)
            best = other if found[-1] == tracked[-1] else best or other
    get = f"`uv python install {best}`, " if best else ""
    return (
        f"Python {python} runs no tracked TensorFlow release; Pythons that do: "
        f"{', '.join(spans) or 'none locked'}. Get one ({get}pyenv or your system's "
        "package), make .venv with it, and run this again"
    )


class Planned(NamedTuple):
    """README command 1's asv run: its command and environment, the revisions it measures
    and the folder its results land in."""

    command: list[str]
    env: dict[str, str]
    revisions: str
    machine: str
    results: Path
    kept: Path  # the copies of asv's files while it writes them, and the run's lock


def planned(args: argparse.Namespace) -> Planned:
    """The asv run `args` ask for, its machine record made; BadInput where it cannot run."""
    from asv.machine import Machine

    from tfbench import probes
    from tfbench.gate import asvruns
    from tfbench.history import envs, releases

    config = common.config(args)
    tracked = common.tracked()
    found = runnable(args.python, tracked, releases.supports)
    if not found:
        raise BadInput(refusal(args.python, tracked, releases.supports))
    try:
        interpreter = Path(envs.interpreter(args.python))
    except envs.EnvError as e:
        raise BadInput(str(e)) from None
    revisions = args.range or f"v{found[-1]}^!"
    machine = common.machine(args.machine or Machine.get_unique_machine_name())
    # asv finds pythonX.Y on PATH: the interpreter's own directory first; the machine names
    # the folder of the run's probes and packages records
    path = f"{interpreter.parent}{os.pathsep}{os.environ.get('PATH', '')}"
    env = dict(os.environ, PATH=path, TFBENCH_MACHINE=machine)
    env[probes.REPEATS_VAR] = str(args.repeats)
    # `asv machine --yes --machine NAME` would overwrite NAME's record with the name alone
    try:
        asvruns.ensure_machine(machine, common.results_dir(config))
    except asvruns.OtherCpu as e:
        raise BadInput(str(e)) from None
    common.progress(f"asv run {revisions} on Python {args.python} ({interpreter})")
    results = common.results_dir(config)
    # each result saved as it ends; a full disk or a folder it may not write ends it in one line
    command = [sys.executable, "-m", "tfbench.history.resumable", str(results), "run"]
    command += ["--config", str(config), "--machine", machine, f"--python={args.python}"]
    command.append(revisions)
    kept = config.parent / ".asv" / "results-kept"
    return Planned(command, env, revisions, machine, results / machine, kept)


@contextlib.contextmanager
def guarded(plan: Planned, wait: bool) -> Iterator[None]:
    """One run at a time on the results folder, and asv's files whole however the run ends:
    a file a killed run cut is put back (or moved aside) by the next one."""
    from tfbench import whole
    from tfbench.escape import plain

    with contextlib.ExitStack() as stack:
        try:
            stack.enter_context(whole.writing(plan.results.parent, wait))
        except whole.Busy as e:
            raise BadInput(
                f"another run is writing {plan.results.parent} ({plain(str(e))}): wait for "
                "it to end, or run this with --wait"
            ) from None
        results = whole.Results(
            plan.results.parent, plan.machine, plan.kept / plan.machine, common.progress
        )
        stack.enter_context(results.kept())
        # a folder it may not write is said before asv starts, not after its hour
        packages = plan.results.parent / "packages" / plan.machine
        for folder in [plan.results.parent, *results.folders, packages]:
            whole.writable(folder)
        yield


def run(args: argparse.Namespace) -> int:
    from tfbench import faults
    from tfbench.measure import parents

    plan = planned(args)
    with guarded(plan, args.wait):
        before = stamps(plan.results)
        with parents.serving(plan.command, plan.env) as asv:  # an interrupt: one line, 130
            code = asv.wait()
    if code == faults.EXIT_IO:  # said in one line, where it happened
        raise faults.Said(code)
    print(closing(written(plan.results, before), plan.machine, args.repeats), flush=True)
    return code


def stamps(folder: Path) -> dict[Path, int]:
    """When each results file of a machine's folder was last written."""
    return {p: p.stat().st_mtime_ns for p in folder.glob("*.json") if p.name != "machine.json"}


def written(folder: Path, before: dict[Path, int]) -> list[Path]:
    """The results files written since `before` (stamps)."""
    return [p for p, stamp in stamps(folder).items() if before.get(p) != stamp]


def closing(written: list[Path], machine: str, repeats: int = FIRST_LOOK) -> str:
    """What the run left and what to run next, in two lines."""
    from tfbench.publish.results import checked_result

    counts = {"measured": 0, "skipped": 0, "failed": 0}
    for path in written:
        try:
            result = checked_result(path, machine)
        except (ValueError, OSError) as e:
            return f"tfbench: {path}: unreadable ({e})"
        for key in result.get_all_result_keys():
            for value in result.get_result_value(key, result.get_result_params(key)):
                way = "failed" if value is None else "skipped" if value != value else "measured"
                counts[way] += 1
    if not written:
        return f"tfbench: no results file written in {machine}/"
    where = ", ".join(os.path.relpath(p) for p in written)
    told = ", ".join(f"{n} {way}" for way, n in counts.items())
    return (
        f"tfbench: {where}: {told} point(s); each probe point read in {repeats} "
        f"process{'es' if repeats > 1 else ''}\n"
        "next: `tfbench report` (the release report) or `tfbench publish` (the site and the "
        "report, in .asv/html; `asv preview` serves it)"
    )
