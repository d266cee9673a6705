"""Every process tfbench starts, started one way and watched by one watchdog.

A started process leads its own session and process group and ends when the process that
started it does (the kernel's parent-death signal): a killed or interrupted tfbench leaves
no measurement running. The watchdog (`overrun`) holds a process group to a memory budget
(the RSS of every process in it) and a deadline; supervisor.fork_each applies the same one
to the children it forks.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from typing import IO, Any

from tfbench import whole
from tfbench.measure import child
from tfbench.measure.meter import group_rss_bytes, process_rss_bytes
from tfbench.units import format_bytes

POLL_S = 0.1
OVER_BUDGET, TIMEOUT = "over_budget", "timeout"


def overrun(pid: int, limit: int | None, deadline: float | None, group: int = 0) -> str | None:
    """OVER_BUDGET where the process (or its group's `group` bytes, when scanned) holds more
    than `limit`, TIMEOUT past `deadline`, else None."""
    if limit is not None and max(process_rss_bytes(pid), group) > limit:
        return OVER_BUDGET
    if deadline is not None and time.monotonic() > deadline:
        return TIMEOUT
    return None


def kill_group(pid: int) -> None:
    """SIGKILL to every process of the group `pid` leads."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass  # the group is empty


class Spawned:
    """A process started in its own group, ended with its parent, and held to a budget
    (bytes of RSS of its group) and a timeout where given; `own_tmp`: its TMPDIR a new
    folder, removed when it ends (asv's benchmark processes exit without Python's exit
    handlers, which is where TensorFlow's autograph removes the modules it writes there)."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        stdin: IO[Any] | int | None = None,
        stdout: IO[Any] | int | None = None,
        stderr: IO[Any] | int | None = None,
        budget_bytes: int | None = None,
        timeout_s: float | None = None,
        parent_signal: int = signal.SIGKILL,
        own_tmp: bool = False,
    ) -> None:
        parent = os.getpid()
        self.budget, self.timeout = budget_bytes, timeout_s
        self.deadline = None if timeout_s is None else time.monotonic() + timeout_s
        self.stopped = ""  # why the watchdog ended it
        # in the system's temporary folder, short: asv's forkserver puts its socket there,
        # and a socket's path is limited to 108 bytes
        self.tmp = whole.scratch("tfbench-run-") if own_tmp else None
        if self.tmp is not None:
            env = {**(os.environ if env is None else env), "TMPDIR": str(self.tmp)}
        try:
            self.process = subprocess.Popen(
                argv,
                env=env,
                cwd=cwd,
                stdin=stdin,
                stdout=stdout,
                stderr=stderr,
                start_new_session=True,  # its group: its helpers counted, killed with it
                preexec_fn=lambda: child.die_with_parent(parent_signal, parent),
            )
        except BaseException:
            self._cleared()
            raise
        self.pid = self.process.pid

    def poll(self) -> int | None:
        """Its exit code once it ended; meanwhile the watchdog: past the budget or the
        deadline, its group is killed and `stopped` says why."""
        code = self.process.poll()
        if code is not None:
            return code
        group = group_rss_bytes({self.pid})[self.pid] if self.budget is not None else 0
        found = overrun(self.pid, self.budget, self.deadline, group)
        if found == OVER_BUDGET:
            self.stopped = f"stopped: RSS passed the budget of {format_bytes(self.budget)}"
        elif found == TIMEOUT:
            self.stopped = f"stopped after {self.timeout:.0f} s"
        if found:
            self.kill()
        return self.process.poll()

    def wait(self) -> int:
        """Its exit code (a negative signal number where killed), its group ended with it;
        interrupted, the group is killed before the interrupt goes on."""
        try:
            while (code := self.poll()) is None:
                time.sleep(POLL_S)
        except BaseException:
            self.kill()
            raise
        kill_group(self.pid)  # whatever it started and left running
        self._cleared()
        return code

    def kill(self) -> None:
        kill_group(self.pid)
        self.process.wait()
        self._cleared()

    def _cleared(self) -> None:
        if self.tmp is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)
