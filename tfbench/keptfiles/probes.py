"""The probes file: results/probes/<machine>/<commit8>-<env>-<cpu|gpu>.json, every repeat of
every probe grid point of one asv run (tfbench.probes measures them), with the CPU that read
them. Format 2; format 1 (no CPU) is read too."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tfbench import cpu, grammar
from tfbench.grammar import field
from tfbench.history.envsync import record_name
from tfbench.keptfiles import fields, reading

FORMAT = 2
FOLDER = "probes"
INSIDE = 2  # probes/<machine>/


def named(name: str) -> bool:
    return name.endswith(".json") and bool(grammar.RECORD_NAME.fullmatch(name[:-5]))


def path(results_dir: Path, machine: str, commit: str, env_name: str, flavour: str) -> Path:
    """A probes file: one machine's, of one asv environment and commit."""
    return results_dir / FOLDER / machine / f"{record_name(commit, env_name, flavour)}.json"


Probes = dict[str, dict[str, list[dict[str, Any]]]]  # Costs class -> grid key -> records


def check(value: Any) -> Probes:
    """Every Costs class's grid, and the CPU that read it."""
    data = grammar.obj(value, "")
    reading.format_of(data, FORMAT)
    field(data, "cpu", fields.cpu_identity)
    found: Probes = {}
    for costs, points in data.items():
        if costs in (reading.KEY, "cpu"):
            continue
        grammar.identifier(costs, "Costs class")
        found[costs] = grammar.mapping(points, costs, grammar.grid_key, fields.records)
    return found


def read(path: Path) -> Probes:
    """A probes file (results/probes/<machine>/<commit>-<env>-<kind>.json)."""
    return reading.read(path, check)


def beside(
    results_dir: Path, machine: str, commit: str, env_name: str, problems: list[str] | None = None
) -> Probes:
    """The probe repeats kept beside one results file of `machine` (`add`); a
    file that is not of its form is left out and named in `problems`."""
    kept: Probes = {}
    pattern = f"{record_name(commit, env_name, '*')}.json"
    for found in sorted((results_dir / FOLDER / machine).glob(pattern)):
        try:
            kept.update(read(found))
        except reading.KeptFileError as e:
            if problems is not None:
                problems.append(str(e))
    return kept


def add(
    where: Path, costs: str, grid: dict[str, list[dict[str, Any]]], identity: cpu.Identity
) -> Path:
    """One Costs class's grid (key -> its repeats' records) kept in the run's probes file,
    beside the classes this run kept before it, with the CPU that read them."""
    try:  # this run's earlier classes: this machine's own file
        kept = reading.load(where, INSIDE)
        kept = kept if isinstance(kept, dict) else {}
    except reading.KeptFileError:
        kept = {}
    kept[costs] = grid
    kept[reading.KEY] = FORMAT
    kept["cpu"] = identity
    return reading.write(where, kept, check, sort_keys=True)
