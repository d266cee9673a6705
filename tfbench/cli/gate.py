"""`tfbench gate OLD NEW`: two releases measured in one session, interleaved; what changed."""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from tfbench.cli import common, output
from tfbench.cli.common import Subcommands
from tfbench.pairs import timing

if TYPE_CHECKING:
    from tfbench.gate.asvruns import Request

MOST_PAIRS = 200  # a point's exact interval: its table takes about the cube of the pairs
READING_S = (0.05, 10.0)  # a reading's timed seconds: a few blocks at least, bounded

EXIT_GATE_FAILED = common.EXIT_FAILED
READER = timing.Reader()  # the options' defaults
MERGE = "gate merge"  # the command `tfbench gate merge OLD NEW` is (tfbench.cli.parse)


def add(sub: Subcommands) -> None:
    g = sub.add_parser(
        "gate",
        help="measure two releases in one session, interleaved, and list what changed "
        "(exit 1 when something got worse)",
    )
    g.add_argument("old", help="the release to compare against, e.g. v2.20.0")
    g.add_argument("new", help="the release compared, e.g. v2.21.0 (the same tag: A/A check)")
    g.add_argument("--bench", "-b", help="regular expression of benchmarks, as asv run's")
    g.add_argument(
        "--shard",
        metavar="I/N",
        help="read the I-th of N shares of the suite's points, balanced by their cost in the "
        "kept runs, and keep its readings; `tfbench gate merge OLD NEW` joins the N "
        "(docs/gate.md#shards)",
    )
    _kept_options(g)
    _time_options(g)
    common.add_environments(g)
    g.add_argument(
        "--interpreter",
        type=Path,
        help="one interpreter for both sides instead of the releases' environments "
        "(for testing a suite whose changes follow the commit)",
    )
    g.set_defaults(run=run)
    m = sub.add_parser(
        MERGE,
        help="join a pair's kept shards (`tfbench gate --shard I/N`) into one gate run, kept "
        "under --machine (exit 1 when something got worse)",
    )
    m.add_argument("old", help="the release the shards compared against, e.g. v2.20.0")
    m.add_argument("new", help="the release they compared, e.g. v2.21.0")
    _kept_options(m, "calibration: join the shards read with --plant SHARE; not kept")
    m.set_defaults(run=merge)


def _kept_options(
    g: argparse.ArgumentParser,
    plant: str = "calibration: the new side's steps do this share more work (CPU-bound, "
    "e.g. 0.05); the run is not kept",
) -> None:
    """Where a gate is kept and how it is shown: --machine, --plant, --json, --markdown and
    the configuration (a gate's and a merge's alike)."""
    g.add_argument("--machine", help="asv machine name (default: this host's)")
    g.add_argument(
        "--plant",
        type=float,
        default=0.0,
        metavar="SHARE",
        help=plant,
    )
    shown = g.add_mutually_exclusive_group()
    shown.add_argument("--json", action="store_true", help="print the rows as JSON")
    shown.add_argument(
        "--markdown", action="store_true", help="print the rows as a Markdown table"
    )
    common.add_config(g)


def _time_options(g: argparse.ArgumentParser) -> None:
    """How the time reader reads: --pairs, --time-budget, --reading."""
    g.add_argument(
        "--pairs",
        type=int,
        metavar="MOST",
        help="time: pairs of readings at most a point, more read only while its verdict is "
        f"unknown and its interval leaves a change of {READER.watch * 100:g}%% open or lies "
        f"apart from no change (default {READER.most}: docs/validation/gate.md#watch)",
    )
    g.add_argument(
        "--time-budget",
        type=float,
        metavar="SECONDS",
        help=f"time: no pair after the first {READER.first} once the reader has read this "
        f"long (default {READER.budget_s:g})",
    )
    g.add_argument(
        "--reading",
        type=float,
        metavar="SECONDS",
        help=f"time: a reading's timed calls, about (default {READER.seconds:g}; shorter is "
        "quicker and noisier: docs/validation/gate.md#time)",
    )


def request(args: argparse.Namespace) -> Request:
    """The gate's request, every input checked."""
    from asv.machine import Machine
    from asv.util import UserError

    from tfbench.history.asvconf import load_config

    config = common.config(args)
    if args.bench:
        try:
            re.compile(args.bench)
        except re.error as e:
            raise common.BadInput(
                f"--bench {args.bench!r} is no regular expression: {e}"
            ) from None
    machine = common.machine(args.machine or Machine.get_unique_machine_name())
    if not 0 <= args.plant < 1:
        raise common.BadInput(f"--plant is a share of the step's work, 0 to 1: {args.plant}")
    reader = time_reader(args)
    if args.interpreter and not args.interpreter.is_file():
        raise common.BadInput(f"--interpreter {args.interpreter}: no such interpreter")
    try:
        conf = load_config(config)
    except (ValueError, OSError, UserError) as e:
        raise common.BadInput(f"{config}: {e}") from None
    from tfbench.gate import shards
    from tfbench.gate.asvruns import Request

    old, new = _tags(args.old, args.new)
    shard, share = _share(args, conf) if args.shard else (None, ())
    bench = shards.pattern(share) if shard else args.bench
    return Request(
        config, conf, old, new, machine, bench, common.flavour(args),
        env_root=args.env_dir, python=args.interpreter, python_version=common.python(args),
        plant=args.plant, reader=reader, shard=shard, units=tuple(share),
    )  # fmt: skip


def _tags(old: str, new: str) -> tuple[str, str]:
    """Releases as the history tags them (2.21.0 -> v2.21.0)."""
    return tuple(t if t.startswith("v") else f"v{t}" for t in (old, new))  # type: ignore[return-value]


def _share(args: argparse.Namespace, conf) -> tuple[tuple[int, int], list]:
    """--shard I/N: its share of the plan every runner makes alike from the kept files."""
    found = re.fullmatch(r"(\d{1,2})/(\d{1,2})", args.shard)
    if not found or not 1 <= int(found[1]) <= int(found[2]):
        raise common.BadInput(f"--shard takes I/N, 1 <= I <= N <= 99: {args.shard!r}")
    if args.bench:
        raise common.BadInput("--shard reads its share of the whole suite: no --bench with it")
    from tfbench.gate import shards

    i, n = int(found[1]), int(found[2])
    return (i, n), shards.plan(shards.kept_costs(conf), n)[i - 1]


def time_reader(args: argparse.Namespace) -> timing.Reader:
    """The time reader the options ask for (--pairs, --time-budget, --reading), checked."""
    most = READER.most if args.pairs is None else args.pairs
    budget = READER.budget_s if args.time_budget is None else args.time_budget
    seconds = READER.seconds if args.reading is None else args.reading
    if not READER.first <= most <= MOST_PAIRS:
        raise common.BadInput(
            f"--pairs: {READER.first} (every point's first pairs) to {MOST_PAIRS}: {most}"
        )
    if not 0 < budget < float("inf"):
        raise common.BadInput(f"--time-budget is seconds, more than 0: {budget}")
    if not READING_S[0] <= seconds <= READING_S[1]:
        raise common.BadInput(f"--reading: {READING_S[0]} to {READING_S[1]} seconds: {seconds}")
    return timing.Reader(most=most, budget_s=budget, seconds=seconds)


def run(args: argparse.Namespace) -> int:
    from tfbench import cpu
    from tfbench.gate import asvruns, calibration, session
    from tfbench.pairs import timing, verdict

    req = request(args)
    if said := calibration.notice(Path(req.conf.results_dir), cpu.identity()):
        common.progress(said)
    try:
        outcome = asvruns.run_gate(req, common.progress)
    except (asvruns.BadRequest, session.NothingSelected) as e:
        raise common.BadInput(str(e)) from None
    except asvruns.GateError as e:
        print(f"tfbench: gate: {e}", file=sys.stderr)
        return EXIT_GATE_FAILED
    measured = outcome.measured
    if outcome.kept:
        common.progress(f"kept in {outcome.kept}")
    switch = f"; environment switches {max(measured.switches):.2f} s at most" * bool(
        measured.switches
    )
    common.progress(f"measured in {measured.seconds:.0f} s{switch}; runs kept in {req.work}")
    here = cpu.identity()
    time = timing.summary(measured.timed, req.reader, dict.fromkeys(measured.timed, here["id"]))
    on = cpu.label(here)
    if args.json:
        if line := verdict.time_line(time, on):
            common.progress(line)
        print(json.dumps([r.as_json() for r in outcome.rows], indent=2))
    elif args.markdown:
        print(output.gate_markdown(outcome.rows, req.old, req.new, time, on), end="")
    else:
        print(output.gate(outcome.rows, req.old, req.new, time, on))
    return 1 if any(r.direction == "worse" for r in outcome.rows) else 0


def merge(args: argparse.Namespace) -> int:
    """`tfbench gate merge OLD NEW`: the pair's kept shards joined into one gate, kept as a
    whole gate's run under --machine (a planted one is printed, not kept)."""
    from asv.benchmarks import Benchmarks
    from asv.machine import Machine
    from asv.util import UserError

    from tfbench.gate import calibration, kept, shards
    from tfbench.history.asvconf import load_config

    config = common.config(args)
    machine = common.machine(args.machine or Machine.get_unique_machine_name())
    try:
        conf = load_config(config)
        benchmarks = dict(Benchmarks.load(conf))
    except (ValueError, OSError, UserError) as e:
        raise common.BadInput(f"{config}: {e}") from None
    old, new = _tags(args.old, args.new)
    results = Path(conf.results_dir)
    try:
        joined = shards.merge(results, (old, new), args.plant, benchmarks)
    except shards.ShardError as e:
        raise common.BadInput(str(e)) from None
    for shard, seconds in joined.seconds.items():
        common.progress(f"{shard}: read in {seconds:.0f} s")
    longest = max(joined.seconds.values())  # the longest shard: the runners' wall time
    calibration.keep(
        results, (old, new), joined.plant, joined.rows, joined.timed, joined.cpu_of,
        joined.read_on["cpus"], longest,
    )  # fmt: skip
    if not joined.plant:
        where = kept.write(
            results, machine, (old, new), joined.summary, joined.rows,
            joined.differing, joined.read_on,
        )  # fmt: skip
        common.progress(f"kept in {where}")
    on = "; ".join(f"cpu {i}" for i in joined.read_on["cpus"])
    if args.json:
        print(json.dumps([r.as_json() for r in joined.rows], indent=2))
    elif args.markdown:
        print(output.gate_markdown(joined.rows, old, new, joined.summary, on), end="")
    else:
        print(output.gate(joined.rows, old, new, joined.summary, on))
    return 1 if any(r.direction == "worse" for r in joined.rows) else 0
