"""The `tfbench` command: one module per command, each adding its parser and running it;
options several commands take and the checks of each input live in `common`, text output
in `output`."""

from __future__ import annotations

import argparse
import sys

from tfbench.cli import (
    bisect,
    catalog,
    envs,
    explain,
    gate,
    measure,
    publish,
    releases,
    results,
    run,
    upstream,
    versions,
)
from tfbench.cli.common import EXIT_BAD_INPUT, BadInput

__all__ = ["EXIT_BAD_INPUT", "build_parser", "main"]
COMMANDS = (
    run,
    catalog,
    measure,
    bisect,
    explain,
    envs,
    releases,
    results,
    publish,
    gate,
    upstream,
    versions,
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tfbench",
        description="list scenarios, measure one (or a user's function), manage releases",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.add(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except BadInput as e:
        print(f"tfbench: error: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
