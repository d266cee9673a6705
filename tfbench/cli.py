"""The `tfbench` command: list scenarios, measure one (or a user's function), manage releases."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path
from typing import Any

from tfbench.measure.record import Record, measured, stopped_in_warmup
from tfbench.measure.steps import MAX_ITERATIONS
from tfbench.measure.verdict import MIN_READINGS
from tfbench.units import MiB, format_bytes

EXIT_BAD_INPUT = 2


class BadInput(Exception):
    pass


def _list(_: argparse.Namespace) -> int:
    from tfbench.scenarios import CATALOG

    width = max(map(len, CATALOG))
    for sid, scenario in sorted(CATALOG.items()):
        params = "  ".join(f"{k}={'|'.join(map(str, v))}" for k, v in scenario.params.items())
        print(f"{sid:<{width}}  {scenario.description}")
        if params:
            print(f"{'':<{width}}    {params}")
    return 0


def _parse_params(pairs: list[str]) -> dict[str, str]:
    params = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise BadInput(f"--param takes KEY=VALUE, got {pair!r}")
        params[key] = value
    return params


def _target(text: str, params: dict[str, str]) -> dict[str, Any]:
    if "::" in text:
        file, _, function = text.rpartition("::")
        if not file:
            raise BadInput(f"no file before '::{function}' (use path/to/file.py::function)")
        if Path(file).is_dir():
            raise BadInput(f"{file} is a directory (use path/to/file.py::function)")
        if not Path(file).is_file():
            raise BadInput(f"no such file: {file}")
        if not function.isidentifier():
            raise BadInput(f"{function!r} is not a function name (use path/to/file.py::function)")
        if params:
            raise BadInput("--param applies to catalog scenarios, not to file::function")
        return {"file": str(Path(file).resolve()), "function": function}
    from tfbench import scenarios

    try:
        scenarios.get(text).bind(params)
    except scenarios.ParamError as e:
        hint = ""
        if text.endswith(".py") or Path(text).exists():
            hint = f"; to measure a function of your own file, name it: {text}::function"
        raise BadInput(f"{e}{hint}") from None
    return {"scenario": text, "params": params}


def _options(args: argparse.Namespace) -> dict[str, Any]:
    """The measuring options shared by measure and bisect, checked."""
    for name in ("iterations", "warmup", "budget_mib", "timeout"):
        value, least = getattr(args, name), 0 if name == "warmup" else 1
        if value is not None and value < least:
            raise BadInput(f"--{name.replace('_', '-')} must be at least {least}, got {value}")
    if (args.iterations or 0) + (args.warmup or 0) > MAX_ITERATIONS:
        raise BadInput(f"--iterations + --warmup must be at most {MAX_ITERATIONS}")
    return {
        "iterations": args.iterations,
        "warmup": args.warmup,
        "budget_bytes": args.budget_mib * MiB if args.budget_mib else None,
        "timeout_s": args.timeout or 600,
    }


def _versions(text: str) -> list[str]:
    """--releases: all, or a comma list of tracked versions (oldest first)."""
    from tfbench.history.releases import tracked_versions

    tracked = tracked_versions()
    if text == "all":
        return tracked
    wanted = [v.strip().removeprefix("v") for v in text.split(",") if v.strip()]
    unknown = [v for v in wanted if v not in tracked]
    if unknown or not wanted:
        raise BadInput(
            f"untracked release {', '.join(unknown) or repr(text)}; "
            f"choose from all, {', '.join(tracked)}"
        )
    return sorted(set(wanted), key=tracked.index)


def _progress(text: str) -> None:
    print(f"tfbench: {text}", file=sys.stderr, flush=True)


def _runner(args: argparse.Namespace, target: dict[str, Any]):
    from tfbench.sweep import Runner

    if args.flavour not in ("cpu", "gpu"):
        raise BadInput(f"--flavour {args.flavour!r}: choose from cpu, gpu")
    return Runner(target, _options(args), args.flavour, args.env_dir, _progress)


def _checked(records: list[Record]) -> list[Record]:
    """The records, unless a child found the input bad (e.g. a missing function): exit 2."""
    bad = next((r for r in records if r["status"] == "bad_input"), None)
    if bad:
        raise BadInput(bad["error"])
    return records


def _measure(args: argparse.Namespace) -> int:
    from tfbench.targets import measure_isolated

    target = _target(args.target, _parse_params(args.param))
    if args.releases:
        from tfbench.sweep import measure_releases

        runner = _runner(args, target)
        records = _checked(measure_releases(runner, _versions(args.releases)))
        print(json.dumps(records, indent=2) if args.json else format_releases(records))
        return 0 if all(r["status"] == "ok" for r in records) else 1
    (result,) = _checked([measure_isolated(target, **_options(args))])
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(format_result(result))
    return 0 if result["status"] == "ok" else 1


def _bisect(args: argparse.Namespace) -> int:
    from tfbench.history.releases import tracked_versions
    from tfbench.sweep import METRICS, bisect

    if args.metric not in METRICS:
        raise BadInput(f"unknown metric {args.metric!r}; choose from {', '.join(METRICS)}")
    tracked = tracked_versions()
    ends = [v.removeprefix("v") for v in args.range] or [tracked[0], tracked[-1]]
    if len(ends) != 2:
        raise BadInput("give the range as OLD NEW (two tracked releases), or nothing for all")
    unknown = [v for v in ends if v not in tracked]
    if unknown:
        raise BadInput(f"untracked release {', '.join(unknown)}; choose from {', '.join(tracked)}")
    old, new = (tracked.index(v) for v in ends)
    if old >= new:
        raise BadInput(
            f"the range {ends[0]} {ends[1]} is empty: OLD must be older than NEW "
            f"(tracked, oldest first: {', '.join(tracked)})"
        )
    target = _target(args.target, _parse_params(args.param))
    found = bisect(_runner(args, target), tracked[old : new + 1], args.metric)
    _checked(found.readings)
    if args.json:
        print(
            json.dumps(
                {
                    "metric": found.metric,
                    "last_before": found.last_before,
                    "first_after": found.first_after,
                    "readings": found.readings,
                },
                indent=2,
            )
        )
    else:
        print(format_bisection(found))
    return 0 if found.first_after else 1


def _envs(args: argparse.Namespace) -> int:
    from tfbench.history import envs

    root = args.env_dir or envs.default_root()
    if args.action == "list":
        listed = envs.listing(root)
        print(f"{root}: {len(listed)} environment(s)")
        for e in listed:
            state = "" if e.ready else "  (unfinished)"
            print(f"  {e.name:<16} {format_bytes(e.bytes_own):>10} of its own{state}")
        return 0
    if not args.names and not args.all:
        raise BadInput("name the environments to remove (see `tfbench envs list`), or --all")
    try:
        gone = envs.remove(root, args.names)
    except ValueError as e:
        raise BadInput(str(e)) from None
    print(f"removed {', '.join(gone) or 'nothing'}")
    return 0


def _bytes(n: float | None) -> str:
    return format_bytes(n, ".2f")


def format_result(r: Record) -> str:
    params = " ".join(f"{k}={v}" for k, v in r.get("params", {}).items())
    lines = [
        f"{r['scenario']}  {params}".rstrip(),
        f"  TensorFlow {r.get('tf_version') or 'not installed'}, device {r['device']}",
    ]
    warmup_only = stopped_in_warmup(r)
    if not measured(r) and not warmup_only:
        lines.append(f"  {r['status']}: {r.get('error') or 'no reason given'}")
        return "\n".join(lines)
    if r["status"] == "over_budget":
        lines.append(f"  STOPPED {r.get('error', '')}; figures cover the iterations run")
    if warmup_only:
        ran = f"0 (stopped in warm-up, after {r['warmup_run']} of {r['warmup']})"
        verdict = "no verdict: stopped before the measured iterations (growth of the warm-up)"
        seconds = "n/a"
    else:
        ran = f"{r['iterations']} after {r['warmup']} warm-up"
        verdict = {True: "LEAK", False: "flat"}.get(
            r["leak"],
            f"no verdict: {r['iterations']} measured iterations, a verdict needs "
            f"at least {MIN_READINGS}",
        )
        seconds = f"{r['seconds_per_iteration'] * 1e3:.3f} ms"
    lines += [
        f"  iterations             {ran}",
        f"  time per iteration     {seconds}",
        f"  peak increase          {_bytes(r['peak_increase_bytes'])}   (method {r['method']})",
        f"  growth per iteration   {_bytes(r['growth_bytes_per_iteration'])}/iteration"
        f"   -> {verdict}",
        f"  allocator peak         {_bytes(r.get('allocator_peak_bytes'))}",
    ]
    return "\n".join(lines)


def _row(r: Record) -> str:
    if not measured(r):
        return f"{r['release']:<8} {r['status']}: {r.get('error') or ''}".rstrip()
    low, high = r["growth_interval"]
    verdict = {True: "LEAK", False: "flat"}.get(r["leak"], "no verdict")
    return (
        f"{r['release']:<8} {r['seconds_per_iteration'] * 1e3:>9.3f} ms  "
        f"{_bytes(r['peak_increase_bytes']):>11}  {_bytes(r['growth_bytes_per_iteration']):>11}"
        f" [{_bytes(low)}, {_bytes(high)}]  {verdict}  {r['status']}"
    )


def format_releases(records: list[Record]) -> str:
    """One row per release: time per iteration, peak increase, growth per iteration with
    its 95% interval, leak verdict, status."""
    head = records[0]
    params = " ".join(f"{k}={v}" for k, v in head.get("params", {}).items())
    lines = [
        f"{head['scenario']}  {params}".rstrip(),
        "release   time/iter   peak incr.   growth/iter [95% interval]  leak  status",
    ]
    return "\n".join(lines + [_row(r) for r in records])


def format_bisection(found) -> str:
    """The releases on each side of the change, and every reading the bisection took."""
    if found.first_after:
        head = (
            f"{found.metric} changes between {found.last_before} and {found.first_after}: "
            f"{found.first_after} is the first release that differs from the oldest"
        )
    else:
        head = f"{found.metric}: no change between the ends of the range"
    order = {r["release"]: r for r in found.readings}
    rows = [_row(order[v]) for v in sorted(order, key=lambda v: tuple(map(int, v.split("."))))]
    return "\n".join([head, "readings (release order):", *rows])


def _releases(args: argparse.Namespace) -> int:
    from tfbench.history import releases, repo

    try:
        versions = releases.tracked_versions()
        tags = repo.update(versions) if args.action == "update" else repo.build_history(versions)
    except (ValueError, FileNotFoundError) as e:
        raise BadInput(str(e)) from None
    for tag, commit in tags.items():
        print(f"{tag}  {commit}")
    return 0


def _publish(args: argparse.Namespace) -> int:
    from tfbench.publish import site

    if not Path(args.config).is_file():
        raise BadInput(f"no asv configuration at {args.config}")
    try:
        html_dir, data = site.publish(args.config, args.report_only)
    except site.PublishError as e:
        print(f"tfbench: {e}", file=sys.stderr)
        return 1
    skipped = f", {len(data.problems)} unreadable results file(s) skipped" if data.problems else ""
    print(f"{html_dir}/index.html: asv's site, with its assets in vendor/ (works offline)")
    print(
        f"{html_dir}/report.html, report.md: the release report "
        f"({len(data.machines)} machine(s){skipped})"
    )
    return 0


def _report(args: argparse.Namespace) -> int:
    from tfbench.publish import markdown, report, site

    if not Path(args.config).is_file():
        raise BadInput(f"no asv configuration at {args.config}")
    print(markdown.render(report.build(site.read(args.config))), end="")
    return 0


def format_gate(rows: list, old: str, new: str) -> str:
    """The rows that changed, worse first, with the evidence of each."""
    if not rows:
        return f"{old} -> {new}: no change beyond the floors"
    out = [f"{old} -> {new}: {len(rows)} change(s)"]
    for r in rows:
        before, after = (
            "none" if v is None else _bytes(v) if "bytes" in r.unit else f"{v:.4g} {r.unit}"
            for v in (r.before, r.after)
        )
        out.append(f"  {r.direction:<6} {r.name} [{r.metric}]: {before} -> {after}")
        out.append(f"         {r.evidence}")
    return "\n".join(out)


def _gate(args: argparse.Namespace) -> int:
    import re

    from asv.machine import Machine
    from asv.util import UserError

    from tfbench.gate import rules, session
    from tfbench.publish.results import MACHINE_NAME

    old, new = (t if t.startswith("v") else f"v{t}" for t in (args.old, args.new))
    if args.bench:
        try:
            re.compile(args.bench)
        except re.error as e:
            raise BadInput(f"--bench {args.bench!r} is no regular expression: {e}") from None
    machine = args.machine or Machine.get_unique_machine_name()
    if not MACHINE_NAME.fullmatch(machine):
        raise BadInput(f"--machine {machine!r}: letters, digits, '_', '.', '-' only")
    if args.rounds < 1:
        raise BadInput(f"--rounds must be at least 1, got {args.rounds}")
    if args.flavour not in ("cpu", "gpu"):
        raise BadInput(f"--flavour {args.flavour!r}: choose from cpu, gpu")
    if args.python and not args.python.is_file():
        raise BadInput(f"--python {args.python}: no such interpreter")
    try:
        session.commits(args.config, [old, new])
    except (ValueError, OSError, UserError) as e:  # unknown tags, a missing configuration
        raise BadInput(str(e)) from None
    work = Path(args.config).resolve().parent / ".asv" / "gate" / f"{old}-{new}"
    shutil.rmtree(work, ignore_errors=True)
    try:
        measured = session.measure(
            args.config, old, new, work, machine, args.bench, args.rounds, args.flavour,
            args.env_dir, args.python, _progress,
        )  # fmt: skip
    except session.NothingSelected as e:
        raise BadInput(str(e)) from None
    except session.GateError as e:
        print(f"tfbench: gate: {e}", file=sys.stderr)
        return 3
    rows = rules.compare(measured.benchmarks, measured.before, measured.after)
    if not args.bench:  # a whole-suite run: the report shows it for this pair
        from tfbench.history.asvconf import load_config
        from tfbench.publish import gate

        results_dir = Path(load_config(args.config).results_dir)
        _progress(f"kept in {gate.keep(results_dir, machine, (old, new), args.rounds, rows)}")
    switch = f"; environment switches {max(measured.switches):.2f} s at most" * bool(
        measured.switches
    )
    _progress(f"{args.rounds} round(s) in {measured.seconds:.0f} s{switch}; runs kept in {work}")
    if args.json:
        print(json.dumps([r.as_json() for r in rows], indent=2))
    else:
        print(format_gate(rows, old, new))
    return 1 if any(r.direction == "worse" for r in rows) else 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tfbench", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="show the scenario catalog").set_defaults(run=_list)
    m = sub.add_parser(
        "measure", help="measure a scenario or path/to/file.py::function in a fresh process"
    )
    m.add_argument("target", help="scenario id (see `tfbench list`) or path/to/file.py::function")
    m.add_argument("--param", action="append", default=[], metavar="KEY=VALUE")
    m.add_argument("--iterations", type=int, help="measured iterations after warm-up")
    m.add_argument("--warmup", type=int, help="iterations before the growth fit starts")
    m.add_argument(
        "--budget-mib",
        type=int,
        help="memory budget: the RSS of the measuring process (TensorFlow's own ~0.5 GiB "
        "included) and of any process its step starts; stopped past it (default: a quarter "
        "of RAM)",
    )
    m.add_argument("--timeout", type=int, help="seconds before the run is killed (default 600)")
    m.add_argument("--json", action="store_true", help="print the result as JSON")
    m.add_argument(
        "--releases",
        help="all, or a comma list (2.12.1,2.21.0): measure on each "
        "tracked release, in its own environment (made from its lock, cached)",
    )
    m.set_defaults(run=_measure)
    b = sub.add_parser(
        "bisect",
        parents=[],
        help="find the first release where a step's "
        "behaviour changes (leak, growth, peak or time)",
    )
    b.add_argument("target", help="scenario id or path/to/file.py::function")
    b.add_argument("range", nargs="*", metavar="OLD NEW", help="tracked releases (default: all)")
    b.add_argument("--metric", default="leak", help="leak (default), growth, peak or time")
    b.add_argument("--param", action="append", default=[], metavar="KEY=VALUE")
    b.add_argument("--iterations", type=int, help="measured iterations after warm-up")
    b.add_argument("--warmup", type=int, help="iterations before the growth fit starts")
    b.add_argument("--budget-mib", type=int, help="memory budget, as for measure")
    b.add_argument("--timeout", type=int, help="seconds before a run is killed (default 600)")
    b.add_argument("--json", action="store_true", help="print the result as JSON")
    b.set_defaults(run=_bisect)
    for command in (m, b):
        command.add_argument("--flavour", default="cpu", help="the lock: cpu (default) or gpu")
        command.add_argument(
            "--env-dir",
            type=Path,
            help="where release environments live "
            "(default: $TFBENCH_ENV_DIR or ~/.cache/tfbench/envs)",
        )
    e = sub.add_parser("envs", help="the cached release environments: list, remove")
    e.add_argument("action", choices=("list", "remove"))
    e.add_argument("names", nargs="*", help="environments to remove, e.g. 2.12.1-cpu")
    e.add_argument("--all", action="store_true", help="remove every environment")
    e.add_argument(
        "--env-dir", type=Path, help="default: $TFBENCH_ENV_DIR or ~/.cache/tfbench/envs"
    )
    e.set_defaults(run=_envs)
    r = sub.add_parser("releases", help="lock tracked TensorFlow releases and build asv's history")
    r.add_argument(
        "action",
        choices=("update", "build"),
        help="update: lock new releases, then build; build: rebuild from the locks",
    )
    r.set_defaults(run=_releases)
    p = sub.add_parser(
        "publish",
        help="asv publish, then vendor its assets (an offline site) "
        "and write the release report into it",
    )
    p.add_argument("--config", default="asv.conf.json")
    p.add_argument(
        "--report-only", action="store_true", help="skip `asv publish` (the site is already built)"
    )
    p.set_defaults(run=_publish)
    g = sub.add_parser(
        "gate",
        help="measure two releases in one session, interleaved, and list what changed "
        "(exit 1 when something got worse)",
    )
    g.add_argument("old", help="the release to compare against, e.g. v2.20.0")
    g.add_argument("new", help="the release compared, e.g. v2.21.0 (the same tag: A/A check)")
    g.add_argument("--bench", "-b", help="regular expression of benchmarks, as asv run's")
    g.add_argument("--machine", help="asv machine name (default: this host's)")
    g.add_argument(
        "--rounds",
        type=int,
        default=2,
        help="rounds (default 2): memory in the first, both sides at once; time in each, "
        "A then B (the screen: memory points read apart are read again to 5 readings a "
        "side, time points whose runs part re-measured to 5 runs a side)",
    )
    g.add_argument("--json", action="store_true", help="print the rows as JSON")
    g.add_argument("--config", default="asv.conf.json")
    g.add_argument("--flavour", default="cpu", help="the lock: cpu (default) or gpu")
    g.add_argument("--env-dir", type=Path, help="where release environments live")
    g.add_argument(
        "--python",
        type=Path,
        help="one interpreter for both sides instead of the releases' environments "
        "(for testing a suite whose changes follow the commit)",
    )
    g.set_defaults(run=_gate)
    rep = sub.add_parser("report", help="print the release report as Markdown")
    rep.add_argument("--config", default="asv.conf.json")
    rep.set_defaults(run=_report)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except BadInput as e:
        print(f"tfbench: error: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT


if __name__ == "__main__":
    sys.exit(main())
