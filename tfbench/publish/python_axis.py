"""The newest release on every Python measured: the grid points whose leak verdict, kept
bytes, garbage or heap peak differ from the history's Python's beyond the gate's floors.
Each is a finding, with the command that measures it again on both Pythons."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from tfbench import escape, figures
from tfbench.history import pythons
from tfbench.publish import families
from tfbench.publish.results import MachineResults
from tfbench.units import format_value

# the heap's figures compared (tfbench.figures), by their floors: the gate's, one reading a side
COMPARED = ("retained", "garbage", "heap-peak")


@dataclass(frozen=True)
class Finding:
    point: str  # family(label)
    python: str
    text: str
    # measures it again, on the release, on that Python (--python 3.11: the base); None
    # where no catalog scenario has the point
    command: str | None


@dataclass(frozen=True)
class PythonSection:
    release: str
    pythons: list[str]  # measured on the release, besides the history's
    findings: list[Finding]


def _measured(machine: MachineResults, release: str) -> list[str]:
    return sorted(
        p for p, values in machine.pythons.items() if any(t == release for _, _, t in values)
    )


def _differences(
    machine: MachineResults, family: families.Family, combo: tuple, release: str, python: str
) -> list[str]:
    base, other = pythons.DEFAULT, python
    texts = []
    a_leak, b_leak = (
        machine.value(family.benchmark("leak"), combo, release, p) for p in (base, other)
    )
    if a_leak is not None and b_leak is not None and (a_leak >= 1) != (b_leak >= 1):
        texts.append(f"leaks on {other if b_leak >= 1 else base} only")
    for metric in COMPARED:
        figure = figures.BY_NAME[metric]
        a, b = (machine.value(family.benchmark(metric), combo, release, p) for p in (base, other))
        if a is not None and b is not None and figures.apart(metric, [a], [b]):
            a_text, b_text = (format_value(v, figure.unit, per="iteration") for v in (a, b))
            texts.append(f"{figure.label} {a_text} on {base}, {b_text} on {other}")
    return texts


def _command(family: families.Family, combo: tuple, release: str, python: str) -> str | None:
    scenario = families.scenario_of(family, combo)
    if scenario is None:
        return None
    sid, params = scenario
    args = [f"--param={k}={v}" for k, v in params.items()]
    command = [
        *("tfbench", "measure", sid, *args),
        *("--releases", release.removeprefix("v"), "--python", python),
    ]
    return f"{escape.command(command)}  # and --python {pythons.DEFAULT}"


def across_pythons(machine: MachineResults, fams: list[families.Family]) -> PythonSection | None:
    """The newest release's findings across Pythons; None where it was measured on the
    history's Python only."""
    if not machine.releases:
        return None
    release = machine.releases[-1]
    others = _measured(machine, release)
    if not others:
        return None
    found = []
    for family, python in itertools.product(fams, others):
        for combo in itertools.product(*family.params):
            texts = _differences(machine, family, combo, release, python)
            if texts:
                point = f"{family.name}({family.label(combo)})"
                command = _command(family, combo, release, python)
                found.append(Finding(point, python, "; ".join(texts), command))
    return PythonSection(release, others, found)
