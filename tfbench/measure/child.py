"""The child's side of a measurement (the supervisor forks it): prime, run, write, exit."""

from __future__ import annotations

import json
import os
import signal
import sys
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from tfbench import faults, whole
from tfbench.measure import devices
from tfbench.measure.meter import fault_in_like, libc, steady_malloc
from tfbench.measure.record import Record
from tfbench.measure.steps import measure
from tfbench.units import format_bytes


def serve(run: Callable[[bool], Record], out: Path, parent: int, prime: bool = True) -> None:
    """In a freshly forked child: its own process group (the supervisor budgets, times and
    kills the group: every process the step starts), death with its parent, and where
    `prime` (memory is to be read) malloc made steady and the parent's library pages
    mapped; then run, write the record, exit. A timing reads the process as a user's runs:
    not primed.

    Never returns: the child must not go back into the parent's code.
    """
    code = 1
    try:  # prints go to stderr (stdout may carry the parent's JSON)
        os.setpgid(0, 0)
        die_with_parent(signal.SIGKILL, parent)
        os.dup2(2, 1)
        if prime:
            steady_malloc()  # before the step's threads and TensorFlow's pools start
        record = run(prime and fault_in_like(os.getppid()))
        try:
            whole.write(out, json.dumps(record))  # a full disk leaves no record cut
            code = 0
        except OSError as e:  # said here, once; the supervisor ends with the same code
            if faults.machine_fault(e) is None:
                raise
            code = faults.EXIT_IO
    finally:
        sys.stdout.flush(), sys.stderr.flush()
        os._exit(code)


def die_with_parent(sig: int, parent: int) -> bool:
    """Have the kernel send `sig` to this process when its parent exits (Linux prctl), so a
    killed supervisor leaves no measurement running. False where that is not available."""
    c = libc()
    try:
        if c is None or c.prctl(1, int(sig), 0, 0, 0) != 0:  # 1 = PR_SET_PDEATHSIG
            return False
    except AttributeError:
        return False
    if os.getppid() != parent:  # the parent died before the request took effect
        os.kill(os.getpid(), sig)
    return True


def measure_step(
    step: Callable[[], Any],
    iterations: int,
    warmup: int,
    budget_bytes: int,
    device: str,
    primed: bool,
    confirm: bool = True,
) -> dict[str, Any]:
    """The step's figures in this process, from a baseline taken once TensorFlow's runtime
    has started, with the device's allocator peak and the step's own counters (graph ops,
    traces) read after the run; `confirm`: whether a window that grew a little is
    confirmed by rounds (steps.measure)."""
    devices.start_runtime(device)
    devices.reset_allocator_peak(device)
    reading = asdict(measure(step, iterations, warmup, budget_bytes, confirm=confirm))
    counters = getattr(step, "counters", None)
    reading.update(
        allocator_peak_bytes=devices.allocator_peak(device),
        counters=counters() if counters else {},
    )
    if not primed:  # library pages first touched in the region count in its peak
        reading["method"] += "+unprimed"
    if reading["status"] == "over_budget":
        where = (
            f"after {reading['iterations']} measured iterations"
            if reading["iterations"]
            else f"in warm-up, after {reading['warmup_run']} of {warmup} warm-up iterations"
            " (no leak verdict: the growth shown is the warm-up's)"
        )
        reading["error"] = (
            f"stopped {where}: RSS passed the budget of "
            f"{format_bytes(budget_bytes)} (the whole process: "
            f"{format_bytes(reading['baseline_rss_bytes'])} before the first step)"
        )
    return reading
