"""asv's machine.json (results/<machine>/machine.json: asv writes it): its fields only,
each plain text, for asv's site shows them as HTML; its name its folder's."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, TypedDict

from tfbench import grammar
from tfbench.grammar import Invalid, optional
from tfbench.keptfiles import reading

INSIDE = 1  # <machine>/
TEXT = Annotated[str | None, optional(grammar.machine_text)]


class Machine(TypedDict):
    """asv's fields only, each plain text: asv's site shows them as HTML."""

    machine: Annotated[str, grammar.machine]
    arch: TEXT
    cpu: TEXT  # ends `cpu ID` where tfbench read the CPU's identity
    num_cpu: TEXT
    os: TEXT
    ram: TEXT
    version: Annotated[int | None, optional(grammar.integer)]


_machine = grammar.schema(Machine)


def check(value: Any) -> Machine:
    data = grammar.obj(value, "")
    other = set(data) - set(Machine.__annotations__)
    if other:
        raise Invalid(", ".join(sorted(other)), "not asv's")
    return _machine(data, "")


def read(path: Path) -> Machine:
    """asv's machine.json, whose name must be its folder's."""
    found = reading.read(path, check, INSIDE)
    if found["machine"] != path.parent.name:
        raise reading.KeptFileError(
            path, f"machine: names {found['machine']!r}, not its folder {path.parent.name!r}"
        )
    return found
