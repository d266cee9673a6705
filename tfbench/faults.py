"""How a run of tfbench ends when it does not end by its command's verdict: a fault of
tfbench's own (its traceback, EXIT_CRASH: never 1, which a command gives as a verdict and a
CI step may accept) or an interrupt (one line, EXIT_INTERRUPTED), at any moment, imports
included. The console script and the command line both end through here."""

from __future__ import annotations

import sys
import traceback

EXIT_CRASH = 70  # sysexits' EX_SOFTWARE
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports it


def crashed() -> int:
    """Said, with the traceback of the exception being handled: EXIT_CRASH."""
    traceback.print_exc()
    print(f"tfbench: crashed (exit {EXIT_CRASH}): a fault of tfbench's own", file=sys.stderr)
    return EXIT_CRASH


def interrupted() -> int:
    """Said in one line: EXIT_INTERRUPTED."""
    print("tfbench: interrupted", file=sys.stderr)
    return EXIT_INTERRUPTED
