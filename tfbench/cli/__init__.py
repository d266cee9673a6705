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

__all__ = ["EXIT_BAD_INPUT", "parse", "main"]
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


def _parsers() -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    """The parser, and each command's own."""
    parser = argparse.ArgumentParser(
        prog="tfbench",
        description="list scenarios, measure one (or a user's function), manage releases",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.add(sub)
    return parser, sub.choices


def parse(argv: list[str]) -> argparse.Namespace:
    """The command's arguments, its positionals taken wherever they stand (a range after the
    options, as `tfbench upstream footprint --metric footprint-heap 2.21.0 2.22.0rc0`)."""
    parser, commands = _parsers()
    if not argv or argv[0] not in commands:
        return parser.parse_args(argv)  # help, or the error naming the commands
    try:
        return commands[argv[0]].parse_intermixed_args(
            argv[1:], argparse.Namespace(command=argv[0])
        )
    except TypeError:  # argparse cannot intermix a command of commands (releases check|add)
        return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse(sys.argv[1:] if argv is None else argv)
    try:
        return args.run(args)
    except BadInput as e:
        print(f"tfbench: error: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
