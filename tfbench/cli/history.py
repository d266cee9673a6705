"""`tfbench history`: what each machine's history holds at the current benchmark versions,
and `tfbench history measure`: what one lacks, measured as the history is read, in one
resumable run (a kill or a reboot loses at most the readings in flight)."""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from collections.abc import Set as AbstractSet
from pathlib import Path

from tfbench.cli import common
from tfbench.cli.common import BadInput, Subcommands

HISTORY_REPEATS = 3  # fresh processes a probe point, as the history reads it


def add(sub: Subcommands) -> None:
    from tfbench.publish.coverage import REFERENCE

    h = sub.add_parser(
        "history",
        help="what each machine's history holds at the current benchmark versions; "
        "`history measure`: what one lacks, in one resumable run",
    )
    h.add_argument("action", nargs="?", choices=["status", "measure"], default="status")
    h.add_argument("--machine", default=REFERENCE, help=f"default: the reference, {REFERENCE}")
    h.add_argument("--family", action="append", metavar="FAMILY", help="only these families")
    h.add_argument("--release", action="append", metavar="VERSION", help="only these releases")
    h.add_argument("--python", action="append", metavar="X.Y", help="only these Pythons")
    h.add_argument(
        "--dry-run", action="store_true", help="measure: say what it would measure, and stop"
    )
    common.add_config(h)
    h.set_defaults(run=run)


def read(config: Path):
    from tfbench.history import releases
    from tfbench.publish import coverage

    return coverage.read(
        common.results_dir(config),
        common.history_repo(config),
        releases.tracked_versions(),
        releases.supports,
    )


def run(args: argparse.Namespace) -> int:
    config = common.config(args).resolve()  # asv's processes run elsewhere
    machine = common.machine(args.machine)
    history = read(config)
    if args.action == "status":
        print(status(history, machine))
        return 0 if not history.machine(machine).lacking() else 1
    return measure(args, config, machine, history)


def paced(seconds: float, untimed: AbstractSet[str] = frozenset()) -> str:
    """An estimate in words, or that there is none; `untimed`: setup_caches it leaves out."""
    if not seconds:
        return "time unknown (no earlier run timed these)"
    if untimed:
        return f"more than {hours(seconds)}: {len(untimed)} setup_cache(s) never timed"
    return f"{hours(seconds)} by earlier runs' pace"


def hours(seconds: float) -> str:
    if seconds < 90:
        return f"about {seconds:.0f} s"
    return f"about {seconds / 3600:.1f} h" if seconds >= 5400 else f"about {seconds / 60:.0f} min"


def status(history, reference: str) -> str:
    """The table of machines x families: the release x Python files that hold a family whole
    at its current version; then what the reference lacks and the command that reads it."""
    from tfbench.publish import coverage

    families = sorted({coverage.family(b) for b in history.suite.versions})
    cells = history.cells
    spans = coverage.spans(cells)
    lines = [
        f"The history: {len(cells)} release x Python files ({spans}), "
        f"{len(history.suite.versions)} benchmarks at their current versions.",
        "Files holding each family whole at its current version, per machine:",
        "",
    ]
    machines = history.machines
    if not any(m.machine == reference for m in machines):
        machines = [history.machine(reference), *machines]
    width = max(len(m.machine) for m in machines) + 2
    lines.append("machine".ljust(width) + "".join(f"{f:>11}" for f in families) + "  CPU")
    for held in sorted(machines, key=lambda m: (m.machine != reference, m.machine)):
        row = "".join(
            f"{f'{held.held(f, history.suite.versions)}/{len(cells)}':>11}" for f in families
        )
        mark = " (reference)" if held.machine == reference else ""
        lines.append(f"{held.machine.ljust(width)}{row}  {cpu_said(held.cpu)}{mark}")
    lacking = history.machine(reference).lacking()
    if lacking:
        left = sum(history.suite.estimate(names, history.durations) for names in lacking.values())
        untimed = history.suite.untimed(set().union(*lacking.values()), history.durations)
        families_left = history.machine(reference).families_lacking()
        lines += [
            "",
            f"{reference} lacks {sum(map(len, lacking.values()))} benchmark results in "
            f"{len(lacking)} files (families {', '.join(families_left)}), "
            f"{paced(left, untimed)}: "
            f"`tfbench history measure --machine {reference}`",
        ]
    else:
        lines += ["", f"{reference} holds the whole history at the current versions."]
    return "\n".join(lines)


def cpu_said(text: str | None) -> str:
    from tfbench import cpu

    found = cpu.id_in(text)
    return found or f"not recorded ({text or 'no record'})"


def planned(args: argparse.Namespace, machine: str, history) -> dict:
    """cell -> the benchmarks to read there, in the order they are read: the history's
    Python first, newest release first (the report's first answers first)."""
    from tfbench.history.pythons import DEFAULT
    from tfbench.publish import coverage

    wanted = set(args.family or [])
    unknown = wanted - {coverage.family(b) for b in history.suite.versions}
    if unknown:
        raise BadInput(f"no family {', '.join(sorted(unknown))} in results/benchmarks.json")
    releases = {f"v{v}" for v in common.releases(",".join(args.release))} if args.release else None
    todo = {
        cell: {b for b in names if not wanted or coverage.family(b) in wanted}
        for cell, names in history.machine(machine).lacking().items()
        if (releases is None or cell.tag in releases)
        and (not args.python or cell.python in args.python)
    }
    order = sorted(todo, key=lambda c: (c.python != DEFAULT, -history.cells.index(c)))
    return {cell: todo[cell] for cell in order if todo[cell]}


def measure(args: argparse.Namespace, config: Path, machine: str, history) -> int:
    """Each file the machine lacks benchmarks in, one asv run a file (its --bench those
    benchmarks); each benchmark's result saved as it ends and each Costs grid's readings
    journaled, so that the next call goes on where a killed one stopped."""
    from tfbench import whole
    from tfbench.gate import asvruns

    todo = planned(args, machine, history)
    if not todo:
        print(f"tfbench: {machine} holds what was asked of the history at the current versions")
        return 0
    estimates = {
        cell: history.suite.estimate(names, history.durations) for cell, names in todo.items()
    }
    untimed = {
        cell: history.suite.untimed(names, history.durations) for cell, names in todo.items()
    }
    common.progress(
        f"{machine}: {sum(map(len, todo.values()))} benchmark results in {len(todo)} files to "
        f"read, {paced(sum(estimates.values()), set().union(*untimed.values()))}"
    )
    if args.dry_run:
        for cell, names in todo.items():
            print(f"{cell}: {len(names)} benchmarks, {paced(estimates[cell], untimed[cell])}")
        return 0
    results = common.results_dir(config)
    journal = config.parent / ".asv" / "journal" / machine
    try:
        asvruns.ensure_machine(machine, results)
    except asvruns.OtherCpu as e:
        raise BadInput(str(e)) from None
    with whole.writing(results):
        whole.Results(results, machine, journal / "kept", common.progress).heal()
        failed = read_all(config, machine, todo, estimates, journal)
    if failed:
        print(
            f"tfbench: {machine}: {len(failed)} files still lack results (failures are read "
            f"again by the next call): {', '.join(map(str, failed))}"
        )
        return common.EXIT_FAILED
    shutil.rmtree(journal, ignore_errors=True)  # every grid's readings are in the results
    print(
        f"tfbench: {machine} holds what was asked of the history at the current versions; "
        "next: `tfbench report`, `tfbench publish`"
    )
    return 0


def read_all(config: Path, machine: str, todo: dict, estimates: dict, journal: Path) -> list:
    """Each file in turn, with the time left at the run's pace; the files still lacking."""
    pace, spent, failed = 1.0, 0.0, []
    planned = list(estimates.values())
    for k, (cell, names) in enumerate(todo.items(), 1):
        left = sum(planned[k - 1 :]) * pace
        kept = journaled(journal, config, cell)
        common.progress(
            f"[{k}/{len(todo)}] {cell}: {len(names)} benchmarks"
            + (f", {kept} readings kept by a stopped run" if kept else "")
            + (f"; {hours(left)} left" if left else "")
        )
        started = time.monotonic()
        code = read_cell(config, machine, cell, names, journal)
        took = time.monotonic() - started
        spent += took
        pace = spent / (sum(planned[:k]) or spent)
        after = read(config).machine(machine).missing.get(cell, set()) & names
        if after:
            failed.append(cell)
        common.progress(
            f"[{k}/{len(todo)}] {cell}: {len(names) - len(after)} read in {hours(took)}"
            + (f", {len(after)} not (asv exit {code})" if after else "")
        )
    return failed


def journaled(journal: Path, config: Path, cell) -> int:
    """Readings a stopped run kept for a cell's grids."""
    from tfbench.history import journal as journals
    from tfbench.history import repo

    commit = repo.history_tags(common.history_repo(config)).get(cell.tag, "")
    folder = journal / f"{commit}-virtualenv-py{cell.python}"
    return sum(len(journals.readings(p)) for p in folder.glob("*.json"))


def read_cell(config: Path, machine: str, cell, names: set[str], journal: Path) -> int:
    """One release on one Python: asv run of `names` (probe points read HISTORY_REPEATS
    times), each result saved as it ends (tfbench.history.resumable); asv's exit code."""
    from tfbench import probes
    from tfbench.history import envs
    from tfbench.history import journal as journals
    from tfbench.measure import parents
    from tfbench.publish import coverage

    try:
        interpreter = Path(envs.interpreter(cell.python))
    except envs.EnvError as e:
        raise BadInput(str(e)) from None
    pattern = coverage.bench_pattern(names)
    env = dict(
        os.environ,
        PATH=f"{interpreter.parent}{os.pathsep}{os.environ.get('PATH', '')}",
        TFBENCH_MACHINE=machine,
        **{
            probes.REPEATS_VAR: str(HISTORY_REPEATS),
            probes.SELECTION: pattern,
            journals.VAR: str(journal),
        },
    )
    results = common.results_dir(config)
    command = [sys.executable, "-m", "tfbench.history.resumable", str(results), "run"]
    command += ["--config", str(config), "--machine", machine, "--record-samples"]
    command += [f"--python={cell.python}", "--bench", pattern, f"{cell.tag}^!"]
    with parents.serving(command, env) as asv:
        return asv.wait()
