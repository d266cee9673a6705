"""The probe's contract: what the suite's Costs benchmarks measure and keep, and how
everything else (the gate, the report) reads it back.

- A family's grid: its first param is `variant`, and `FAMILY.variant` names the scenario;
  the other params are the scenario's. A grid point's key joins its values with "|".
- What each `track_` benchmark reports of a probe's record: tfbench.figures.
- The probes file: every repeat of every grid point (status, reason, figures), beside
  asv's results, which keep one number a point:
  RESULTS/probes/<machine>/<commit>-<env>-<flavour>.json (named like results/packages/),
  {Costs class: {key: [kept record, ...]}, "cpu": the CPU it was read on (tfbench.cpu),
  "format": 2}.
"""

from __future__ import annotations

import ast
import itertools
import os
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, NamedTuple

from tfbench import cpu, keptfiles, naming, scenarios
from tfbench.history import asvconf
from tfbench.history import journal as journals
from tfbench.history.envsync import asv_machine, folder_name
from tfbench.measure import record
from tfbench.measure.devices import Unsupported
from tfbench.measure.record import Record
from tfbench.targets import DEFAULTS, Limits, ScenarioTarget, Step, measure_spawned, to_json

Grid = dict[str, list[Record]]  # key -> each repeat's record
# Every probe grid point is measured in this many fresh processes: a comparison then sees
# each side's spread, not one number. `tfbench gate` measures once per round instead.
REPEATS_VAR = "TFBENCH_REPEATS"
REPEATS = int(os.environ.get(REPEATS_VAR, "3"))
# A smoke run (the suite's test, with asv's --quick, whose results asv does not save:
# whether every point runs, not what it reads): this many iterations a point, a quarter of
# them warm-up, in one process (a spread is read of three), no rounds confirming a window
# that grew a little (31 times its calls, which at so few calls every TensorFlow point of
# the loop grid read), and its probes never kept.
SMOKE_VAR = "TFBENCH_SMOKE_ITERATIONS"
# The asv run's --bench, which `tfbench gate` passes its probes: a grid point no benchmark of
# the run asks for is not measured (asv calls setup_cache for the whole grid).
SELECTION = "TFBENCH_SELECTION"


def key(values: Iterable[Any]) -> str:
    """A grid point's key, from the values the benchmark is called with."""
    return "|".join(map(str, values))


class GridPoint(NamedTuple):
    """One point of a benchmark's grid, the one shape of it: the benchmark (a method, e.g.
    loops.MatrixPowerCosts.track_leak, or a family's step class) and asv's reprs of its
    param values, as asv's results hold them. A plain (benchmark, combo) tuple is equal."""

    benchmark: str
    combo: tuple[str, ...]

    @property
    def key(self) -> str:
        """Its key in the probes file."""
        return key(ast.literal_eval(v) for v in self.combo)

    @property
    def name(self) -> str:
        """As `asv compare` prints it and asv's --bench matches it: benchmark(values)."""
        return f"{self.benchmark}({', '.join(self.combo)})" if self.combo else self.benchmark

    @property
    def family(self) -> str:
        """A method's family: its step class (a probe's Costs class is the same family)."""
        return naming.step_class(self.benchmark.rpartition(".")[0])

    def label(self, names: Iterable[str]) -> str:
        """name=value, ... of its params."""
        return ", ".join(f"{n}={v.strip(chr(39))}" for n, v in zip(names, self.combo))


def selected(benchmarks: list[str]) -> Callable[[tuple], bool]:
    """Whether the asv run under way asks for a grid point: its --bench (SELECTION) selects
    one of `benchmarks` (a Costs class's, named as asv names them) there, as asv selects, by
    a search in name(param values' reprs); every point where the run says nothing."""
    pattern = os.environ.get(SELECTION)
    if not pattern:
        return lambda values: True
    return lambda values: any(
        re.search(pattern, GridPoint(b, tuple(map(repr, values))).name) for b in benchmarks
    )


def target(family: str, names: list[str], values: tuple) -> ScenarioTarget:
    """The scenario and params of a grid point."""
    params = dict(zip(names, values))
    return ScenarioTarget(f"{family}.{params.pop('variant')}", params)


def measure_grid(
    family: str,
    params: list,
    names: list[str],
    imports: tuple[str, ...] = (),
    workers: int = 2,
    repeats: int = REPEATS,
    asked: Callable[[tuple], bool] = lambda values: True,
    journal: Path | None = None,
    setup_cache: str | None = None,
) -> Grid:
    """Probe every grid point `repeats` times (a smoke run's once), each in a child forked
    from one measuring process (targets.measure_spawned: a fresh one, or the run's,
    tfbench.measure.parents; TensorFlow and `imports`, the modules that register the
    family's scenarios, imported), two at a time, the whole grid once before it is
    measured again (slow drift spreads over every point); a point its scenario lacks is a
    skip with the reason, a point not `asked` for is left out. Whether a device is usable
    is asked in the child: asking would start TensorFlow. A `journal`
    (tfbench.history.journal) keeps the readings as they come, and gives back those a run
    that stopped kept, with the seconds they took (`setup_cache`: asv's key of the
    setup_cache reading the grid)."""
    grid: Grid = {}
    todo: dict[str, Step] = {}
    for values in filter(asked, itertools.product(*params)):
        point = target(family, names, values)
        try:
            scenarios.get(point.scenario).bind(point.params)
            todo[key(values)] = point
        except scenarios.ParamError as e:
            grid[key(values)] = [{"status": "skipped", "error": str(e)}]
    smoke = int(os.environ.get(SMOKE_VAR) or 0)
    limits = Limits(iterations=smoke, warmup=smoke // 4, confirm=False) if smoke else DEFAULTS
    steps = list(todo.values()) * (1 if smoke else repeats)
    if journal is None:
        measured = measure_spawned(steps, limits, workers=workers, imports=imports)
    else:
        specs = [{"target": to_json(s), "limits": limits.to_json()} for s in steps]
        measured = journals.measured(
            journal,
            specs,
            lambda chosen: measure_spawned(
                [steps[k] for k in chosen], limits, workers=workers, imports=imports
            ),
            setup_cache=setup_cache,
        )
    for k, point_key in enumerate(todo):
        grid[point_key] = measured[k :: len(todo)]
    return grid


def journal(costs_class: str, version: str) -> Path | None:
    """Where a Costs grid's readings are journaled in this run: a history run's, else None
    (tfbench.history.journal)."""
    return journals.path(costs_class, version)


def reading(grid: Grid, values: tuple) -> Record:
    """The record a benchmark reports for a grid point (its repeats combined), or a skip
    with the reason none measured."""
    result = record.combine(grid[key(values)])
    if not record.measured(result):
        raise Unsupported(f"{result['status']}: {result.get('error')}")
    return result


def keep(costs_class: str, grid: Grid) -> Path | None:
    """Write every repeat of every grid point into the probes file of the asv run under way
    (asv's ASV_COMMIT, ASV_CONF_DIR, ASV_ENV_NAME; its machine; TFBENCH_WHEELS): nothing is
    written outside an asv run, in a smoke run, nor for a machine whose name is no folder's."""
    commit, conf_dir = os.environ.get("ASV_COMMIT"), os.environ.get("ASV_CONF_DIR")
    if not commit or not conf_dir or os.environ.get(SMOKE_VAR):
        return None
    try:
        conf = asvconf.read(Path(conf_dir) / "asv.conf.json")
    except (OSError, ValueError):
        return None
    machine = asv_machine()
    if not folder_name(machine):
        print(f"tfbench: probes not kept: machine name {machine!r} is no folder's", flush=True)
        return None
    kept_path = keptfiles.probes.path(
        Path(conf_dir) / conf.get("results_dir", "results"),
        machine,
        commit,
        os.environ.get("ASV_ENV_NAME", "env"),
        os.environ.get("TFBENCH_WHEELS", "cpu"),
    )
    kept = {k: [record.kept(r) for r in repeats] for k, repeats in grid.items()}
    return keptfiles.probes.add(kept_path, costs_class, kept, cpu.identity())
