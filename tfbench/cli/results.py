"""`tfbench results merge DIR...`: results measured elsewhere (CI runners, a GPU box) merged
into this project's results."""

from __future__ import annotations

import argparse
from pathlib import Path

from tfbench.cli import common
from tfbench.cli.common import Subcommands


def add(sub: Subcommands) -> None:
    r = sub.add_parser("results", help="merge results measured elsewhere into results/")
    actions = r.add_subparsers(dest="action", required=True)
    m = actions.add_parser(
        "merge",
        help="merge results directories (CI artifacts, another machine's results/) into "
        "--into; unreadable files are named and skipped, nothing there is lost",
    )
    m.add_argument("sources", nargs="+", type=Path, metavar="DIR", help="results directories")
    m.add_argument("--into", type=Path, default=Path("results"), help="default: results")
    m.set_defaults(run=merge)


def merge(args: argparse.Namespace) -> int:
    from tfbench import keptfiles
    from tfbench.nightly import upstream
    from tfbench.publish import merge

    try:
        done = merge.merge(args.sources, args.into)
    except merge.MergeError as e:
        raise common.BadInput(str(e)) from None
    for problem in done.skipped:
        common.progress(f"skipped {problem}")
    for relative in done.added + done.replaced:
        if relative.name == "bisect.json":  # its write-up from its checked fields
            kept = args.into / relative
            if upstream.render_again(keptfiles.bisection(kept), kept.parent) is None:
                common.progress(f"{kept}: a user's step: its issue.md is written where it runs")
    print(
        f"{args.into}: {len(done.added)} file(s) added, {len(done.replaced)} replaced, "
        f"{len(done.skipped)} skipped"
    )
    return 0
