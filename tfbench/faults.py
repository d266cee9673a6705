"""How a run of tfbench ends when it does not end by its command's verdict: a fault of
tfbench's own (its traceback, EXIT_CRASH: never 1, which a command gives as a verdict and a
CI step may accept) or an interrupt (one line, EXIT_INTERRUPTED), at any moment, imports
included. The console script and the command line both end through here."""

from __future__ import annotations

import os
import signal
import sys
import threading
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


_swallowed: list[bool] = []
_SENT_AGAIN = 3  # at most: an interrupt that lands in such a callback each time is still one


def watch_interrupts() -> None:
    """An interrupt that lands in a callback Python cannot raise from (an import lock's weak
    reference, a finalizer) is only printed as "Exception ignored", and the run goes on:
    here it is sent again a moment later, from a thread (sent from the callback, it would
    land in it again), and `swallowed` tells the run's end that it came."""
    default = sys.unraisablehook

    def hook(unraisable: sys.UnraisableHookArgs) -> None:
        if not isinstance(unraisable.exc_value, KeyboardInterrupt):
            return default(unraisable)
        _swallowed.append(True)
        if len(_swallowed) <= _SENT_AGAIN:
            again = threading.Timer(0.01, os.kill, (os.getpid(), signal.SIGINT))
            again.daemon = True
            again.start()

    sys.unraisablehook = hook


def swallowed() -> bool:
    """Whether an interrupt was swallowed by a callback during this run."""
    return bool(_swallowed)
