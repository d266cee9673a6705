"""The time reader's calibration on one CPU (tfbench.gate.calibration makes it):
results/calibration/<cpu id>/<old>-<new>[.plant-S].json, what an A/A or planted gate read
on that CPU."""

from __future__ import annotations

import datetime
import re
from pathlib import Path
from typing import Any, TypedDict

from tfbench import cpu, grammar
from tfbench.grammar import Invalid, field
from tfbench.keptfiles import fields, reading

FORMAT = 1
READS: tuple[int, ...] = ()
FOLDER = "calibration"
INSIDE = 2  # calibration/<cpu id>/
NAME = re.compile(rf"{grammar.TAG.pattern}-{grammar.TAG.pattern}" r"(?:\.plant-0\.\d{1,6})?\.json")


def named(name: str) -> bool:
    return bool(NAME.fullmatch(name))


def path(results_dir: Path, cpu_id: str, pair: tuple[str, str], plant: float) -> Path:
    planted = f".plant-{plant:g}" if plant else ""
    return results_dir / FOLDER / cpu_id / f"{pair[0]}-{pair[1]}{planted}.json"


class Calibration(TypedDict):
    kind: str  # aa, plant
    plant: float
    pair: list[str]
    date: str
    cpu: cpu.Identity
    points: int  # time points read on it
    worse: int  # time rows: an A/A's false; a plant's found
    better: int
    memory_rows: int  # of the whole gate: an A/A's false
    seconds: float  # the gate's


def check(value: Any) -> Calibration:
    data = grammar.obj(value, "")
    reading.format_of(data, FORMAT)
    kind = field(data, "kind", grammar.one_of(("aa", "plant")))
    plant = field(data, "plant", grammar.number)
    if (kind == "plant") != (0 < plant < 1):
        raise Invalid("plant", f"{plant!r} for a calibration of kind {kind}")
    date = field(data, "date", grammar.matching(re.compile(r"\d{4}-\d{2}-\d{2}")))
    try:
        datetime.date.fromisoformat(date)
    except ValueError:
        raise Invalid("date", f"{date!r} is no day") from None
    counts = {k: field(data, k, fields.count(1 << 20)) for k in ("points", "worse", "better")}
    return Calibration(
        kind=kind,
        plant=plant,
        pair=field(data, "pair", fields.pair_of(grammar.tag)),
        date=date,
        cpu=field(data, "cpu", fields.cpu_identity),
        points=counts["points"],
        worse=counts["worse"],
        better=counts["better"],
        memory_rows=field(data, "memory_rows", fields.count(1 << 20)),
        seconds=field(data, "seconds", fields.positive),
    )


def read(path: Path) -> Calibration:
    """A calibration of the time reader on one CPU (results/calibration/<id>/<name>.json),
    its folder the id of the CPU it holds."""
    found = reading.read(path, check)
    if found["cpu"]["id"] != path.parent.name:
        raise reading.KeptFileError(path, f"cpu: {found['cpu']['id']!r}, not its folder's")
    return found


def write(where: Path, calibration: dict[str, Any]) -> Path:
    return reading.write(where, {reading.KEY: FORMAT, **calibration}, check)
