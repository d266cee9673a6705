"""What the asv benchmark classes share: warm steps, the probe's figures, versions.

A grid's first param is `variant`; `FAMILY.variant` names the scenario, the rest are its
params (tfbench.probes holds that contract). Grid points a scenario lacks, devices absent
here and patterns that fail on the installed release all become skips with the reason
(asv shows them as n/a).
"""

from __future__ import annotations

import abc
import os
import shutil
import signal
import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any

from tfbench import figures, probes, scenarios, targets, versions
from tfbench.measure import child, record


def _end_with_asv() -> None:
    """asv's forkserver, and every benchmark process, exits when the asv run that started it
    dies: a killed `asv run` would otherwise leave the forkserver (TensorFlow imported,
    ~0.5 GiB, its own process group) and its asv-forkserver-* directory behind."""
    if "asv_runner" not in sys.modules:
        return  # not started by asv
    server = os.getpid() if sys.argv[1:2] == ["run_server"] else None

    def on_parent_death(signum: int, frame: Any) -> None:
        if os.getpid() == server:  # the forkserver: its socket's directory goes too
            shutil.rmtree(os.path.dirname(sys.argv[3]), ignore_errors=True)
        os._exit(128 + signum)

    signal.signal(signal.SIGTERM, on_parent_death)
    child.die_with_parent(signal.SIGTERM, os.getppid())


_end_with_asv()


_WARM: dict[tuple, Callable[[], Any]] = {}


def warm_step(family: str, names: list[str], *values: Any) -> Callable[[], Any]:
    """The step of one grid point, called once already (traces, caches, first allocations).

    Kept for the process: asv re-runs `setup` before every timing sample.
    """
    key = (family, *values)
    if key not in _WARM:
        point = probes.target(family, names, values)
        make = scenarios.get(point.scenario).benchmark_step
        _WARM[key] = targets.warmed(point.scenario, lambda: make(**point.params))
    return _WARM[key]


def version(scenario_module: ModuleType) -> str:
    """asv `version` of a family's benchmarks, as benchmarks/versions.json records it for
    the code that measures them (tfbench.versions): tidying the code keeps it, a change to
    what is measured gets a new one."""
    return versions.family(scenario_module.__name__.rpartition(".")[2]).current


class _Versioned(abc.ABC):
    """Abstract until a benchmark module gives it a `version` (asv skips abstract classes,
    so these bases and mixins are not benchmarks themselves)."""

    @property
    @abc.abstractmethod
    def version(self) -> str:
        """The family's version (`version` of its scenario modules)."""


class _Family(_Versioned):
    """A family's grid."""

    family: str
    params: list
    param_names: list[str]


class StepBenchmark(_Family):
    """asv's own figures (the card) for one step of a family's scenario, warmed up once.

    A benchmark module subclasses it with `family`, `params`, `param_names` (the first
    is `variant`) and `version`.
    """

    param_names: list[str]
    processes = 1  # each process imports TensorFlow (~4 s): asv's default 2 rounds double that
    timeout = 120

    def setup(self, *params):
        self.step = warm_step(self.family, self.param_names, *params)

    def time_step(self, *params):
        self.step()

    def peakmem_step(self, *params):
        self.step()


def track(method: str) -> Callable[..., Any]:
    """asv's `track_` benchmark of a probe figure (tfbench.figures): skipped where the
    grid point has no such figure."""

    def track(self, cache, *params):
        found = figures.BY_METHOD[method].of(self.result)
        if found is None:
            from asv_runner.benchmarks.mark import SkipNotImplemented

            raise SkipNotImplemented(f"{method} is not measured for this case")
        return found

    track.__name__ = track.__qualname__ = method
    track.unit = figures.BY_METHOD[method].unit
    return track


class ProbeCosts(_Family):
    """The probe's costs for each grid point, measured probes.REPEATS times per environment.

    Subclasses define `setup_cache` as `return self.measure()`: asv keys the cache by where
    setup_cache is written, so an inherited one would be shared between families.
    """

    def measure(self) -> probes.Grid:
        costs = type(self)
        module = (costs.__module__,)  # registers the family's scenarios
        prefix = f"{costs.__module__.partition('.')[2]}.{costs.__name__}"  # asv's name
        asked = probes.selected([f"{prefix}.{m}" for m in dir(costs) if m.startswith("track_")])
        journal = probes.journal(costs.__name__, self.version)
        from asv_runner.benchmarks._base import get_setup_cache_key

        key = get_setup_cache_key(costs.setup_cache)  # as asv times it
        grid = probes.measure_grid(
            self.family,
            self.params,
            self.param_names,
            module,
            asked=asked,
            journal=journal,
            setup_cache=key,
        )
        probes.keep(self.__class__.__name__, grid)
        return grid

    def setup(self, cache, *params):
        self.result = probes.reading(cache, params)


# a track_ benchmark for every figure a probe's repeat keeps (tfbench.measure.record.KEPT)
for _figure in figures.FIGURES:
    if _figure.probed and _figure.field in record.KEPT:
        setattr(ProbeCosts, _figure.method, track(_figure.method))


class GraphOps(_Versioned):
    """Mixin: the number of operations in the graph the pattern builds on, after the run."""

    track_graph_ops = track("track_graph_ops")


class Traces(_Versioned):
    """Mixin: how many times tf.function traced during the run."""

    track_traces = track("track_traces")
