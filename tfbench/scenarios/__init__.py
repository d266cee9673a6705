"""The scenario catalog: each seed pattern written once, for benchmarks, CLI and tests.

loops      matrix power: Python loops of tf.matmul, tf.while_loop, tf.function, NumPy
functions  tf.function: accumulation in a loop, retracing
graphs     graph construction in a loop against eager, and TF1 sessions
predict    model.predict, model(x), predict_on_batch and kin in a loop
threads    sessions shared by threads, or one a thread
footprint  what TensorFlow itself holds after import and one op
articles   the five articles' fifteen examples, as written
reported   memory reports from TensorFlow's issue tracker, each its reporter's reproducer

A scenario's `prepare(**params)` builds its inputs and returns the step, a no-argument
callable that does the pattern's unit of work once; the probe calls it per iteration. A
step may carry `counters()`, returning counts the pattern is about (graph operations,
tf.function traces), read once after the run.
Params map to their values in the benchmark grid (the first is the default). Integer
params accept any positive value from the CLI; text params only their listed choices.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tfbench.measure.devices import Unsupported


class ParamError(ValueError):
    """A param that does not exist or has a value the scenario cannot take."""


@dataclass(frozen=True)
class Scenario:
    id: str
    description: str
    prepare: Callable[..., Callable[[], Any]]
    params: dict[str, tuple] = field(default_factory=dict)
    iterations: int = 40  # default probe iterations
    warmup: int = 10
    tensorflow: bool = True  # its measuring process imports TensorFlow once for its children

    def bind(self, given: dict[str, Any]) -> dict[str, Any]:
        """Full params from defaults and `given` (values may be text, as typed on a CLI)."""
        unknown = sorted(set(given) - set(self.params))
        if unknown:
            raise ParamError(
                f"{self.id} has no param {', '.join(unknown)}; "
                f"its params: {', '.join(self.params) or 'none'}"
            )
        bound = {}
        for name, choices in self.params.items():
            value = given.get(name, choices[0])
            if isinstance(choices[0], int):
                try:
                    value = int(value)
                except (TypeError, ValueError):
                    value = 0
                if value < 1:
                    raise ParamError(
                        f"{self.id}: {name} must be a positive integer, got {given.get(name)!r}"
                    )
            elif value not in choices:
                raise ParamError(
                    f"{self.id}: {name}={value!r} is not one of {', '.join(map(str, choices))}"
                )
            bound[name] = value
        return bound

    def step(self, **given: Any) -> Callable[[], Any]:
        return self.prepare(**self.bind(given))

    def benchmark_step(self, **given: Any) -> Callable[[], Any]:
        """The step for a benchmark grid point; a point this scenario lacks is a skip."""
        try:
            params = self.bind(given)
        except ParamError as e:
            raise Unsupported(str(e)) from None
        return self.prepare(**params)


CATALOG: dict[str, Scenario] = {}


def register(scenario: Scenario) -> Scenario:
    if scenario.id in CATALOG:
        raise ValueError(f"scenario {scenario.id} registered twice")
    CATALOG[scenario.id] = scenario
    return scenario


def register_family(
    table: dict[str, tuple[Callable[..., Callable[[], Any]], str]],
    params: dict[str, tuple],
    iterations: int,
    warmup: int,
) -> None:
    """Register scenarios that share params: `table` maps id -> (prepare, description)."""
    for scenario_id, (prepare, description) in table.items():
        register(Scenario(scenario_id, description, prepare, dict(params), iterations, warmup))


def variants(ids) -> list[str]:
    """Scenario ids without their family prefix, in order: a benchmark's `variant` values."""
    return [sid.split(".", 1)[1] for sid in ids]


def get(scenario_id: str) -> Scenario:
    try:
        return CATALOG[scenario_id]
    except KeyError:
        raise ParamError(
            f"unknown scenario {scenario_id!r}; choose from: {', '.join(sorted(CATALOG))}"
        ) from None


def _register_families() -> None:
    """Import every module of this package: importing a family registers its scenarios.
    (Listing them here would put every family's name into every benchmark's version.)"""
    import importlib
    import pkgutil

    for module in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{module.name}")


_register_families()
