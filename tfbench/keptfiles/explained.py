"""Why the leaking points of a release leak, as `tfbench explain --leaking` found it
(tfbench.cli.explain makes it): results/explain/<machine>/<tag>.json, {"release": tag,
"points": {point: its explaining record}, "cpu": the CPU it was read on}, a point named as
the report names it (family(param values))."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, TypedDict

from tfbench import cpu, grammar
from tfbench.grammar import field, optional
from tfbench.keptfiles import fields, reading
from tfbench.measure.record import STATUSES

FORMAT = 1
FOLDER = "explain"
INSIDE = 2  # explain/<machine>/


def named(name: str) -> bool:
    return name.endswith(".json") and bool(grammar.TAG.fullmatch(name[:-5]))


def path(results_dir: Path, machine: str, tag: str) -> Path:
    return results_dir / FOLDER / machine / f"{tag}.json"


def _explanation(value: Any, where: str) -> str:
    data = grammar.obj(value, where)
    conclusion = optional(grammar.text)(data.get("conclusion"), f"{where}.conclusion")
    if conclusion:
        return conclusion
    status = field(data, "status", grammar.one_of(STATUSES), where)
    error = optional(grammar.text)(data.get("error"), f"{where}.error")
    return f"{status}: {error}"


class Explained(TypedDict):
    release: Annotated[str, grammar.tag]
    # point -> its one-line conclusion, or why there is none (from its explaining record)
    points: Annotated[dict[str, str], grammar.mapping_of(grammar.point, _explanation)]
    # where it was read (None: kept before 2026-12-02)
    cpu: Annotated[cpu.Identity | None, optional(fields.cpu_identity)]


_explained = grammar.schema(Explained)


def check(value: Any) -> Explained:
    data = grammar.obj(value, "")
    reading.format_of(data, FORMAT)
    return _explained(data, "")


def read(path: Path) -> Explained:
    """A kept explaining run (results/explain/<machine>/<tag>.json)."""
    return reading.read(path, check)


def write(where: Path, run: dict[str, Any]) -> Path:
    """A run's `release`, `points` and `cpu` kept at `where`."""
    return reading.write(where, {reading.KEY: FORMAT, **run}, check)
