"""The time reader's measuring process, one a side, in the release's environment:
    python -m tfbench.pairs.server SUITE
The suite's package imported once (the project's imports TensorFlow, not started), then a
line on stdout saying it is ready, then one request a line on stdin, each answered by a
line on stdout. A request names a grid point of a `time_` benchmark (its class, asv's
param values) and how to read it; each reading is a child forked for it
(tfbench.measure.supervisor: its own budget and timeout), the step prepared as asv's setup
prepares it (benchmarks/common.warm_step), then timed in blocks (tfbench.measure.timer).
A request without a plan makes one and answers with it.

Request: {"benchmark": "loops.MatrixPower", "combo": [asv's param values],
          or "target": a target's JSON (tfbench.targets: a scenario or a user's step),
          "plan": {warmup, calls, block} | null, "seconds": float, "cpu": int | null,
          "barrier": a folder both sides' readings meet in | null, "side": name,
          "plant": a share of more work in each block's calls (calibration) | null}
Reply:   {"status", "error", "plan", "blocks": [[start_ns, end_ns, calls], ...]}
"""

from __future__ import annotations

import ast
import importlib
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

TIMEOUT_S = 300.0  # a reading: its calls are a second or so, its warm-up the rest


def read(suite: str, request: dict[str, Any], primed: bool) -> dict[str, Any]:
    """One reading, in the forked child: skipped where the point is none of the pattern's
    (or the pattern fails on this release), as asv's time_ skips it."""
    from tfbench.measure import timer
    from tfbench.measure.devices import Unsupported

    if request.get("cpu") is not None:
        os.sched_setaffinity(0, {request["cpu"]})
    try:
        step = warm(suite, request)
    except Unsupported as e:
        return {"status": "skipped", "error": str(e)}
    given = request.get("plan")
    plan = timer.Plan(**given) if given else timer.plan(step, request["seconds"])
    turns = None
    if request.get("barrier"):
        folder = Path(request["barrier"])
        timer.meet(folder, request["side"], timer.BARRIER_S)
        if request.get("turns"):
            other = "new" if request["side"] == "old" else "old"
            turns = timer.Turns(folder, request["side"], other, request["turns"] == "first")
    found = timer.blocks(
        step,
        plan,
        warmed=not given,
        beside=bool(request.get("canary")),
        turns=turns,
        plant=request.get("plant") or 0.0,
    )
    return {"status": "ok", "plan": plan.as_json(), "blocks": found}


def warm(suite: str, request: dict[str, Any]) -> Callable[[], Any]:
    """The step a request names, called once: a benchmark's as asv's setup prepares it, a
    target's as tfbench measures it (a step that fails here is a skip, as in the suite)."""
    from tfbench import targets

    if "target" in request:
        target = targets.step_from_json(request["target"])
        return targets.warmed(target.name, lambda: targets.prepare(target).step)
    module, _, name = request["benchmark"].rpartition(".")
    cls = getattr(importlib.import_module(f"{suite}.{module}"), name)  # the server's import
    step_class = next(c for c in cls.__mro__ if c.__name__ == "StepBenchmark")
    common = sys.modules[step_class.__module__]  # the suite's glue (benchmarks/common.py)
    values = [ast.literal_eval(v) for v in request["combo"]]
    return common.warm_step(cls.family, cls.param_names, *values)


def serve(suite_dir: str) -> None:
    from tfbench.measure import supervisor

    suite = Path(suite_dir)
    sys.path.insert(0, str(suite.parent))
    importlib.import_module(suite.name)  # once here, not in every child (TensorFlow: the suite's)

    print(json.dumps({"ready": True}), flush=True)  # no reading while the other side imports
    budget = supervisor.default_budget_bytes()
    for line in sys.stdin:
        request = json.loads(line)
        if "benchmark" in request:
            module = request["benchmark"].rpartition(".")[0]
            importlib.import_module(f"{suite.name}.{module}")  # once, not in every reading
        (found,) = supervisor.fork_each(
            [request],
            lambda r, primed: read(suite.name, r, primed),
            lambda r: {k: r[k] for k in ("benchmark", "combo", "target") if k in r},
            budget,
            TIMEOUT_S,
            prime=False,  # a user's process: no steady malloc, no pages mapped ahead
        )
        print(json.dumps(found), flush=True)


if __name__ == "__main__":
    serve(sys.argv[1])
