"""The format number of each file tfbench keeps beside asv's results (docs/formats.md), and
the check every reader makes: a file of another format is named, never misread."""

from __future__ import annotations

from typing import Any

KEY = "format"
PROBES = 2  # results/probes/<commit>-<env>-<flavour>.json (2: its CPU; 1 is read too)
GATE_RUN = 2  # results/gate/<machine>/<old>-<new>.json (2: evidence as data, time's summary)
EXPLAINED = 1  # results/explain/<machine>/<tag>.json
BISECTION = 1  # results/upstream/<machine>/<slug>/bisect.json
GATE_SHARD = 1  # results/gate/<machine>/<old>-<new>[.plant-S].shard-I-of-N.json: its readings
CALIBRATION = 1  # results/calibration/<cpu id>/<old>-<new>[.plant-S].json: an A/A or planted gate
CHAIN = 1  # results/chain/<history>/<commit>-<env>.json: a release chained onto a history
NIGHTLY = 1  # results/nightly/<machine>/<nightly version>.json: a build the watch read
VERSIONS = 1  # benchmarks/versions.json


class FormatError(ValueError):
    """A kept file of a format this tfbench does not read."""


def problem(data: Any, expected: int, what: str) -> str | None:
    """Why `data` is not a JSON object of format `expected`, or None; a file kept before
    formats were numbered (no key) is format 1."""
    found = data.get(KEY, 1) if isinstance(data, dict) else None
    if found != expected:
        return f"{what}: format {found!r}; this tfbench reads format {expected}"
    return None


def check(data: Any, expected: int, what: str) -> None:
    """Raise FormatError unless `data` is a JSON object of format `expected`."""
    if wrong := problem(data, expected, what):
        raise FormatError(wrong)
