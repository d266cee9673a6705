"""The child's side of a measurement (the supervisor forks it): prime, run, write, exit."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from tfbench.measure import devices
from tfbench.measure.meter import fault_in_like
from tfbench.measure.record import Record
from tfbench.measure.steps import measure


def serve(run: Callable[[bool], Record], out: Path) -> None:
    """In a freshly forked child: map the parent's library pages, run, write the record, exit.

    Never returns: the child must not go back into the parent's code.
    """
    code = 1
    try:  # prints go to stderr (stdout may carry the parent's JSON)
        os.dup2(2, 1)
        record = run(fault_in_like(os.getppid()))
        out.write_text(json.dumps(record))
        code = 0
    finally:
        sys.stdout.flush(), sys.stderr.flush()
        os._exit(code)


def measure_step(
    step: Callable[[], Any],
    iterations: int,
    warmup: int,
    budget_bytes: int,
    device: str,
    primed: bool,
) -> dict[str, Any]:
    """The step's figures in this process, with the device's allocator peak and the step's
    own counters (graph ops, traces) read after the run."""
    devices.reset_allocator_peak(device)
    reading = asdict(measure(step, iterations, warmup, budget_bytes))
    counters = getattr(step, "counters", None)
    reading.update(
        allocator_peak_bytes=devices.allocator_peak(device),
        counters=counters() if counters else {},
    )
    if not primed:  # library pages first touched in the region count in its peak
        reading["method"] += "+unprimed"
    return reading
