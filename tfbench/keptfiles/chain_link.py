"""A release chained onto a history (`tfbench results chain`, tfbench.publish.chain makes
it): results/chain/<history>/<commit8>-<env>.json, each time point moved by the pairs a gate
read, and the CPUs that read them."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypedDict

from tfbench import cpu, grammar
from tfbench.grammar import Invalid, field
from tfbench.keptfiles import fields, reading

FORMAT = 1
READS: tuple[int, ...] = ()
FOLDER = "chain"
INSIDE = 2  # chain/<history>/


def named(name: str) -> bool:
    return name.endswith(".json") and bool(grammar.RESULTS_NAME.fullmatch(name[:-5]))


def path(results_dir: Path, history: str, commit: str, env: str) -> Path:
    return results_dir / FOLDER / history / f"{commit[:8]}-{env}.json"


class ChainPoint(fields.TimePoint):
    before: float  # the history's figure for the release before
    value: float  # it, moved by the pairs' estimate
    spread: list[float]  # the chain's interval as factors of `value`, since the history read


class ChainLink(TypedDict):
    release: str
    before: str
    env: str
    gate: str  # the machine whose kept gate run read the pairs
    raw: str  # the machine that read the release's figures
    cpus: dict[str, cpu.Identity]  # the CPUs its pairs were read on (each point names its)
    links: int  # since the history last read a release itself
    points: list[ChainPoint]


def _chain_point(value: Any, where: str) -> ChainPoint:
    point = fields.time_point(value, where)
    if point["ratio"] is None:
        raise Invalid(f"{where}.ratio", "missing: a chained point moves by its estimate")
    if point["cpu"] is None:
        raise Invalid(f"{where}.cpu", "missing: a chained point names the CPU of its pairs")
    data = grammar.obj(value, where)
    found = ChainPoint(
        **point,
        before=field(data, "before", fields.positive, where),
        value=field(data, "value", fields.positive, where),
        spread=field(data, "spread", fields.pair_of(fields.positive), where),
    )
    low, high = found["spread"]
    if not low <= 1 <= high:
        raise Invalid(f"{where}.spread", f"{found['spread']!r} does not hold the estimate")
    return found


def check(value: Any) -> ChainLink:
    data = grammar.obj(value, "")
    reading.format_of(data, FORMAT)
    found = ChainLink(
        release=field(data, "release", grammar.tag),
        before=field(data, "before", grammar.tag),
        env=field(data, "env", grammar.matching(grammar.ENVIRONMENT)),
        gate=field(data, "gate", grammar.machine),
        raw=field(data, "raw", grammar.machine),
        cpus=field(data, "cpus", fields.cpus),
        links=field(data, "links", fields.count(1 << 20)),
        points=field(data, "points", lambda v, f: grammar.each(v, f, _chain_point)),
    )
    for k, point in enumerate(found["points"]):
        fields.known(found["cpus"], "cpus")(point["cpu"], f"points[{k}].cpu")
    return found


def read(path: Path) -> ChainLink:
    """A release chained onto a history (results/chain/<history>/<commit>-<env>.json)."""
    return reading.read(path, check)


def write(where: Path, link: dict[str, Any]) -> Path:
    return reading.write(where, {reading.KEY: FORMAT, **link}, check)
