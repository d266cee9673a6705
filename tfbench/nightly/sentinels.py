"""The sentinel set the nightly watch reads on every tf-nightly build: TensorFlow's footprint
and one small point of each scenario family, by figures that read the same from one machine
and process to the next (the heap's: what TensorFlow keeps and its peak), so that builds read
on different days and runners compare; and one point's time, compared with the build before
in the same run only (tfbench.pairs), since time does not compare across runners."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from tfbench import targets

CPU = {"device": "CPU"}
OFF = {"device": "CPU", "allow_growth": "off"}
# one point a family, its smallest: what changes in a family changes here too, in seconds
STEPS: dict[str, targets.ScenarioTarget] = {
    "eager": targets.ScenarioTarget("eager.loop", CPU),
    "function": targets.ScenarioTarget("function.retrace_python_scalar", CPU),
    "graph": targets.ScenarioTarget("graph.session_per_iteration", OFF),
    "loop": targets.ScenarioTarget("loop.python_matmul", {**CPU, "gradient": "none", "size": 64}),
    "predict": targets.ScenarioTarget("predict.model_predict", CPU),
    "session": targets.ScenarioTarget("session.unclosed", OFF),
    "threads": targets.ScenarioTarget("threads.shared_session", {**CPU, "threads": 2}),
}
FOOTPRINT = "footprint"
SENTINELS: dict[str, targets.Target] = {FOOTPRINT: targets.FootprintTarget(CPU), **STEPS}
# the figures the watch decides on, by sentinel (tfbench.figures names)
FIGURES: dict[str, tuple[str, ...]] = {
    FOOTPRINT: ("footprint-heap",),
    **dict.fromkeys(STEPS, ("retained", "heap-peak")),
}
TIMED = "loop"  # the sentinel whose time is compared with the build before


def read(python: str, limits: targets.Limits) -> dict[str, dict[str, Any]]:
    """One reading of every sentinel in the environment of `python`: the steps each forked
    from one fresh process that imported TensorFlow, the footprint in processes of its own."""
    limits = replace(limits, python=python, quiet=True)
    found = dict(zip(STEPS, targets.measure_spawned(list(STEPS.values()), limits), strict=True))
    return {FOOTPRINT: targets.measure_footprint("CPU", limits, repeats=1), **found}
