"""The parent's side of a measurement: fork one child per target, bound its memory and time.

Children are forked from a process that has imported TensorFlow but not started it, so
each child skips the import (seconds) and begins with a clean runtime: forking a process
whose TensorFlow runtime (thread pools, CUDA) has started can deadlock. The parent watches
each child's RSS and kills it past the budget or the timeout; the child also stops itself
at the budget between iterations, so the usual over-budget record still carries the
readings up to that point; the watchdog's limit sits a margin above the budget so that the
child gets to do that.
"""

from __future__ import annotations

import functools
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tfbench import faults, whole
from tfbench.measure import child
from tfbench.measure.meter import group_rss_bytes
from tfbench.measure.record import Record
from tfbench.measure.spawn import OVER_BUDGET, TIMEOUT, kill_group, overrun
from tfbench.units import MiB

# run(target, primed) -> its record, in the child; describe(target) -> a record without
# figures, for a child that was killed or died.
Run = Callable[[Any, bool], Record]
Describe = Callable[[Any], Record]
GROUP_SCAN_S = 0.1


def default_budget_bytes() -> int:
    """A quarter of physical memory: a leaking scenario must not take the machine down."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 4
    except (ValueError, OSError, AttributeError):
        return 4096 * MiB


def fork_each(
    targets: list[Any],
    run: Run,
    describe: Describe,
    budget_bytes: int,
    timeout_s: float,
    workers: int = 1,
    prime: bool = True,
) -> list[Record]:
    """Run each target in a child forked from this process, `workers` at a time.

    Each child leads its own process group: the budget counts the whole group's RSS (a step
    that starts helpers pays for them), and the group is killed at the budget, the timeout
    and the end, so nothing a step started outlives its measurement. Children run side by
    side: their readings are per-process RSS, which a neighbour does not change. Records
    come in the order of `targets`.
    """
    limit = budget_bytes + max(64 * MiB, budget_bytes // 10)
    results: list[Record | None] = [None] * len(targets)
    running: dict[int, tuple[int, Path, float]] = {}  # pid -> (index, out, deadline)
    todo = list(enumerate(targets))
    scanned = 0.0
    with whole.temporary("tfbench-children-") as tmp:
        while todo or running:
            while todo and len(running) < workers:
                index, target = todo.pop(0)
                out = tmp / f"{index}.json"
                sys.stdout.flush(), sys.stderr.flush()  # or the child would print them again
                parent, pid = os.getpid(), os.fork()
                if pid == 0:
                    child.serve(functools.partial(_run_one, run, target), out, parent, prime)
                running[pid] = (index, out, time.monotonic() + timeout_s)
            # The leader's RSS every round; the group's (a /proc scan) every GROUP_SCAN_S.
            groups = {}
            if time.monotonic() - scanned >= GROUP_SCAN_S:
                groups, scanned = group_rss_bytes(set(running)), time.monotonic()
            for pid, (index, out, deadline) in list(running.items()):
                ended, status = os.waitpid(pid, os.WNOHANG)
                verdict = None
                if not ended:
                    verdict = overrun(pid, limit, deadline, groups.get(pid, 0))
                    if verdict is None:
                        continue
                    kill_group(pid)
                    os.waitpid(pid, 0)
                kill_group(pid)  # whatever the step started and left running
                del running[pid]
                if verdict is None and os.waitstatus_to_exitcode(status) == faults.EXIT_IO:
                    for other in running:  # the child said why, in one line: end with it
                        kill_group(other)
                    raise faults.Said(faults.EXIT_IO)
                results[index] = _collect(
                    describe(targets[index]), out, verdict, status, budget_bytes, timeout_s
                )
            time.sleep(0.02)
    return [r for r in results if r is not None]  # every index was collected


def _run_one(run: Run, target: Any, primed: bool) -> Record:
    return run(target, primed)


def _collect(
    record: Record, out: Path, verdict: str | None, status: int, budget: int, timeout_s: float
) -> Record:
    if verdict is None and out.exists():
        return json.loads(out.read_text())
    record.update(status=verdict or "error", budget_bytes=budget)
    if verdict == OVER_BUDGET:
        record["error"] = (
            f"killed: RSS of the measuring process and the processes it "
            f"started passed the budget of {budget / MiB:.0f} MiB"
        )
    elif verdict == TIMEOUT:
        record["error"] = f"killed: still running after {timeout_s:.0f} s"
    elif os.WIFSIGNALED(status):
        record["error"] = f"the measuring process died of signal {os.WTERMSIG(status)}"
    else:
        record["error"] = f"the measuring process exited with code {os.WEXITSTATUS(status)}"
    return record
