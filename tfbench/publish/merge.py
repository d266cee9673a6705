"""Results measured elsewhere (CI runners, a GPU box: each a results directory, as asv
and tfbench write one) merged into this project's results.

Untrusted input, by the rules the report reads results with (tfbench.publish.results): a
file that cannot be read, or whose names are not plain, is named and skipped. Nothing
already in the results is lost: a file the sources hold replaces the one of the same name
(a re-measurement of the same release and environment), every other file stays. A machine
whose machine.json differs between sources, or from the one already in the results, and a
benchmark described differently (another version of its code), are errors naming both
files: nothing is written then.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from tfbench import formats
from tfbench.gate import kept
from tfbench.publish import filed
from tfbench.publish.results import MACHINE_NAME, readable_files, unsafe_benchmark

RECORD_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")  # <commit>-<environment>-<flavour>
GATE_RUN = re.compile(r"v[0-9][0-9A-Za-z.]*-v[0-9][0-9A-Za-z.]*\.json")


class MergeError(ValueError):
    """The sources disagree with each other or with the results: nothing was merged."""


@dataclass
class Merged:
    added: list[Path] = field(default_factory=list)  # relative to the results
    replaced: list[Path] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # each: the file, and why


def _json(path: Path) -> object:
    return json.loads(path.read_text(encoding="utf-8"))


def _probes_file(path: Path) -> str | None:
    """Why a probes file cannot be merged, or None."""
    data = _json(path)
    shaped = isinstance(data, dict) and all(
        isinstance(points, dict) and all(isinstance(r, list) for r in points.values())
        for costs, points in data.items()
        if costs != formats.KEY
    )
    if not shaped:
        return "not a probes file: {Costs class: {grid point: [repeats]}}"
    return formats.problem(data, formats.PROBES, "probes file")


def _packages_file(path: Path) -> str | None:
    return None if path.read_text(encoding="utf-8").startswith("# ") else "not a packages record"


def _gate_file(path: Path) -> str | None:
    data = _json(path)
    if not isinstance(data, dict) or not isinstance(data.get("rows"), list):
        return "not a kept gate run: {rounds, rows}"
    return formats.problem(data, formats.GATE_RUN, "kept gate run")


def _bisection_file(path: Path) -> str | None:
    return formats.problem(_json(path), formats.BISECTION, "bisect.json")


def _regular_file(path: Path) -> str | None:
    return None if path.is_file() else "not a regular file"


class _Plan:
    """Every file to copy (relative name -> source), and what was refused."""

    def __init__(self, target: Path):
        self.target = target
        self.files: dict[Path, Path] = {}
        self.machines: dict[str, tuple[Path, object]] = {}  # name -> (machine.json, content)
        self.benchmarks: dict[str, tuple[Path, dict]] = {}
        self.api_version: object = None  # benchmarks.json's own "version"
        self.skipped: list[str] = []
        own = target / "benchmarks.json"
        if own.is_file():
            self._benchmarks(own)
        for machine_json in target.glob("*/machine.json"):
            self.machines[machine_json.parent.name] = (machine_json, _json(machine_json))

    def _benchmarks(self, path: Path) -> None:
        try:
            index = _json(path)
            if not isinstance(index, dict):
                raise ValueError("not an object")
        except (OSError, ValueError) as e:
            self.skipped.append(f"{path}: unreadable ({e})")
            return
        for name, bench in index.items():
            if name == "version":
                self.api_version = bench
                continue
            why = unsafe_benchmark(name, bench) if isinstance(bench, dict) else "not an object"
            if why:
                self.skipped.append(f"{path}: {why}: skipped")
                continue
            seen = self.benchmarks.get(name)
            if seen and seen[1].get("version") != bench.get("version"):
                raise MergeError(
                    f"benchmark {name} is version {seen[1].get('version')} in {seen[0]} and "
                    f"{bench.get('version')} in {path}: measured by other code; nothing merged"
                )
            self.benchmarks.setdefault(name, (path, bench))

    def _machine(self, machine_json: Path) -> None:
        name, content = machine_json.parent.name, _json(machine_json)
        seen = self.machines.get(name)
        if seen and seen[1] != content:
            raise MergeError(
                f"machine {name} is described differently in {seen[0]} and {machine_json} "
                "(asv machine): one name, one machine; nothing merged"
            )
        self.machines.setdefault(name, (machine_json, content))
        self.files[Path(name) / "machine.json"] = machine_json

    def _checked(self, path: Path, relative: Path, why) -> None:
        try:
            problem = why(path)
        except (OSError, ValueError) as e:
            problem = f"unreadable ({e})"
        if problem:
            self.skipped.append(f"{path}: {problem}: skipped")
        else:
            self.files[relative] = path

    def source(self, source: Path) -> None:
        if (source / "benchmarks.json").is_file():
            self._benchmarks(source / "benchmarks.json")
        readable, problems = readable_files(source)
        self.skipped += [f"{p}: skipped" for p in problems]
        for machine_json, (name, results) in readable.items():
            self._machine(machine_json)
            for path, _ in results:
                self.files[Path(name) / path.name] = path
        for path in sorted(source.glob("packages/*")):
            if path.suffix != ".txt" or not RECORD_NAME.fullmatch(path.stem):
                self.skipped.append(f"{path}: not a packages record's name: skipped")
                continue
            self._checked(path, Path("packages") / path.name, _packages_file)
        for path in sorted(source.glob("probes/*")):
            if path.suffix != ".json" or not RECORD_NAME.fullmatch(path.stem):
                self.skipped.append(f"{path}: not a probes file name: skipped")
                continue
            self._checked(path, Path("probes") / path.name, _probes_file)
        for path in sorted(source.glob(f"{kept.FOLDER}/*/*")):
            if not MACHINE_NAME.fullmatch(path.parent.name) or not GATE_RUN.fullmatch(path.name):
                self.skipped.append(f"{path}: not a kept gate run's name: skipped")
                continue
            self._checked(path, Path(kept.FOLDER) / path.parent.name / path.name, _gate_file)
        for path in sorted(source.glob(f"{filed.FOLDER}/*/*/*")):
            report, machine = path.parent, path.parent.parent
            if (
                not MACHINE_NAME.fullmatch(machine.name)
                or not filed.SLUG.fullmatch(report.name)
                or path.name not in filed.FILES
                or path.is_symlink()
            ):
                self.skipped.append(f"{path}: not a file of an upstream report: skipped")
                continue
            relative = Path(filed.FOLDER) / machine.name / report.name / path.name
            check = _bisection_file if path.name == "bisect.json" else _regular_file
            self._checked(path, relative, check)


def merge(sources: list[Path], target: Path) -> Merged:
    """Merge the results directories `sources` into `target` (MergeError: nothing done)."""
    plan = _Plan(target)
    for source in sources:
        if not source.is_dir():
            raise MergeError(f"{source}: no such results directory; nothing merged")
        plan.source(source)
    done = Merged(skipped=plan.skipped)
    for relative, source in sorted(plan.files.items()):
        destination = target / relative
        (done.replaced if destination.exists() else done.added).append(relative)
        _write(destination, source.read_bytes())
    if plan.benchmarks:  # every description the target and the sources hold
        index: dict[str, object] = {
            name: bench for name, (_, bench) in sorted(plan.benchmarks.items())
        }
        if plan.api_version is not None:
            index["version"] = plan.api_version
        _write(target / "benchmarks.json", json.dumps(index, indent=4).encode())
    return done


def _write(destination: Path, data: bytes) -> None:
    """Whole or not at all: a reader never sees half a file."""
    destination.parent.mkdir(parents=True, exist_ok=True)
    partial = destination.with_name(f".{destination.name}.partial")
    partial.write_bytes(data)
    os.replace(partial, destination)
