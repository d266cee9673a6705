"""`tfbench envs`: the cached release environments."""

from __future__ import annotations

import argparse
from pathlib import Path

from tfbench.cli.common import BadInput, Subcommands
from tfbench.units import format_bytes


def add(sub: Subcommands) -> None:
    e = sub.add_parser(
        "envs", help="the cached release and nightly environments: list, remove, prune"
    )
    e.add_argument("action", choices=("list", "remove", "prune"))
    e.add_argument(
        "--budget-gib",
        type=float,
        help="prune: the disk nightly environments may take, the oldest removed first "
        "(default: $TFBENCH_NIGHTLY_GIB or 40)",
    )
    e.add_argument("names", nargs="*", help="environments to remove, e.g. 2.12.1-cpu")
    e.add_argument("--all", action="store_true", help="remove every environment")
    e.add_argument(
        "--env-dir", type=Path, help="default: $TFBENCH_ENV_DIR or ~/.cache/tfbench/envs"
    )
    e.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from tfbench.history import envs

    root = args.env_dir or envs.default_root()
    if args.action == "list":
        listed = envs.listing(root)
        print(f"{root}: {len(listed)} environment(s)")
        for e in listed:
            state = "" if e.ready else "  (unfinished)"
            print(f"  {e.name:<19} {format_bytes(e.bytes_own):>10} of its own{state}")
        return 0
    if args.action == "prune":
        from tfbench.nightly import builds

        budget = args.budget_gib
        if budget is not None and budget < 0:
            raise BadInput(f"--budget-gib must be at least 0, got {budget}")
        limit = builds.budget_bytes() if budget is None else int(budget * (1 << 30))
        gone = builds.prune(root, limit)
        print(f"removed {', '.join(gone) or 'nothing'}")
        return 0
    if not args.names and not args.all:
        raise BadInput("name the environments to remove (see `tfbench envs list`), or --all")
    try:
        gone = envs.remove(root, args.names)
    except ValueError as e:
        raise BadInput(str(e)) from None
    print(f"removed {', '.join(gone) or 'nothing'}")
    return 0
