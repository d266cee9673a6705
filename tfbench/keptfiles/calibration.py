"""The time reader's calibration on one CPU (tfbench.gate.calibration makes it):
results/calibration/<cpu id>/<old>-<new>[.plant-S].json, what an A/A or planted gate read
on that CPU."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, TypedDict

from tfbench import cpu, grammar
from tfbench.grammar import Invalid
from tfbench.keptfiles import fields, reading

FORMAT = 1
FOLDER = "calibration"
INSIDE = 2  # calibration/<cpu id>/
NAME = re.compile(rf"{grammar.TAG.pattern}-{grammar.TAG.pattern}" r"(?:\.plant-0\.\d{1,6})?\.json")


def named(name: str) -> bool:
    return bool(NAME.fullmatch(name))


def path(results_dir: Path, cpu_id: str, pair: tuple[str, str], plant: float) -> Path:
    planted = f".plant-{plant:g}" if plant else ""
    return results_dir / FOLDER / cpu_id / f"{pair[0]}-{pair[1]}{planted}.json"


class Calibration(TypedDict):
    kind: Annotated[str, grammar.one_of(("aa", "plant"))]
    plant: Annotated[float, grammar.number]  # a plant's share of a step's work; an A/A's 0
    pair: Annotated[list[str], fields.pair_of(grammar.tag)]
    date: Annotated[str, grammar.day]
    cpu: Annotated[cpu.Identity, fields.cpu_identity]
    points: Annotated[int, fields.count(1 << 20)]  # time points read on it
    worse: Annotated[int, fields.count(1 << 20)]  # time rows: an A/A's false; a plant's found
    better: Annotated[int, fields.count(1 << 20)]
    memory_rows: Annotated[int, fields.count(1 << 20)]  # of the whole gate: an A/A's false
    seconds: Annotated[float, fields.positive]  # the gate's


_calibration = grammar.schema(Calibration)


def check(value: Any) -> Calibration:
    data = grammar.obj(value, "")
    reading.format_of(data, FORMAT)
    found = _calibration(data, "")
    if (found["kind"] == "plant") != (0 < found["plant"] < 1):
        raise Invalid("plant", f"{found['plant']!r} for a calibration of kind {found['kind']}")
    return found


def read(path: Path) -> Calibration:
    """A calibration of the time reader on one CPU (results/calibration/<id>/<name>.json),
    its folder the id of the CPU it holds."""
    found = reading.read(path, check)
    if found["cpu"]["id"] != path.parent.name:
        raise reading.KeptFileError(path, f"cpu: {found['cpu']['id']!r}, not its folder's")
    return found


def write(where: Path, calibration: dict[str, Any]) -> Path:
    return reading.write(where, {reading.KEY: FORMAT, **calibration}, check)
