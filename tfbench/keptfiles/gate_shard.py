"""A shard of a gate (`tfbench gate --shard I/N`, tfbench.gate.shards makes it):
results/gate/<machine>/<old>-<new>[.plant-S].shard-I-of-N.json, its share's readings of both
sides (`old` and `new`), every time point's pairs, and the one CPU that read them; `tfbench
gate merge` joins N of them into a gate run. Format 1 named the sides `before` and `after`
(`upgraded`: `tfbench results upgrade`)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, TypedDict

from tfbench import cpu, grammar
from tfbench.grammar import Invalid, field, optional
from tfbench.keptfiles import fields, reading

FORMAT = 2  # 2: the sides old and new
UPGRADES: tuple[int, ...] = (1,)  # its sides before and after, renamed old and new (upgraded)
FOLDER = "gate"  # beside the gate runs
INSIDE = 2  # gate/<machine>/
NAME = re.compile(
    rf"{grammar.TAG.pattern}-{grammar.TAG.pattern}"
    r"(?:\.plant-0\.\d{1,6})?\.shard-\d{1,2}-of-\d{1,2}\.json"
)


def named(name: str) -> bool:
    return bool(NAME.fullmatch(name))


def stem(pair: tuple[str, str], plant: float) -> str:
    """What every shard of a pair read with a plant is named by, before `.shard-`."""
    return f"{pair[0]}-{pair[1]}" + (f".plant-{plant:g}" if plant else "")


def path(
    results_dir: Path, machine: str, pair: tuple[str, str], plant: float, shard: tuple[int, int]
) -> Path:
    name = f"{stem(pair, plant)}.shard-{shard[0]}-of-{shard[1]}.json"
    return results_dir / FOLDER / machine / name


ShardPoint = tuple[str, tuple[str, ...]]  # (benchmark, asv's values)


def _values(value: Any, where: str) -> tuple[str, ...]:
    return tuple(grammar.each(value, where, grammar.literal))


def _readings(value: Any, where: str) -> tuple[ShardPoint, list[list[float]], list[str]]:
    data = grammar.array(value, where)
    if len(data) != 4:
        raise Invalid(where, "not [benchmark, values, runs, missing]")
    runs = grammar.each(data[2], f"{where}[2]", lambda v, f: grammar.each(v, f, grammar.number))
    missing = grammar.each(data[3], f"{where}[3]", grammar.text)
    return (grammar.dotted(data[0], f"{where}[0]"), _values(data[1], f"{where}[1]")), runs, missing


ShardTime = tuple[ShardPoint, list[float], float | None, str | None]  # logs, old, why


def _shard_time(value: Any, where: str) -> ShardTime:
    data = grammar.array(value, where)
    if len(data) != 3:
        raise Invalid(where, "not [benchmark, values, pairs]")
    read = grammar.obj(data[2], f"{where}[2]")
    logs = field(read, "logs", lambda v, f: grammar.each(v, f, grammar.number), f"{where}[2]")
    was = optional(fields.positive)(read.get("old"), f"{where}[2].old")
    skipped = optional(grammar.text)(read.get("skipped"), f"{where}[2].skipped")
    point = (grammar.dotted(data[0], f"{where}[0]"), _values(data[1], f"{where}[1]"))
    return point, logs, was, skipped


def _unit(value: Any, where: str) -> tuple[str, str, tuple[str, ...]]:
    data = grammar.array(value, where)
    if len(data) != 3:
        raise Invalid(where, "not [kind, name, values]")
    kind = grammar.one_of(("memory", "time"))(data[0], f"{where}[0]")
    return kind, grammar.dotted(data[1], f"{where}[1]"), _values(data[2], f"{where}[2]")


POSITIVE = Annotated[float, fields.positive]
Readings = tuple[ShardPoint, list[list[float]], list[str]]  # point, runs, why missing


class KeptReader(TypedDict):
    """How the time reader read (tfbench.pairs.timing.Reader, and its level)."""

    design: Annotated[str, grammar.one_of(fields.DESIGNS)]
    margin: POSITIVE
    seconds: POSITIVE
    budget_s: POSITIVE
    watch: POSITIVE
    level: POSITIVE
    first: Annotated[int, fields.count(1 << 10, 1)]
    most: Annotated[int, fields.count(1 << 10, 1)]
    apart: Annotated[bool, grammar.boolean]


class Sides(TypedDict):
    old: Annotated[list[Readings], grammar.each_of(_readings)]
    new: Annotated[list[Readings], grammar.each_of(_readings)]


class GateShard(TypedDict):
    pair: Annotated[list[str], fields.pair_of(grammar.tag)]  # old, new: tags
    shard: Annotated[list[int], fields.pair_of(fields.count(64, 1))]  # I, N
    plant: Annotated[float, grammar.number]
    reader: Annotated[KeptReader, grammar.schema(KeptReader)]
    seconds: Annotated[float, grammar.number]
    # its share (tfbench.gate.shards.Unit)
    units: Annotated[list[tuple[str, str, tuple[str, ...]]], grammar.each_of(_unit)]
    cpus: Annotated[dict[str, cpu.Identity], fields.cpus]  # the one CPU that read it
    onednn: fields.ONEDNN
    sides: Annotated[Sides, grammar.schema(Sides)]
    times: Annotated[list[ShardTime], grammar.each_of(_shard_time)]


_shard = grammar.schema(GateShard)


def check(value: Any) -> GateShard:
    """A shard's every field of its form; read on one CPU, its oneDNN record that CPU's."""
    data = grammar.obj(value, "")
    reading.format_of(data, FORMAT)
    found = _shard(data, "")
    i, n = found["shard"]
    if i > n:
        raise Invalid("shard", f"{i} of {n}")
    if not 0 <= found["plant"] < 1:
        raise Invalid("plant", f"{found['plant']!r} is no share of a step's work")
    if len(found["cpus"]) != 1:
        raise Invalid("cpus", f"{len(found['cpus'])} CPUs: a shard is read on one")
    for key in found["onednn"]:
        fields.known(found["cpus"], "cpus")(key, "onednn key")
    return found


def upgraded(data: dict[str, Any]) -> dict[str, Any]:
    """A shard of format 1 in format 2's words: its sides, and each time point's reading of
    the old side, named old and new (fields.renamed)."""
    times = data.get("times")
    if isinstance(times, list):
        times = [
            [*t[:2], fields.renamed(t[2])] if isinstance(t, list) and len(t) == 3 else t
            for t in times
        ]
    return dict(data, format=FORMAT, sides=fields.renamed(data.get("sides")), times=times)


def read(path: Path) -> GateShard:
    """A kept shard of a gate (results/gate/<machine>/<old>-<new>.shard-I-of-N.json)."""
    return reading.read(path, check)


def write(where: Path, shard: dict[str, Any]) -> Path:
    """A shard's `pair`, `shard`, `plant`, `reader`, `seconds`, `units`, `cpus`, `onednn`,
    `sides` and `times` kept at `where` (one line: its readings are long)."""
    return reading.write(where, {reading.KEY: FORMAT, **shard}, check, indent=None)
