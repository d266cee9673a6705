"""A tf-nightly build the nightly watch read (`tfbench watch`; tfbench.nightly.series makes
it): results/nightly/<machine>/<nightly version>.json, its sentinels' readings or why it is
broken, its time against the build read before it; the file named by the build it holds."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypedDict

from packaging.version import Version

from tfbench import grammar
from tfbench.grammar import Invalid, field, optional
from tfbench.keptfiles import fields, reading

FORMAT = 1
READS: tuple[int, ...] = ()
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
    build: fields.Build
    before: str | None  # the build published before it on the index
    readings: dict[str, list[dict[str, Any]]]  # sentinel -> records
    broken: str | None  # why the build could not be installed or run
    times: list[fields.Compared]  # the timed sentinel against the build read before, in one run
    environment: fields.Environment


def check(value: Any) -> NightlyBuild:
    data = grammar.obj(value, "")
    reading.format_of(data, FORMAT)
    build = field(data, "build", fields.build)
    times = grammar.each(data.get("times", []), "times", fields.compared)
    for k, t in enumerate(times):
        if t["new"] != build["version"]:
            raise Invalid(f"times[{k}].new", f"{t['new']!r} is not the build read")
    before = optional(grammar.nightly)(data.get("before"), "before")
    if before is not None and Version(before) >= Version(build["version"]):
        # a build points back to an older one only: the walks over neighbours end
        raise Invalid("before", f"{before!r} is not older than {build['version']!r}")
    return NightlyBuild(
        build=build,
        before=before,
        readings=field(
            data,
            "readings",
            lambda v, f: grammar.mapping(v, f, grammar.identifier, fields.records),
        ),
        broken=optional(grammar.text)(data.get("broken"), "broken"),
        times=times,
        environment=field(data, "environment", fields.environment),
    )


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
