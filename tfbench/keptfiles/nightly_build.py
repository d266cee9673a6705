"""A tf-nightly build the nightly watch read (`tfbench watch`; tfbench.nightly.series makes
it): results/nightly/<machine>/<nightly version>.json, its sentinels' readings or why it is
broken, its time against the build read before it; the file named by the build it holds."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, TypedDict

from packaging.version import Version

from tfbench import grammar
from tfbench.grammar import Invalid, optional
from tfbench.keptfiles import fields, reading

FORMAT = 1
FOLDER = "nightly"
INSIDE = 2  # nightly/<machine>/


def named(name: str) -> bool:
    return name.endswith(".json") and bool(grammar.NIGHTLY.fullmatch(name[:-5]))


def folder(results_dir: Path, machine: str) -> Path:
    """A machine's nightly history."""
    return results_dir / FOLDER / grammar.machine(machine, "machine")


def path(results_dir: Path, machine: str, version: str) -> Path:
    return folder(results_dir, machine) / f"{version}.json"


class NightlyBuild(TypedDict):
    build: Annotated[fields.KeptBuild, fields.build]
    # the build published before it on the index
    before: Annotated[str | None, optional(grammar.nightly)]
    # sentinel -> records
    readings: Annotated[
        dict[str, list[dict[str, Any]]], grammar.mapping_of(grammar.identifier, fields.records)
    ]
    broken: Annotated[str | None, optional(grammar.text)]  # why it could not be installed or run
    # the timed sentinel against the build read before, in one run (absent before: none)
    times: Annotated[list[fields.Compared], grammar.absent([], grammar.each_of(fields.compared))]
    environment: Annotated[fields.Environment, fields.environment]


_build = grammar.schema(NightlyBuild)


def check(value: Any) -> NightlyBuild:
    data = grammar.obj(value, "")
    reading.format_of(data, FORMAT)
    found = _build(data, "")
    version = found["build"]["version"]
    for k, t in enumerate(found["times"]):
        if t["new"] != version:
            raise Invalid(f"times[{k}].new", f"{t['new']!r} is not the build read")
    if found["before"] is not None and Version(found["before"]) >= Version(version):
        # a build points back to an older one only: the walks over neighbours end
        raise Invalid("before", f"{found['before']!r} is not older than {version!r}")
    return found


def read_any(path: Path) -> NightlyBuild:
    """A build the nightly watch read (results/nightly/<machine>/<version>.json)."""
    return reading.read(path, check)


def read(where: Path) -> NightlyBuild:
    """A build's file, of its form and named by its version (KeptFileError: which field)."""
    found = read_any(where)
    if where.name != f"{found['build']['version']}.json":
        raise reading.KeptFileError(
            where, f"holds build {found['build']['version']}, not the one it is named by"
        )
    return found


def write(where: Path, build: dict[str, Any]) -> Path:
    return reading.write(where, {reading.KEY: FORMAT, **build}, check, sort_keys=True)
