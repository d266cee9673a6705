"""The `tfbench` command: one module per command, each adding its parser and running it;
options several commands take and the checks of each input live in `common`, text output
in `output`. The commands: run, measure, explain, bisect, gate, upstream, watch, list
(catalog), cpu, envs, releases, results, history, versions, publish and report (publish),
profile."""

from __future__ import annotations

import argparse
import os
import signal
import sys

from tfbench import escape, whole
from tfbench.cli import (
    bisect,
    catalog,
    cpu,
    envs,
    explain,
    gate,
    history,
    measure,
    profile,
    publish,
    releases,
    results,
    run,
    upstream,
    versions,
    watch,
)
from tfbench.cli.common import EXIT_BAD_INPUT, BadInput
from tfbench.faults import EXIT_CRASH, Said, crashed, interrupted, machine_fault
from tfbench.keptfiles import KeptFileError

__all__ = ["EXIT_BAD_INPUT", "EXIT_CRASH", "parse", "main"]
COMMANDS = (
    run,
    catalog,
    measure,
    bisect,
    explain,
    envs,
    releases,
    results,
    history,
    publish,
    gate,
    upstream,
    versions,
    watch,
    cpu,
    profile,
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
    if argv[:2] == ["gate", "merge"]:  # a command of two words beside `gate OLD NEW`
        argv = [gate.MERGE, *argv[2:]]
    if not argv or argv[0] not in commands:
        return parser.parse_args(argv)  # help, or the error naming the commands
    try:
        return commands[argv[0]].parse_intermixed_args(
            argv[1:], argparse.Namespace(command=argv[0])
        )
    except TypeError:  # argparse cannot intermix a command of commands (releases check|add)
        return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Run a command. Exit 0, or its verdict (1: something worse, no single build); 2 bad
    input (a kept file not of its form among it: the file and the field named); 74 a full
    disk or a folder it may not write (the file named); 130 interrupted, 143 terminated;
    EXIT_CRASH a fault of tfbench's own, its traceback printed: a crash is
    never read as a verdict (a CI step that accepts exit 1 fails on it)."""
    args = parse(sys.argv[1:] if argv is None else argv)
    try:
        whole.sweep(whole.TEMPORARY)  # what a killed command of tfbench's left
        return args.run(args)
    except Said as e:
        return e.code
    except (BadInput, KeptFileError) as e:
        print(f"tfbench: error: {escape.plain(str(e))}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        return interrupted()
    except BrokenPipeError:  # its reader stopped reading (| head): as a killed pipe's writer
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 128 + signal.SIGPIPE
    except OSError as e:
        code = machine_fault(e)
        return crashed() if code is None else code
    except Exception:
        return crashed()
