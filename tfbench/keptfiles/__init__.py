"""Every file tfbench keeps beside asv's results, one module a kind: its format number, its
folder, the form of its name, its typed record, its check, its read (through the one safe
reading path) and its write (docs/formats.md). Producers hand a writer plain data.
Each reads its FORMAT, naming a file of another; a format that renamed fields upgrades its
former files (UPGRADES, `upgraded`: upgrade).

- reading: the one safe reading path (KeptFileError) and the one writing path
- fields: the checks of fields several kinds share (a CPU, a measured record, a target)
- probes: every probe repeat of one asv run (results/probes/)
- packages: what an asv environment held (results/packages/; written by history.envsync)
- gate_run: a whole-suite gate run (results/gate/)
- gate_shard: a shard of a gate, its readings (results/gate/)
- calibration: the time reader's calibration on one CPU (results/calibration/)
- chain_link: a release chained onto a history (results/chain/)
- explained: why a release's leaking points leak (results/explain/)
- bisection: a nightly bisection filed upstream (results/upstream/)
- nightly_build: a tf-nightly build the watch read (results/nightly/)
- machine: asv's machine.json, checked as the site shows it
- upgrade: files of a former format rewritten in their kind's (`tfbench results upgrade`)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from tfbench import grammar
from tfbench.grammar import Invalid
from tfbench.keptfiles import (
    bisection,
    calibration,
    chain_link,
    explained,
    gate_run,
    gate_shard,
    machine,
    nightly_build,
    packages,
    probes,
)
from tfbench.keptfiles.reading import KeptFileError, load, regular


class Kind(Protocol):
    """A kind of kept file as merge, publish and the fuzz tests iterate it (place,
    misplaced): in its folder, under the folder of the machine (or CPU, or history) it
    belongs to."""

    FOLDER: str
    INSIDE: int  # folders between the results and the file

    def named(self, name: str) -> bool: ...
    def read(self, path: Path) -> Any: ...


# every kind a results folder holds beside asv's own (machine.json is asv's)
KINDS: tuple[Kind, ...] = (
    probes,
    packages,
    gate_run,
    gate_shard,
    calibration,
    chain_link,
    explained,
    bisection,
    nightly_build,
)


FOLDERS = sorted({k.FOLDER for k in KINDS})  # kinds that share a folder share its depth


def kind_of(folder: str, name: str) -> Kind | None:
    """The kind of a file by its folder under the results and its name, or None."""
    return next((k for k in KINDS if k.FOLDER == folder and k.named(name)), None)


def place(folder: str, parts: tuple[str, ...]) -> Kind | str:
    """The kind of the file at FOLDER/<parts> under the results (FOLDER/<machine>/NAME; a
    bisection's FOLDER/<machine>/<slug>/NAME), or why it is in no kind's place."""
    depth = next(k.INSIDE for k in KINDS if k.FOLDER == folder)
    kind = kind_of(folder, parts[-1])
    if (
        len(parts) != depth
        or not grammar.MACHINE.fullmatch(parts[0])
        or (depth == 3 and not grammar.SLUG.fullmatch(parts[1]))
        or kind is None
    ):
        report = "<report>/" * (depth == 3)
        return f"not in its place ({folder}/<machine>/{report}<name of its form>)"
    return kind


def misplaced(results: Path) -> list[str]:
    """Each regular file under a kind's folder that is in no kind's place, and why (links
    and what cannot be listed: each reader refuses them where it reads)."""
    found = []
    for folder in FOLDERS:
        for path in sorted((results / folder).rglob("*")):
            if path.is_symlink() or not path.is_file():
                continue
            parts = path.relative_to(results / folder).parts
            why = place(folder, parts)
            if isinstance(why, str) and not bisection.rendered(folder, parts):
                found.append(f"{path}: {why}")
    return found


__all__ = [
    "FOLDERS",
    "KINDS",
    "Invalid",
    "KeptFileError",
    "Kind",
    "kind_of",
    "load",
    "machine",
    "misplaced",
    "place",
    "regular",
]
