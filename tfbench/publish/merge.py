"""Results measured elsewhere (CI runners, a GPU box: each a results directory, as asv and
tfbench write one) merged into this project's results.

Untrusted input: a file is copied only if it is a regular file inside its source (no link
is followed, none copied), in its place (each kept file under the folder of the machine
that measured it: results/probes/<machine>/, packages/, gate/, explain/, upstream/, nightly/,
chain/), and
of its form (tfbench.keptfiles, asv's results by tfbench.publish.results): anything else is
named and skipped. The write-ups of a nightly bisection (issue.md, repro.py, plot.png) are
not copied: they are rendered again from its bisect.json (`tfbench results merge`).

Nothing already in the results is lost: a file the sources hold replaces the one of the
same name (a re-measurement of the same release, environment and machine), every other
file stays. A machine whose machine.json differs between sources, or from the one already
in the results, and a benchmark described differently (another version of its code), are
errors naming both files: nothing is written then.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tfbench import grammar, keptfiles
from tfbench.gate import kept
from tfbench.nightly import series
from tfbench.publish import chain, explained, filed
from tfbench.publish.results import readable_files, unsafe_benchmark, write_whole

GATE_RUN = re.compile(rf"{grammar.TAG.pattern}-{grammar.TAG.pattern}\.json")


class MergeError(ValueError):
    """The sources disagree with each other or with the results: nothing was merged."""


@dataclass
class Merged:
    added: list[Path] = field(default_factory=list)  # relative to the results
    replaced: list[Path] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # each: the file, and why


def _name(pattern: re.Pattern[str], suffix: str) -> Callable[[str], bool]:
    return lambda name: name.endswith(suffix) and bool(pattern.fullmatch(name[: -len(suffix)]))


# A kept file's folder under a source -> (the form of its name, its reader). Each lies in
# the folder of the machine that measured it: FOLDER/<machine>/NAME (upstream: a report's
# folder more).
KEPT: dict[str, tuple[Callable[[str], bool], Callable[[Path], Any]]] = {
    "probes": (_name(grammar.RECORD_NAME, ".json"), keptfiles.probes),
    "packages": (_name(grammar.RECORD_NAME, ".txt"), keptfiles.packages),
    kept.FOLDER: (GATE_RUN.fullmatch, keptfiles.gate_run),  # type: ignore[dict-item]
    explained.FOLDER: (_name(grammar.TAG, ".json"), keptfiles.explained),
    filed.FOLDER: ("bisect.json".__eq__, keptfiles.bisection),
    series.FOLDER: (_name(grammar.NIGHTLY, ".json"), series.read),
    chain.FOLDER: (_name(grammar.RESULTS_NAME, ".json"), keptfiles.chain_link),
}
RENDERED = ("issue.md", "repro.py", "plot.png")  # from a bisect.json, never copied


class _Plan:
    """Every file to copy (relative name -> source), and what was refused."""

    def __init__(self, target: Path):
        self.target = target
        self.files: dict[Path, Path] = {}
        # name -> (machine.json, its content, or why it cannot be read)
        self.machines: dict[str, tuple[Path, dict | keptfiles.KeptFileError]] = {}
        self.benchmarks: dict[str, tuple[Path, dict]] = {}
        self.api_version: object = None  # benchmarks.json's own "version"
        self.skipped: list[str] = []
        own = target / "benchmarks.json"
        if own.is_file():
            self._benchmarks(own)
        for machine_json in target.glob("*/machine.json"):
            try:
                content: dict | keptfiles.KeptFileError = keptfiles.machine(machine_json)
            except keptfiles.KeptFileError as e:
                content = e
            self.machines[machine_json.parent.name] = (machine_json, content)

    def _benchmarks(self, path: Path) -> None:
        try:
            index = keptfiles.load(path)
            if not isinstance(index, dict):
                raise keptfiles.KeptFileError(path, "not an object")
        except keptfiles.KeptFileError as e:
            self.skipped.append(f"{e}: skipped")
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
        name, content = machine_json.parent.name, keptfiles.machine(machine_json)
        seen = self.machines.get(name)
        if seen and isinstance(seen[1], keptfiles.KeptFileError):
            raise MergeError(f"{seen[1]} (the results' own: mend or remove it); nothing merged")
        if seen and seen[1] != content:
            raise MergeError(
                f"machine {name} is described differently in {seen[0]} and {machine_json} "
                "(asv machine): one name, one machine; nothing merged"
            )
        self.machines.setdefault(name, (machine_json, content))
        self.files[Path(name) / "machine.json"] = machine_json

    def source(self, source: Path) -> None:
        links = _links(source)
        self.skipped += [f"{link}: a link, not followed: skipped" for link in sorted(links)]
        index = source / "benchmarks.json"
        if index.is_file() and index not in links:
            self._benchmarks(index)
        readable, problems = readable_files(source)  # refuses links itself
        self.skipped += [f"{p}: skipped" for p in problems]
        for machine_json, (name, results) in readable.items():
            self._machine(machine_json)
            for path, _ in results:
                self.files[Path(name) / path.name] = path
        for folder, (named, read) in KEPT.items():
            for path in sorted((source / folder).rglob("*")):
                if path in links or _under(path, links) or path.is_dir():
                    continue
                self._kept(source, path, folder, named, read)

    def _kept(
        self,
        source: Path,
        path: Path,
        folder: str,
        named: Callable[[str], bool],
        read: Callable[[Path], Any],
    ) -> None:
        """A kept file: at FOLDER/<machine>/NAME (upstream: FOLDER/<machine>/<slug>/NAME),
        of its name's form and its reader's."""
        parts = path.relative_to(source / folder).parts
        depth = 3 if folder == filed.FOLDER else 2
        if folder == filed.FOLDER and len(parts) == 3 and parts[2] in RENDERED:
            self.skipped.append(f"{path}: rendered again from bisect.json, not copied")
            return
        if (
            len(parts) != depth
            or not grammar.MACHINE.fullmatch(parts[0])
            or (depth == 3 and not grammar.SLUG.fullmatch(parts[1]))
            or not named(parts[-1])
        ):
            self.skipped.append(
                f"{path}: not in its place ({folder}/<machine>/"
                f"{'<report>/' * (depth == 3)}<name of its form>): skipped"
            )
            return
        try:
            read(path)
        except keptfiles.KeptFileError as e:
            self.skipped.append(f"{e}: skipped")
            return
        self.files[Path(folder, *parts)] = path


def _links(source: Path) -> set[Path]:
    """Every symbolic link under the source, not followed."""
    found = set()
    for top, dirs, files in os.walk(source):  # os.walk follows no link
        found |= {Path(top, name) for name in [*dirs, *files] if Path(top, name).is_symlink()}
    return found


def _under(path: Path, links: set[Path]) -> bool:
    return any(link in path.parents for link in links)


def merge(sources: list[Path], target: Path) -> Merged:
    """Merge the results directories `sources` into `target` (MergeError: nothing done)."""
    plan = _Plan(target)
    for source in sources:
        if source.is_symlink() or not source.is_dir():
            raise MergeError(f"{source}: no such results directory (or a link); nothing merged")
        plan.source(source)
    done = Merged(skipped=plan.skipped)
    for relative, source in sorted(plan.files.items()):
        destination = target / relative
        (done.replaced if destination.exists() else done.added).append(relative)
        write_whole(destination, source.read_bytes())
    if plan.benchmarks:  # every description the target and the sources hold
        index: dict[str, object] = {
            name: bench for name, (_, bench) in sorted(plan.benchmarks.items())
        }
        if plan.api_version is not None:
            index["version"] = plan.api_version
        write_whole(target / "benchmarks.json", json.dumps(index, indent=4).encode())
    return done
