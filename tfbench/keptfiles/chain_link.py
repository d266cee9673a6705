"""A release chained onto a history (`tfbench results chain`, tfbench.publish.chain makes
it): results/chain/<history>/<commit8>-<env>.json, each time point moved by the pairs a gate
read, and the CPUs that read them."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, TypedDict

from tfbench import cpu, grammar
from tfbench.grammar import Invalid
from tfbench.keptfiles import fields, reading

FORMAT = 1
FOLDER = "chain"
INSIDE = 2  # chain/<history>/


def named(name: str) -> bool:
    return name.endswith(".json") and bool(grammar.RESULTS_NAME.fullmatch(name[:-5]))


def path(results_dir: Path, history: str, commit: str, env: str) -> Path:
    return results_dir / FOLDER / history / f"{commit[:8]}-{env}.json"


class ChainPoint(fields.TimePoint):
    before: Annotated[float, fields.positive]  # the history's figure for the release before
    value: Annotated[float, fields.positive]  # it, moved by the pairs' estimate
    # the chain's interval as factors of `value`, since the history read
    spread: Annotated[list[float], fields.pair_of(fields.positive)]


_point = grammar.schema(ChainPoint)


def _chain_point(value: Any, where: str) -> ChainPoint:
    found = _point(value, where)
    fields.answered(found, where)
    if found["ratio"] is None:
        raise Invalid(f"{where}.ratio", "missing: a chained point moves by its estimate")
    if found["cpu"] is None:
        raise Invalid(f"{where}.cpu", "missing: a chained point names the CPU of its pairs")
    low, high = found["spread"]
    if not low <= 1 <= high:
        raise Invalid(f"{where}.spread", f"{found['spread']!r} does not hold the estimate")
    return found


class ChainLink(TypedDict):
    release: Annotated[str, grammar.tag]
    before: Annotated[str, grammar.tag]
    env: Annotated[str, grammar.matching(grammar.ENVIRONMENT)]
    gate: Annotated[str, grammar.machine]  # the machine whose kept gate run read the pairs
    raw: Annotated[str, grammar.machine]  # the machine that read the release's figures
    # the CPUs its pairs were read on (each point names its)
    cpus: Annotated[dict[str, cpu.Identity], fields.cpus]
    links: Annotated[int, fields.count(1 << 20)]  # since the history last read a release itself
    points: Annotated[list[ChainPoint], grammar.each_of(_chain_point)]


_link = grammar.schema(ChainLink)


def check(value: Any) -> ChainLink:
    data = grammar.obj(value, "")
    reading.format_of(data, FORMAT)
    found = _link(data, "")
    for k, point in enumerate(found["points"]):
        fields.known(found["cpus"], "cpus")(point["cpu"], f"points[{k}].cpu")
    return found


def read(path: Path) -> ChainLink:
    """A release chained onto a history (results/chain/<history>/<commit>-<env>.json)."""
    return reading.read(path, check)


def write(where: Path, link: dict[str, Any]) -> Path:
    return reading.write(where, {reading.KEY: FORMAT, **link}, check)
