"""The suite's naming conventions, read here and nowhere else. asv names a benchmark
`module.Class.method` and a point of it `module.Class.method(params)`, each param as its
repr. A family's step class times its step (`time_` methods, read in pairs); its twin,
the class of the same name with COSTS after it, reports what the probe reads of each
point (`track_` and `peakmem_`). A point on the GPU carries the param GPU; the time reader
reads none (no GPU here, and a GPU's time is no CPU's)."""

from __future__ import annotations

from collections.abc import Iterable

TIME = "time_"  # a method asv times: the step, read in pairs
PEAKMEM = "peakmem_"  # asv's peak RSS of a method's process
COSTS = "Costs"  # a step class's twin: the probe's figures
GPU = "'GPU'"  # the device param's value on the GPU, as asv writes params


def timed(name: str) -> bool:
    """Whether a benchmark (`module.Class.method`, or the method alone) is timed."""
    return name.rpartition(".")[2].startswith(TIME)


def step_class(name: str) -> str:
    """The step class a class name (or a Costs class's) stands for: its family's."""
    return name.removesuffix(COSTS)


def costs_class(name: str) -> str:
    """The Costs twin of a step class (`module.Class`, or the class alone)."""
    return f"{step_class(name)}{COSTS}"


def on_gpu(values: Iterable[str]) -> bool:
    """Whether a point's params (asv's reprs) put it on the GPU."""
    return GPU in values
