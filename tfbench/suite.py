"""What the asv benchmark classes share: grid points, warm steps, probe readings, versions.

A grid's first param is `variant`; `FAMILY.variant` names the scenario, the rest are its
params. Grid points a scenario lacks, devices absent here and patterns that fail on the
installed release all become skips with the reason (asv shows them as n/a).
"""

from __future__ import annotations

import hashlib
import inspect
import itertools
import sys
from types import ModuleType
from typing import Any, Callable

# asv's forkserver (asv.conf.json) imports the benchmark modules once and forks every
# benchmark from that process: importing TensorFlow here spares each one the import.
import tensorflow  # noqa: F401

from tfbench import scenarios
from tfbench.devices import Unsupported


def _point(family: str, names: list[str], values: tuple) -> tuple[str, dict[str, Any]]:
    params = dict(zip(names, values))
    return f"{family}.{params.pop('variant')}", params


_WARM: dict[tuple, Callable[[], Any]] = {}


def warm_step(family: str, names: list[str], *values: Any) -> Callable[[], Any]:
    """The step of one grid point, called once already (traces, caches, first allocations).

    Kept for the process: asv re-runs `setup` before every timing sample.
    """
    key = (family, *values)
    if key not in _WARM:
        scenario_id, params = _point(family, names, values)
        step = scenarios.get(scenario_id).benchmark_step(**params)
        try:
            step()
        except Exception as e:  # the pattern fails on this release: record why, as a skip
            reason = f"{scenario_id} fails here: {type(e).__name__}: {e}"
            print(reason, file=sys.stderr)
            raise Unsupported(reason) from e
        _WARM[key] = step
    return _WARM[key]


def _key(values: tuple) -> str:
    return "|".join(map(str, values))


def measure_grid(family: str, params: list, names: list[str], workers: int = 2) -> dict[str, dict]:
    """Probe every grid point once, each in a child forked from this process (asv's
    setup_cache: TensorFlow imported, not started), two at a time; skips carry their reason.

    Whether a device is usable is asked in the child: asking here would start TensorFlow.
    """
    from tfbench.isolated import measure_forked

    results: dict[str, dict] = {}
    todo = {}
    for values in itertools.product(*params):
        scenario_id, point = _point(family, names, values)
        try:
            scenarios.get(scenario_id).bind(point)
            todo[_key(values)] = {"scenario": scenario_id, "params": point}
        except scenarios.ParamError as e:
            results[_key(values)] = {"status": "skipped", "error": str(e)}
    results.update(zip(todo, measure_forked(list(todo.values()), workers=workers)))
    return results


def reading(cache: dict[str, dict], values: tuple) -> dict[str, Any]:
    """The probe's result for a grid point, or a skip with its reason."""
    result = cache[_key(values)]
    if result["status"] not in ("ok", "over_budget") or not result.get("iterations"):
        raise Unsupported(f"{result['status']}: {result.get('error')}")
    return result


def code_version(*modules: ModuleType) -> str:
    """asv `version` from the source of the code a benchmark measures, which lives here."""
    digest = hashlib.sha256()
    for module in modules:
        digest.update(inspect.getsource(module).encode())
    return digest.hexdigest()[:16]


class StepBenchmark:
    """asv's own figures (the card) for one step of a family's scenario, warmed up once.

    A benchmark module subclasses it with `family`, `params`, `param_names` (the first
    is `variant`) and `version`.
    """

    family: str
    param_names: list[str]
    processes = 1  # each process imports TensorFlow (~4 s): asv's default 2 rounds double that
    timeout = 120

    def setup(self, *params):
        self.step = warm_step(self.family, self.param_names, *params)

    def time_step(self, *params):
        self.step()

    def peakmem_step(self, *params):
        self.step()


class ProbeCosts:
    """The probe's costs for each grid point, measured once per environment.

    Subclasses define `setup_cache` as `return self.measure()`: asv keys the cache by where
    setup_cache is written, so an inherited one would be shared between families.
    """

    family: str
    params: list
    param_names: list[str]

    def measure(self) -> dict[str, dict]:
        return measure_grid(self.family, self.params, self.param_names)

    def setup(self, cache, *params):
        self.result = reading(cache, params)

    def _figure(self, name: str):
        value = self.result.get(name, self.result.get("counters", {}).get(name))
        if value is None:
            from asv_runner.benchmarks.mark import SkipNotImplemented

            raise SkipNotImplemented(f"{name} is not measured for this case")
        return value

    def track_peak_increase(self, cache, *params):
        return self._figure("peak_increase_bytes")

    track_peak_increase.unit = "bytes"

    def track_growth_per_iteration(self, cache, *params):
        return self._figure("growth_bytes_per_iteration")

    track_growth_per_iteration.unit = "bytes/iteration"

    def track_leak(self, cache, *params):
        return int(self._figure("leak"))  # asv flags a release where a pattern starts leaking

    track_leak.unit = "leak (1) or flat (0)"

    def track_allocator_peak(self, cache, *params):
        return self._figure("allocator_peak_bytes")  # GPU only

    track_allocator_peak.unit = "bytes"


class GraphOps:
    """Mixin: the number of operations in the graph the pattern builds on, after the run."""

    def track_graph_ops(self, cache, *params):
        return self._figure("graph_ops")

    track_graph_ops.unit = "operations"


class Traces:
    """Mixin: how many times tf.function traced during the run."""

    def track_traces(self, cache, *params):
        return self._figure("traces")

    track_traces.unit = "traces"
