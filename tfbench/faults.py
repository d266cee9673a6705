"""How a run of tfbench ends when it does not end by its command's verdict: a fault of
tfbench's own (its traceback, EXIT_CRASH: never 1, which a command gives as a verdict and a
CI step may accept), a fault of the machine's (a full disk, a read-only folder: one line
naming the file, EXIT_IO), or an interrupt or SIGTERM (one line, EXIT_INTERRUPTED,
EXIT_TERMINATED), at any moment, imports included. The console script and the command line
both end through here."""

from __future__ import annotations

import signal
import sys

# os, threading and traceback are imported where used: until watch_interrupts has run, an
# interrupt is Python's own (a traceback), so this module imports what is loaded already

EXIT_CRASH = 70  # sysexits' EX_SOFTWARE
EXIT_IO = 74  # sysexits' EX_IOERR: a file could not be written or read, the machine's fault
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports it
EXIT_TERMINATED = 143  # 128 + SIGTERM
# the machine's faults, by errno name: what to do about each
MACHINE_FAULTS = {
    "ENOSPC": "no space left on the device: free some and run this again",
    "EDQUOT": "over the disk quota: free some and run this again",
    "EROFS": "a read-only filesystem: run this where it can write",
    "EACCES": "permission denied: run this where it can write, or as a user who may",
    "EPERM": "not permitted: run this where it can write, or as a user who may",
    "EFBIG": "the file is over the size this process may write (ulimit -f)",
}


class Said(Exception):
    """The fault was said in one line already (by a process of tfbench's): end with `code`."""

    def __init__(self, code: int):
        super().__init__(code)
        self.code = code


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where a KeyboardInterrupt is: every clean-up an interrupt runs runs."""


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
    """Said in one line: EXIT_INTERRUPTED, or EXIT_TERMINATED after a SIGTERM."""
    if _terminated:
        print("tfbench: terminated (SIGTERM)", file=sys.stderr)
        return EXIT_TERMINATED
    print("tfbench: interrupted", file=sys.stderr)
    return EXIT_INTERRUPTED


def machine_fault(error: OSError) -> int | None:
    """A full disk, a read-only folder and their kind said in one line naming the file and
    what to do: EXIT_IO. None for any other error (a fault of tfbench's own)."""
    import errno

    name = errno.errorcode.get(error.errno or 0, "")
    if name not in MACHINE_FAULTS:
        return None
    where = error.filename or "a file"
    print(f"tfbench: {where}: {MACHINE_FAULTS[name]} (exit {EXIT_IO})", file=sys.stderr)
    return EXIT_IO


def end_on(error: OSError) -> None:
    """Where `error` is the machine's fault: said in one line (machine_fault), and the
    process ends with EXIT_IO. Otherwise it returns, and the caller raises the error."""
    if machine_fault(error) is not None:
        sys.exit(EXIT_IO)


def errno_of(error: OSError) -> int:
    """The error's errno, or, where it has none (shutil.copytree's error gives its files'
    errors as text, "[Errno 28] ..."), the first one its text names; 0 where none is."""
    import re

    found = re.search(r"\[Errno (\d+)\]", str(error))
    return error.errno or (int(found.group(1)) if found else 0)


_interrupts: list[bool] = []  # one a SIGINT received
_terminated: list[bool] = []  # one a SIGTERM received
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

    def on_terminate(signum: int, frame: object) -> None:
        _interrupts.append(True)
        _terminated.append(True)
        raise Terminated

    signal.signal(signal.SIGINT, on_interrupt)
    signal.signal(signal.SIGTERM, on_terminate)
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
