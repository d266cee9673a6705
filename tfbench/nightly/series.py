"""The nightly history of one machine: results/nightly/<machine>/<version>.json, one file per
tf-nightly build the watch read (its sentinels' readings, or why it is broken; its time
against the build read before it). Files may come from another machine: each is read
through tfbench.keptfiles, and a build's file is named by its version."""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tfbench import figures, keptfiles
from tfbench.keptfiles import KeptFileError
from tfbench.keptfiles.nightly_build import NightlyBuild
from tfbench.nightly import policy
from tfbench.nightly.builds import parse_time
from tfbench.nightly.policy import Build

# what a reading keeps of a measured record: its figures, and what says how it ran
KEEP = (
    {f.field for f in figures.FIGURES if f.field}
    | {f.interval for f in figures.FIGURES if f.interval}
    | {"status", "error", "tf_version", "params", "device", "iterations", "warmup", "counters"}
)


@dataclass
class Entry:
    """A build as read: its sentinels' readings (sentinel -> records), or why it is broken."""

    build: Build
    before: str | None = None  # the build published before it on the index (None: first)
    readings: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    broken: str | None = None
    times: list[dict[str, Any]] = field(default_factory=list)  # keptfiles.fields.Compared: its
    # timed sentinel against the build read before it, in one run (twice where it differed)
    environment: dict[str, Any] = field(default_factory=dict)

    @property
    def version(self) -> str:
        return self.build.version

    def median(self, sentinel: str, metric: str) -> float | None:
        """The median of the sentinel's readings of a figure; None when the build is broken
        or has none."""
        found = self.readings.get(sentinel) if self.broken is None else None
        return policy.median(metric, found) if found else None


def oldest_first(entries: list[Entry]) -> list[Entry]:
    """Entries in the order their builds were published: the history's one order."""
    return sorted(entries, key=lambda e: parse_time(e.build.uploaded))


class HistoryBusy(Exception):
    """Another run is reading this history."""


@contextlib.contextmanager
def reading(results_dir: Path, machine: str) -> Iterator[None]:
    """Held while a run reads builds into the machine's history (a lock on its folder): a
    second run would keep its own readings over the first's. HistoryBusy if one holds it."""
    where = keptfiles.nightly_build.folder(results_dir, machine)
    where.mkdir(parents=True, exist_ok=True)
    fd = os.open(where, os.O_RDONLY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise HistoryBusy(f"another tfbench watch is reading into {where}") from None
        yield
    finally:
        os.close(fd)


def compact(record: dict[str, Any]) -> dict[str, Any]:
    """A measured record as the nightly history keeps it (a step's RSS and heap after each
    iteration left out: its figures say what they hold)."""
    return {
        k: v
        for k, v in record.items()
        if k in KEEP and not (k in ("rss_bytes", "heap_bytes") and isinstance(v, list))
    }


def _entry(kept: NightlyBuild) -> Entry:
    b = kept["build"]
    return Entry(
        Build(b["version"], b["uploaded"], b["git_version"]),
        kept["before"],
        kept["readings"],
        kept["broken"],
        [dict(t) for t in kept["times"]],
        dict(kept["environment"]),
    )


def read(path: Path) -> Entry:
    """A build's file, of its form and named by its version (KeptFileError: which field)."""
    return _entry(keptfiles.nightly_build.read(path))


def load(results_dir: Path, machine: str, skipped: list[str] | None = None) -> list[Entry]:
    """The machine's builds read, oldest first. A file not of its form raises KeptFileError
    naming it; where `skipped` is given, it is said there and left out instead."""
    where = keptfiles.nightly_build.folder(results_dir, machine)
    found = []
    for path in sorted(where.glob("*.json")) if where.is_dir() else []:
        try:
            found.append(read(path))
        except KeptFileError as e:
            if skipped is None:
                raise
            skipped.append(f"{e}: skipped")
    return oldest_first(found)


def save(entry: Entry, results_dir: Path, machine: str) -> Path:
    """Write a build's file (replacing this machine's earlier reading of it), checked as a
    reader will read it."""
    body = {
        "build": {
            "version": entry.build.version,
            "uploaded": entry.build.uploaded,
            "git_version": entry.build.git_version,
        },
        "before": entry.before,
        "readings": {s: [compact(r) for r in rs] for s, rs in entry.readings.items()},
        "broken": entry.broken,
        "times": entry.times,
        "environment": entry.environment,
    }
    where = keptfiles.nightly_build.path(results_dir, machine, entry.version)
    return keptfiles.nightly_build.write(where, body)
