"""The benchmark families of the results: their grids, the metrics shown, point labels."""

from __future__ import annotations

import ast
import itertools
from dataclasses import dataclass

from tfbench import figures, probes, scenarios
from tfbench.publish.results import MachineResults

# A family's table: time and the heap's figures (what a step keeps, its peak; tfbench.figures
# names); RSS's figures are plotted beside them. Results measured before the heap was read
# show RSS's instead.
CELL = ("time", "heap-peak", "retained")
RSS_OF = {f.heap: f.name for f in figures.FIGURES if f.heap}


@dataclass
class Family:
    name: str  # the step benchmark class, e.g. loops.MatrixPower
    param_names: list[str]
    params: list[list[str]]

    @property
    def costs(self) -> str:
        """The class of the family's probe costs (track_)."""
        return f"{self.name}Costs"

    def benchmark(self, metric: str) -> str:
        """The benchmark reporting a figure (tfbench.figures' name) of the family."""
        figure = figures.BY_NAME[metric]
        return f"{self.costs if figure.probed else self.name}.{figure.method}"

    def label(self, combo: tuple[str, ...]) -> str:
        return probes.GridPoint(self.name, combo).label(self.param_names)

    def match(self, want: dict[str, str]) -> tuple[str, ...] | None:
        """The CPU grid point with `want`'s values and the first value of every other param."""
        given = {n: p[0] for n, p in zip(self.param_names, self.params)}
        given.update(want, device=repr("CPU"))
        combo = tuple(given[n] for n in self.param_names)
        return combo if all(c in p for c, p in zip(combo, self.params)) else None


def families(benchmarks: dict[str, dict]) -> list[Family]:
    found = {}
    for name, bench in benchmarks.items():
        cls, _, method = name.rpartition(".")
        if method == "time_step":
            found[cls] = Family(cls, bench["param_names"], bench["params"])
    return [found[k] for k in sorted(found)]


def scenario_of(family: Family, combo: tuple[str, ...]) -> tuple[str, dict] | None:
    """The catalog scenario and params of a CPU grid point, None where no scenario has it
    (NumPy under a tape); a scenario without a device param (an article's example) runs
    on the default device."""
    params = {n: ast.literal_eval(v) for n, v in zip(family.param_names, combo)}
    variant = params.pop("variant")
    if params.get("device", "CPU") != "CPU":
        return None
    for sid, scenario in scenarios.CATALOG.items():
        if sid.split(".", 1)[1] == variant:
            try:
                scenario.bind(params)
                return sid, params
            except scenarios.ParamError:
                continue
    return None


def rows(
    family: Family, machine: MachineResults
) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]]]:
    """(grid points with a value on some release here, CPU points of a scenario with none:
    skipped or failing on every release, such as GPU-only settings)."""
    measured, empty = [], []
    for combo in itertools.product(*family.params):
        if any(
            machine.value(family.benchmark(m), combo, tag) is not None
            for m in ("time", "growth")
            for tag in machine.releases
        ):
            measured.append(combo)
        elif scenario_of(family, combo):
            empty.append(combo)
    return measured, empty


def reason(
    family: Family, machine: MachineResults, combo: tuple[str, ...], tag: str
) -> str | None:
    """Why the probe has no figures for this point on this release, where it was kept."""
    point = probes.GridPoint(family.costs, combo)
    return machine.reasons.get((family.costs.rpartition(".")[2], point.key, tag))
