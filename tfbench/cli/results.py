"""`tfbench results merge DIR...`: results measured elsewhere (CI runners, a GPU box) merged
into this project's results; `tfbench results chain TAG --onto HISTORY`: a release read on
another CPU joined to a history (tfbench.publish.chain); `tfbench results upgrade`: kept
files of a former format rewritten in their kind's (tfbench.keptfiles.upgrade)."""

from __future__ import annotations

import argparse
from pathlib import Path

from tfbench.cli import common
from tfbench.cli.common import Subcommands


def add(sub: Subcommands) -> None:
    r = sub.add_parser(
        "results", help="merge results measured elsewhere into results/; chain a release"
    )
    actions = r.add_subparsers(dest="action", required=True)
    m = actions.add_parser(
        "merge",
        help="merge results directories (CI artifacts, another machine's results/) into "
        "--into; unreadable files are named and skipped, nothing there is lost",
    )
    m.add_argument("sources", nargs="+", type=Path, metavar="DIR", help="results directories")
    m.add_argument("--into", type=Path, default=Path("results"), help="default: results")
    m.add_argument(
        "--replace",
        action="store_true",
        help="change kept files the sources hold otherwise (their old versions kept in "
        "INTO-replaced/<time>/, each named); without it, such a merge is refused",
    )
    m.add_argument(
        "--wins", type=Path, metavar="DIR", help="the source whose file wins where two differ"
    )
    m.set_defaults(run=merge)
    c = actions.add_parser(
        "chain",
        help="join a release read on another CPU to a history: its time points the "
        "history's for the release before, moved by the gate's pairs of the two",
        description="A release read on a runner whose CPU is not the history's joins the "
        "history chained (docs/history.md#chained): each time point is the history's figure "
        "for the release before, moved by the estimate of the pairs one runner read of the "
        "two (the kept gate run, which names its CPU); memory figures as the runner read "
        "them. The raw figures stay under the runner's own machine; the link is kept in "
        "results/chain/HISTORY/.",
    )
    c.add_argument("tag", help="the release, e.g. v2.22.0 (its gate run: the release before)")
    c.add_argument("--onto", required=True, metavar="HISTORY", help="the history's machine")
    c.add_argument("--gate", metavar="MACHINE", help="whose kept gate run (default: the one)")
    c.add_argument("--raw", metavar="MACHINE", help="whose results (default: the one)")
    c.add_argument(
        "--env", default="virtualenv-py3.11", help="asv's environment (default: %(default)s)"
    )
    common.add_config(c)
    c.set_defaults(run=chain)
    u = actions.add_parser(
        "upgrade",
        help="rewrite kept files of a former format (gate runs, shards) in their kind's "
        "format, each whole; a file that does not upgrade is named and left as it was",
    )
    u.add_argument("--results", type=Path, default=Path("results"), help="default: results")
    u.set_defaults(run=upgrade)


def merge(args: argparse.Namespace) -> int:
    from tfbench import keptfiles
    from tfbench.nightly import upstream
    from tfbench.publish import merge

    try:
        done = merge.merge(args.sources, args.into, args.replace, args.wins)
    except merge.MergeError as e:
        raise common.BadInput(str(e)) from None
    for problem in done.rendered + [f"skipped {p}" for p in done.skipped]:
        common.progress(problem)
    for relative in done.replaced:
        common.progress(f"replaced {relative} (its old version in {done.kept_old})")
    unrendered = 0
    for relative in done.added + done.replaced:
        if relative.name == "bisect.json":  # its write-up from its checked fields
            kept = args.into / relative
            try:
                if upstream.render_again(keptfiles.bisection.read(kept), kept.parent) is None:
                    common.progress(
                        f"{kept}: a user's step: its issue.md is written where it runs"
                    )
            except (keptfiles.KeptFileError, OSError, ValueError) as e:
                unrendered += 1
                common.progress(f"{kept}: its write-up not rendered: {e}")
    print(
        f"{args.into}: {len(done.added)} file(s) added, {len(done.replaced)} replaced, "
        f"{len(done.skipped)} skipped"
    )
    # what it took is in; a file it skipped is bad input, said in the exit code too
    return common.EXIT_BAD_INPUT if unrendered or done.skipped else 0


def chain(args: argparse.Namespace) -> int:
    from tfbench.publish import chain

    config = common.config(args)
    try:
        done = chain.chain(
            common.results_dir(config),
            common.history_repo(config),
            common.machine(args.onto),
            args.tag,
            args.env,
            args.raw and common.machine(args.raw),
            args.gate and common.machine(args.gate),
        )
    except chain.ChainError as e:
        raise common.BadInput(str(e)) from None
    for why in done.unmoved:
        common.progress(f"not chained: {why}")
    print(chain.line(done, args.onto, args.tag))
    return 0


def upgrade(args: argparse.Namespace) -> int:
    from tfbench import whole
    from tfbench.keptfiles import upgrade

    if not args.results.is_dir():
        raise common.BadInput(f"{args.results}: no results folder")
    try:
        with whole.writing(args.results):
            done = upgrade.upgrade(args.results)
    except whole.Busy as e:
        raise common.BadInput(
            f"another run writes into {args.results} ({e}): wait for it"
        ) from None
    for path, was, now in done.done:
        common.progress(f"{path}: format {was} -> {now}")
    for why in done.refused:
        common.progress(why)
    print(
        f"{args.results}: {len(done.done)} file(s) upgraded, {len(done.refused)} left as they were"
    )
    return common.EXIT_BAD_INPUT if done.refused else 0
