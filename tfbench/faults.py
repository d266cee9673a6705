"""How a run of tfbench ends when it does not end by its command's verdict: a fault of
tfbench's own (its traceback, EXIT_CRASH: never 1, which a command gives as a verdict and a
CI step may accept) or an interrupt (one line, EXIT_INTERRUPTED), at any moment, imports
included. The console script and the command line both end through here."""

from __future__ import annotations

import signal
import sys

# os, threading and traceback are imported where used: until watch_interrupts has run, an
# interrupt is Python's own (a traceback), so this module imports what is loaded already

EXIT_CRASH = 70  # sysexits' EX_SOFTWARE
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports it


def crashed() -> int:
    """Said, with the traceback of the exception being handled: EXIT_CRASH; or, after an
    interrupt, the interrupt's line (an import cut short fails as another error: numpy's
    C import as an ImportError)."""
    if _interrupts:
        return interrupted()
    import traceback

    traceback.print_exc()
    print(f"tfbench: crashed (exit {EXIT_CRASH}): a fault of tfbench's own", file=sys.stderr)
    return EXIT_CRASH


def interrupted() -> int:
    """Said in one line: EXIT_INTERRUPTED."""
    print("tfbench: interrupted", file=sys.stderr)
    return EXIT_INTERRUPTED


_interrupts: list[bool] = []  # one a SIGINT received
_sent_again: list[bool] = []
_SENT_AGAIN = 3  # at most: an interrupt that lands in such a callback each time is still one


def watch_interrupts() -> None:
    """Each interrupt is counted as it raises KeyboardInterrupt. One that lands in a
    callback Python cannot raise from (an import lock's weak reference, a finalizer) is
    only printed as "Exception ignored", and the run goes on: here it is sent again a
    moment later, from a thread (sent from the callback, it would land in it again), and
    `was_interrupted` tells the run's end that it came."""

    def on_interrupt(signum: int, frame: object) -> None:
        _interrupts.append(True)
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, on_interrupt)
    default = sys.unraisablehook

    def hook(unraisable: sys.UnraisableHookArgs) -> None:
        if not isinstance(unraisable.exc_value, KeyboardInterrupt):
            return default(unraisable)
        if len(_sent_again) < _SENT_AGAIN:
            import os
            import threading

            _sent_again.append(True)
            again = threading.Timer(0.01, os.kill, (os.getpid(), signal.SIGINT))
            again.daemon = True
            again.start()

    sys.unraisablehook = hook


def was_interrupted() -> bool:
    """Whether an interrupt came during this run (watch_interrupts)."""
    return bool(_interrupts)
