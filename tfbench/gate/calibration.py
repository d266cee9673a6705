"""The time reader's calibration, kept per CPU: an A/A gate (a release against itself: every
time row a false one) and a planted gate (the new side's steps a share slower: a row found
where it points the planted way), each a record of what it read on each CPU that read it:
RESULTS/calibration/<cpu id>/<old>-<new>[.plant-S].json (tfbench.keptfiles.calibration.read).
A gate on a CPU with no A/A or no planted record says so in one line: its time rows hold
on a reader not yet calibrated there (docs/validation/gate.md opens with the figures).
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tfbench import cpu, keptfiles, naming
from tfbench.gate import rules
from tfbench.gate.readings import Point
from tfbench.gate.rules import Change
from tfbench.pairs import verdict

AA, PLANT = "aa", "plant"


def keep(
    results_dir: Path,
    pair: tuple[str, str],
    plant: float,
    rows: list[Change],
    timed: Mapping[Point, verdict.Timed],
    cpu_of: Mapping[Point, str],
    cpus: Mapping[str, cpu.Identity],
    seconds: float,
) -> list[Path]:
    """One record a CPU of an A/A or planted gate (else none): the time points it read, the
    rows (an A/A's every one false; a plant's found where worse), the gate's seconds."""
    if pair[0] != pair[1] and not plant:
        return []
    kept = []
    for cpu_id, identity in sorted(cpus.items()):
        points = [p for p, t in timed.items() if cpu_of.get(p) == cpu_id and t.skipped is None]
        names = {rules.point_name(p) for p in points}
        mine = [r for r in rows if naming.timed(r.metric) and r.name in names]
        body = {
            "kind": PLANT if plant else AA,
            "plant": plant,
            "pair": list(pair),
            "date": datetime.date.today().isoformat(),
            "cpu": identity,
            "points": len(points),
            "worse": sum(r.direction == "worse" for r in mine),
            "better": sum(r.direction == "better" for r in mine),
            "memory_rows": sum(not naming.timed(r.metric) for r in rows),
            "seconds": seconds,
        }
        where = keptfiles.calibration.path(results_dir, cpu_id, pair, plant)
        kept.append(keptfiles.calibration.write(where, body))
    return kept


def missing(results_dir: Path, cpu_id: str) -> list[str]:
    """The calibrations this CPU has no record of (its records of their form read)."""
    found: set[str] = set()
    for kept in sorted((results_dir / keptfiles.calibration.FOLDER / cpu_id).glob("*.json")):
        try:
            found.add(keptfiles.calibration.read(kept)["kind"])
        except keptfiles.KeptFileError:
            continue
    return [k for k in (AA, PLANT) if k not in found]


def notice(results_dir: Path, here: cpu.Identity) -> str | None:
    """One line where this CPU's time reader was not calibrated here, else None."""
    lacking = missing(results_dir, here["id"])
    if not lacking:
        return None
    told = {AA: "an A/A gate (tfbench gate R R)", PLANT: "a planted 5% (--plant 0.05)"}
    return (
        f"time on cpu {here['id']}: not calibrated here ({' and '.join(told[k] for k in lacking)}"
        " not kept for this CPU yet): its time rows hold on a reader uncalibrated on it"
    )


def summary(record: dict[str, Any]) -> str:
    """A record in a line, as docs/validation/gate.md's table counts it."""
    if record["kind"] == AA:
        return f"A/A: {record['worse'] + record['better']} false time row(s) of {record['points']}"
    return f"{record['plant']:.0%} planted: found at {record['worse']} of {record['points']}"
