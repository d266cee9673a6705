"""What the asv benchmark classes share: grid points, warm steps, probe records, versions.

A grid's first param is `variant`; `FAMILY.variant` names the scenario, the rest are its
params. Grid points a scenario lacks, devices absent here and patterns that fail on the
installed release all become skips with the reason (asv shows them as n/a).
"""

from __future__ import annotations

import abc
import inspect
import itertools
import json
import os
import re
import shutil
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

# asv's forkserver (asv.conf.json) imports the benchmark modules once and forks every
# benchmark from that process: importing TensorFlow here spares each one the import.
import tensorflow  # noqa: F401

from tfbench import scenarios, sources, targets
from tfbench.measure import child, record
from tfbench.measure.devices import Unsupported


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
        try:
            step = scenarios.get(scenario_id).benchmark_step(**params)
            step()
        except Unsupported:
            raise
        except Exception as e:  # the pattern fails on this release: record why, as a skip
            reason = f"{scenario_id} fails here: {type(e).__name__}: {e}"
            print(reason, file=sys.stderr)
            raise Unsupported(reason) from e
        _WARM[key] = step
    return _WARM[key]


def _key(values: tuple) -> str:
    return "|".join(map(str, values))


# Every probe grid point is measured in this many fresh processes: a comparison then sees
# each side's spread, not one number. `tfbench gate` measures once per round instead.
REPEATS = int(os.environ.get("TFBENCH_REPEATS", "3"))


def measure_grid(
    family: str, params: list, names: list[str], workers: int = 2, repeats: int = REPEATS
) -> dict[str, list[record.Record]]:
    """Probe every grid point `repeats` times, each in a child forked from this process
    (asv's setup_cache: TensorFlow imported, not started), two at a time, the whole grid
    once before it is measured again (slow drift spreads over every point); skips carry
    their reason.

    Whether a device is usable is asked in the child: asking here would start TensorFlow.
    """
    results: dict[str, list[record.Record]] = {}
    todo = {}
    for values in itertools.product(*params):
        scenario_id, point = _point(family, names, values)
        try:
            scenarios.get(scenario_id).bind(point)
            todo[_key(values)] = {"scenario": scenario_id, "params": point}
        except scenarios.ParamError as e:
            results[_key(values)] = [{"status": "skipped", "error": str(e)}]
    measured = targets.measure_forked(list(todo.values()) * repeats, workers=workers)
    for k, key in enumerate(todo):
        results[key] = measured[k :: len(todo)]
    return results


def reading(cache: dict[str, list[record.Record]], values: tuple) -> record.Record:
    """The probe's record for a grid point (its repeats combined), or a skip with its reason."""
    result = record.combine(cache[_key(values)])
    if not record.measured(result):
        raise Unsupported(f"{result['status']}: {result.get('error')}")
    return result


def keep_outcomes(costs_class: str, cache: dict[str, list[record.Record]]) -> Path | None:
    """Write every repeat of every grid point (status, error, figures) beside asv's results,
    which keep one number per point: a comparison sees each side's spread, and the report
    why a point has no value (a pattern that fails on a release, a device missing).
    RESULTS/probes/<commit>-<environment>-<cpu|gpu>.json, one key per Costs class, named like
    results/packages/. Nothing is written outside an asv run (no ASV_COMMIT)."""
    commit, conf_dir = os.environ.get("ASV_COMMIT"), os.environ.get("ASV_CONF_DIR")
    if not commit or not conf_dir:
        return None
    try:
        text = (Path(conf_dir) / "asv.conf.json").read_text()
        conf = json.loads(re.sub(r"^\s*//.*$", "", text, flags=re.M))
    except (OSError, ValueError):
        return None
    path = (
        Path(conf_dir)
        / conf.get("results_dir", "results")
        / "probes"
        / f"{commit[:8]}-{os.environ.get('ASV_ENV_NAME', 'env')}-"
        f"{os.environ.get('TFBENCH_WHEELS', 'cpu')}.json"
    )
    try:
        kept = json.loads(path.read_text())
    except (OSError, ValueError):
        kept = {}
    kept[costs_class] = {key: [record.kept(r) for r in runs] for key, runs in cache.items()}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(kept, indent=1, sort_keys=True))
    return path


def version(*family_modules: ModuleType) -> str:
    """asv `version` of a family's benchmarks: the source of this module, the family's
    scenario module(s) and every tfbench module they import, transitively (asv's default
    hashes the benchmark's own source only, so results of changed code would pass as
    comparable). Other families' modules are not reached: adding one changes no version."""
    modules = [sys.modules[__name__], *family_modules]
    return sources.digest(
        sources.closure([Path(inspect.getfile(m)) for m in modules], [m.__name__ for m in modules])
    )


class _Family(abc.ABC):
    """A family's grid; abstract until a benchmark module gives it a `version` (asv skips
    abstract classes, so these bases are not benchmarks themselves)."""

    family: str
    params: list
    param_names: list[str]

    @property
    @abc.abstractmethod
    def version(self) -> str:
        """step_version / costs_version of the family's scenario module(s)."""


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


class ProbeCosts(_Family):
    """The probe's costs for each grid point, measured REPEATS times per environment.

    Subclasses define `setup_cache` as `return self.measure()`: asv keys the cache by where
    setup_cache is written, so an inherited one would be shared between families.
    """

    def measure(self) -> dict[str, list[record.Record]]:
        cache = measure_grid(self.family, self.params, self.param_names)
        keep_outcomes(self.__class__.__name__, cache)
        return cache

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


class _Figures(abc.ABC):
    @abc.abstractmethod
    def _figure(self, name: str) -> Any:
        """The probe's figure `name` for this grid point (ProbeCosts)."""


class GraphOps(_Figures):
    """Mixin: the number of operations in the graph the pattern builds on, after the run."""

    def track_graph_ops(self, cache, *params):
        return self._figure("graph_ops")

    track_graph_ops.unit = "operations"


class Traces(_Figures):
    """Mixin: how many times tf.function traced during the run."""

    def track_traces(self, cache, *params):
        return self._figure("traces")

    track_traces.unit = "traces"
