"""asv's machine.json (results/<machine>/machine.json: asv writes it): its fields only,
each plain text, for asv's site shows them as HTML; its name its folder's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tfbench import grammar
from tfbench.grammar import Invalid, field, optional
from tfbench.keptfiles import reading

INSIDE = 1  # <machine>/
FIELDS = ("arch", "cpu", "machine", "num_cpu", "os", "ram", "version")


def check(value: Any) -> dict[str, Any]:
    """asv's fields only, each plain text: asv's site shows them as HTML."""
    data = grammar.obj(value, "")
    found = {"machine": field(data, "machine", grammar.machine)}
    for name in ("arch", "cpu", "num_cpu", "os", "ram"):
        found[name] = optional(grammar.machine_text)(data.get(name), name)
    found["version"] = optional(grammar.integer)(data.get("version"), "version")
    if set(data) - set(FIELDS):
        raise Invalid(", ".join(sorted(set(data) - set(FIELDS))), "not asv's")
    return found


def read(path: Path) -> dict[str, Any]:
    """asv's machine.json, whose name must be its folder's."""
    found = reading.read(path, check, INSIDE)
    if found["machine"] != path.parent.name:
        raise reading.KeptFileError(
            path, f"machine: names {found['machine']!r}, not its folder {path.parent.name!r}"
        )
    return found
