"""Results measured elsewhere (CI runners, a GPU box: each a results directory, as asv and
tfbench write one) merged into this project's results.

Untrusted input: a file is copied only if it is a regular file inside its source (no link
is followed, none copied), in its place (each kept file under the folder of the machine
that measured it: results/probes/<machine>/, packages/, gate/, explain/, upstream/, nightly/,
chain/), and
of its form (tfbench.keptfiles, asv's results by tfbench.publish.results): anything else is
named and skipped. The write-ups of a nightly bisection (issue.md, repro.py, plot.png) are
not copied: they are rendered again from its bisect.json (`tfbench results merge`).

Nothing already in the results is lost: two sources holding one file alike add it once,
and differently are refused unless the user names the source that wins (`wins`); a kept
file a source would change is refused unless `replace`, and then its old version is kept
in a dated folder beside the results (RESULTS-replaced/<UTC time>/), each named. A machine
whose machine.json differs between sources, or from the one already in the results, and a
benchmark described differently (another version of its code), are errors naming both
files. The merge is whole or nothing: every file is staged and checked before any is moved
into the results, under a lock of the results (and the nightly watch's of each history it
writes into); a folder of the results that is a link is refused, never written through.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from tfbench import escape, keptfiles, whole
from tfbench.keptfiles.machine import Machine
from tfbench.nightly import series
from tfbench.publish.results import readable_files, unsafe_benchmark


class MergeError(ValueError):
    """The sources disagree with each other or with the results: nothing was merged."""


@dataclass
class Merged:
    added: list[Path] = field(default_factory=list)  # relative to the results
    replaced: list[Path] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # each: the file, and why
    rendered: list[str] = field(default_factory=list)  # write-ups rendered again, not copied
    kept_old: Path | None = None  # where the replaced files' old versions are


class _Plan:
    """Every file to copy (relative name -> source), and what was refused."""

    def __init__(self, target: Path):
        self.target = target
        self.files: dict[Path, Path] = {}
        self.conflicts: list[tuple[Path, Path, Path]] = []  # name, the one kept, the other
        self.wins: Path | None = None  # the source whose file wins a conflict
        # name -> (machine.json, its content, or why it cannot be read)
        self.machines: dict[str, tuple[Path, Machine | keptfiles.KeptFileError]] = {}
        self.benchmarks: dict[str, tuple[Path, dict]] = {}
        self.api_version: object = None  # benchmarks.json's own "version"
        self.skipped: list[str] = []
        self.rendered: list[str] = []
        own = target / "benchmarks.json"
        if own.is_file():
            self._benchmarks(own)
        for machine_json in target.glob("*/machine.json"):
            try:
                content: Machine | keptfiles.KeptFileError = keptfiles.machine.read(machine_json)
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
        name, content = machine_json.parent.name, keptfiles.machine.read(machine_json)
        seen = self.machines.get(name)
        if seen and isinstance(seen[1], keptfiles.KeptFileError):
            raise MergeError(f"{seen[1]} (the results' own: mend or remove it); nothing merged")
        if seen and seen[1] != content:
            raise MergeError(
                f"machine {name} is described differently in {seen[0]} and {machine_json} "
                "(asv machine): one name, one machine; nothing merged"
            )
        self.machines.setdefault(name, (machine_json, content))
        self._add(Path(name) / "machine.json", machine_json)

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
                self._add(Path(name) / path.name, path)
        for folder in keptfiles.FOLDERS:
            for path in sorted((source / folder).rglob("*")):
                if path in links or _under(path, links) or path.is_dir():
                    continue
                self._kept(source, path, folder)

    def _kept(self, source: Path, path: Path, folder: str) -> None:
        """A kept file: at FOLDER/<machine>/NAME (upstream: FOLDER/<machine>/<slug>/NAME),
        of a kind's name's form and its reader's (tfbench.keptfiles.KINDS)."""
        parts = path.relative_to(source / folder).parts
        if keptfiles.bisection.rendered(folder, parts):
            self.rendered.append(f"{path}: rendered again from bisect.json, not copied")
            return
        kind = keptfiles.place(folder, parts)
        if isinstance(kind, str):
            self.skipped.append(f"{path}: {kind}: skipped")
            return
        try:
            kind.read(path)
        except keptfiles.KeptFileError as e:
            self.skipped.append(f"{e}: skipped")
            return
        self._add(Path(folder, *parts), path)

    def _add(self, relative: Path, path: Path) -> None:
        """A file to copy; another source's different file of the same name is a conflict,
        which `wins` decides."""
        seen = self.files.get(relative)
        if seen is not None and seen.read_bytes() != path.read_bytes():
            if self.wins is None:
                self.conflicts.append((relative, seen, path))
                return
            if self.wins not in path.parents:
                return
        self.files[relative] = path


def _links(source: Path) -> set[Path]:
    """Every symbolic link under the source, not followed."""
    found = set()
    for top, dirs, files in os.walk(source):  # os.walk follows no link
        found |= {Path(top, name) for name in [*dirs, *files] if Path(top, name).is_symlink()}
    return found


def _under(path: Path, links: set[Path]) -> bool:
    return any(link in path.parents for link in links)


def merge(
    sources: list[Path], target: Path, replace: bool = False, wins: Path | None = None
) -> Merged:
    """Merge the results directories `sources` into `target` (MergeError: nothing done):
    `replace` kept files the sources change (their old versions kept, named), `wins` the
    source whose file wins where two differ."""
    plan = _Plan(target)
    plan.wins = wins
    if wins is not None and wins not in sources:
        raise MergeError(f"--wins {wins}: not one of the sources; nothing merged")
    for source in sources:
        if source.is_symlink() or not source.is_dir():
            raise MergeError(f"{source}: no such results directory (or a link); nothing merged")
        plan.source(source)
    if plan.conflicts:
        named, a, b = plan.conflicts[0]
        raise MergeError(
            f"{len(plan.conflicts)} file(s) differ between sources, e.g. {named} in {a} and "
            f"{b}: say which wins (--wins SOURCE); nothing merged"
        )
    new = {r: p.read_bytes() for r, p in sorted(plan.files.items())}
    if plan.benchmarks:  # every description the target and the sources hold
        index: dict[str, object] = {
            name: bench for name, (_, bench) in sorted(plan.benchmarks.items())
        }
        if plan.api_version is not None:
            index["version"] = plan.api_version
        new[Path("benchmarks.json")] = json.dumps(index, indent=4).encode()
    done = _move(target, new, replace, plan.skipped)
    done.rendered = plan.rendered
    return done


def _move(target: Path, new: dict[Path, bytes], replace: bool, skipped: list[str]) -> Merged:
    """The files into the results, whole or none: refused where a folder on the way is a
    link, or where a kept file would change without `replace`; each staged first, the old
    versions of those replaced kept beside the results."""
    done = Merged(skipped=skipped)
    for relative, data in new.items():
        _no_link(target, relative)
        kept = target / relative
        if kept.is_symlink() or (kept.exists() and not kept.is_file()):  # a FIFO would block
            raise MergeError(f"{kept}: not a regular file in the results; nothing merged")
        if not kept.exists():
            done.added.append(relative)
        elif kept.read_bytes() != data:
            done.replaced.append(relative)
    if done.replaced and not replace:
        shown = ", ".join(map(str, done.replaced[:4])) + " ..." * (len(done.replaced) > 4)
        raise MergeError(
            f"{len(done.replaced)} kept file(s) would change ({shown}): --replace keeps their "
            "old versions beside the results; nothing merged"
        )
    changed = [*done.added, *done.replaced]
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y%m%dT%H%M%SZ")
    old = target.parent / f"{target.name}-replaced" / stamp
    with _locked(target, changed):
        whole.sweep(".tfbench-merge-", target.parent)  # a killed merge's
        with whole.temporary(".tfbench-merge-", target.parent) as staged:
            for relative in changed:  # staged and read back before anything moves
                (staged / relative).parent.mkdir(parents=True, exist_ok=True)
                (staged / relative).write_bytes(new[relative])
                if (staged / relative).read_bytes() != new[relative]:
                    raise MergeError(f"{relative}: not staged whole; nothing merged")
            for relative in done.replaced:
                (old / relative).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(target / relative, old / relative)
            # every machine.json before the files beside it: asv reads no folder without
            # one, so a merge killed midway leaves whole folders, and a re-run completes it
            for relative in sorted(changed, key=lambda r: r.name != "machine.json"):
                (target / relative).parent.mkdir(parents=True, exist_ok=True)
                whole.move(staged / relative, target / relative)
    done.kept_old = old if done.replaced else None
    return done


def _no_link(target: Path, relative: Path) -> None:
    """MergeError where the results or a folder in them on the way to a file is a link."""
    for k in range(len(relative.parts)):  # the results, then each folder below them
        where = target.joinpath(*relative.parts[:k])
        if where.is_symlink():
            raise MergeError(
                f"{where}: a link in the results, not written through; nothing merged"
            )


@contextlib.contextmanager
def _locked(target: Path, changed: list[Path]) -> Iterator[None]:
    """The results held for the merge with the lock a run takes (one writer at a time,
    named), and each nightly history it writes into held as the watch holds it
    (MergeError where another run writes into them)."""
    target.mkdir(parents=True, exist_ok=True)
    histories = sorted(
        {r.parts[1] for r in changed if r.parts[0] == keptfiles.nightly_build.FOLDER}
    )
    with contextlib.ExitStack() as held:
        try:
            held.enter_context(whole.writing(target))
            for machine in histories:
                held.enter_context(series.reading(target, machine))
        except whole.Busy as e:
            raise MergeError(
                f"another run writes into {target} ({escape.plain(str(e))}): wait for it "
                "to end; nothing merged"
            ) from None
        except series.HistoryBusy as e:
            raise MergeError(f"{e}: nothing merged") from None
        yield
