"""A shard of a gate (`tfbench gate --shard I/N`, tfbench.gate.shards makes it):
results/gate/<machine>/<old>-<new>[.plant-S].shard-I-of-N.json, its share's readings of both
sides (`old` and `new`), every time point's pairs, and the one CPU that read them; `tfbench
gate merge` joins N of them into a gate run. Format 1 named the sides `before` and `after`
(`upgraded`: `tfbench results upgrade`)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, TypedDict

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


class GateShard(TypedDict):
    pair: list[str]  # old, new: tags
    shard: list[int]  # I, N
    plant: float
    reader: dict[str, Any]  # how the time reader read (tfbench.pairs.timing.Reader, its level)
    seconds: float
    units: list[tuple[str, str, tuple[str, ...]]]  # its share (tfbench.gate.shards.Unit)
    cpus: dict[str, cpu.Identity]  # the one CPU that read it
    onednn: dict[str, dict[str, str | None]]
    old: list[tuple[ShardPoint, list[list[float]], list[str]]]  # point, runs, why missing
    new: list[tuple[ShardPoint, list[list[float]], list[str]]]
    times: list[ShardTime]


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


_READER = {
    "design": grammar.one_of(fields.DESIGNS),
    **dict.fromkeys(("margin", "seconds", "budget_s", "watch", "level"), fields.positive),
    **dict.fromkeys(("first", "most"), fields.count(1 << 10, 1)),
    "apart": grammar.boolean,
}


def check(value: Any) -> GateShard:
    """A shard's every field of its form; read on one CPU, its oneDNN record that CPU's."""
    data = grammar.obj(value, "")
    reading.format_of(data, FORMAT)
    pair = field(data, "pair", fields.pair_of(grammar.tag))
    shard = field(data, "shard", fields.pair_of(fields.count(64, 1)))
    if shard[0] > shard[1]:
        raise Invalid("shard", f"{shard[0]} of {shard[1]}")
    plant = field(data, "plant", grammar.number)
    if not 0 <= plant < 1:
        raise Invalid("plant", f"{plant!r} is no share of a step's work")
    reader = field(data, "reader", grammar.obj)
    read_on = field(data, "cpus", fields.cpus)
    if len(read_on) != 1:
        raise Invalid("cpus", f"{len(read_on)} CPUs: a shard is read on one")
    sides = field(data, "sides", grammar.obj)
    return GateShard(
        pair=pair,
        shard=shard,
        plant=plant,
        reader={k: field(reader, k, check, "reader") for k, check in _READER.items()},
        seconds=field(data, "seconds", grammar.number),
        units=field(data, "units", lambda v, f: grammar.each(v, f, _unit)),
        cpus=read_on,
        onednn=grammar.mapping(
            data.get("onednn", {}),
            "onednn",
            fields.known(read_on, "cpus"),
            lambda v, f: grammar.mapping(
                v, f, grammar.one_of(fields.SIDES), optional(grammar.machine_text)
            ),
        ),
        old=field(sides, "old", lambda v, f: grammar.each(v, f, _readings), "sides"),
        new=field(sides, "new", lambda v, f: grammar.each(v, f, _readings), "sides"),
        times=field(data, "times", lambda v, f: grammar.each(v, f, _shard_time)),
    )


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
