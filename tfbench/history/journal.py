"""A history run's probe readings, kept as they come, so that a run killed in a Costs
class's grid goes on where it stopped: the points read before are not read again.

Only a run that asks for it (`tfbench history measure` sets VAR to a folder) keeps one. A
journal is one Costs class's grid on one release and environment at one benchmark version:
`<VAR>/<commit>-<env>/<class>-<version>.json`, {"steps": what each reading is of (its
target, limits and repeat order), "records": the readings so far, in that order, "seconds":
the wall time the readings took over every run, "resumed": the part of it earlier runs took,
"setup_cache": asv's key of the setup_cache that reads the grid}. asv times a setup_cache
in the run that finishes it: `earlier` gives back what the runs before took, so that the
history's estimates count a grid's whole time. It is this machine's own scratch (under
.asv/), read back only where its steps are the run's.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tfbench import whole

VAR = "TFBENCH_JOURNAL"
CHUNK = 4  # readings a request: two a worker, a kill loses at most these


def path(costs_class: str, version: str) -> Path | None:
    """The journal of a Costs class's grid in the asv run under way; None where the run
    keeps none (VAR unset, or not run by asv)."""
    commit = os.environ.get("ASV_COMMIT")
    grids = _grids(commit, os.environ.get("ASV_ENV_NAME", "env")) if commit else None
    return grids / f"{costs_class}-{version}.json" if grids else None


def _grids(commit: str, env: str) -> Path | None:
    """The folder of the journals of `commit` in `env` in this run; None where it keeps none."""
    folder = os.environ.get(VAR)
    return Path(folder) / f"{commit}-{env}" if folder else None


def _load(where: Path) -> dict[str, Any]:
    """A journal's contents; empty where there is none or it is not whole."""
    try:
        kept = json.loads(where.read_bytes())
    except (OSError, ValueError, RecursionError):
        return {}
    return kept if isinstance(kept, dict) else {}


def fingerprint(steps: list[dict[str, Any]]) -> list[str]:
    """What each reading is of, short: a journal serves only the same readings."""
    return [hashlib.sha256(json.dumps(s, sort_keys=True).encode()).hexdigest()[:16] for s in steps]


def readings(where: Path) -> list[dict[str, Any]]:
    """The readings a journal holds, whatever they are of (for a count)."""
    records = _load(where).get("records")
    return records if isinstance(records, list) else []


def done(where: Path, steps: list[str]) -> list[dict[str, Any]]:
    """The readings a journal holds for these steps, in order: none where there is no
    journal, it is not whole, or it was of other steps."""
    return _kept(where, steps)[0]


def _kept(where: Path, steps: list[str]) -> tuple[list[dict[str, Any]], float]:
    """done's readings, and the seconds they took (0 where there are none)."""
    kept = _load(where)
    records = kept.get("records")
    if (
        not isinstance(records, list)
        or kept.get("steps") != steps
        or len(records) > len(steps)
        or not all(isinstance(r, dict) for r in records)
    ):
        return [], 0.0
    return records, _seconds(kept.get("seconds")) if records else 0.0


def _seconds(value: Any) -> float:
    """A journal's seconds: a finite count, or 0."""
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value < 1e9
    return float(value) if ok else 0.0


def earlier(commit: str, env: str, setup_cache: str) -> float:
    """The seconds the runs before this one took reading the grid of asv's `setup_cache`
    in this history run's journal of `commit` and `env` (0 where none is kept)."""
    grids = _grids(commit, env)
    for kept in map(_load, grids.glob("*.json") if grids else []):
        if kept.get("setup_cache") == setup_cache:
            return _seconds(kept.get("resumed"))
    return 0.0


def measured(
    where: Path,
    steps: list[dict[str, Any]],
    measure: Callable[[list[int]], list[dict[str, Any]]],
    say: Callable[[str], None] = print,
    setup_cache: str | None = None,
) -> list[dict[str, Any]]:
    """Every step's reading, those the journal holds taken from it and the others measured
    CHUNK at a time (`measure(indices)`), each chunk kept before the next, with the seconds
    every run took and asv's key of the `setup_cache` reading them."""
    prints = fingerprint(steps)
    records, resumed = _kept(where, prints)
    began = time.monotonic()

    def keep() -> None:
        spent = resumed + time.monotonic() - began
        kept = {"steps": prints, "records": records, "seconds": spent, "resumed": resumed}
        whole.write(where, json.dumps({**kept, "setup_cache": setup_cache}), sync=True)

    if records:
        say(f"tfbench: {len(records)} of {len(steps)} readings kept by a stopped run: going on")
        keep()  # this run's `resumed`, read when asv times it
    while len(records) < len(steps):
        start = len(records)
        records += measure(list(range(start, min(start + CHUNK, len(steps)))))
        keep()
    return records
