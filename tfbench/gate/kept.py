"""A whole-suite gate run's conclusion, and the record of it kept for the report
(tfbench.keptfiles.gate_run owns its file: results/gate/<machine>/<old>-<new>.json)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tfbench import figures, keptfiles
from tfbench.gate import rules, shifts
from tfbench.gate.readings import Point, Side
from tfbench.gate.rules import Change
from tfbench.gate.shifts import Shift
from tfbench.keptfiles.gate_run import GateRow
from tfbench.pairs.verdict import Timed

Differing = list[tuple[Shift, list[Change]]]  # each common shift, the rows that differ from it


def conclude(
    benchmarks: dict[str, dict],
    old: Side,
    new: Side,
    timed: dict[Point, Timed],
    cpu_of: Mapping[Point, str],
) -> tuple[list[Change], Differing]:
    """What changed between two sides' readings, by the gate's rules (worse first), and
    the common shifts with the rows of the points that differ from them: one whole gate's
    conclusion, or its shards' joined (tfbench.gate.shards). `cpu_of`: each time point's
    CPU id."""
    times = rules.time_rows(benchmarks, timed, cpu_of)
    rows = rules.compare(benchmarks, old, new) + times
    rows.sort(key=lambda r: (rules.DIRECTIONS.index(r.direction), r.name))
    found, folded = shifts.common_shifts(benchmarks, old, new)
    folded += times
    return rows, [(s, [r for r in folded if shifts.covering([s], r)]) for s in found]


def write(
    results_dir: Path,
    machine: str,
    pair: tuple[str, str],
    time: dict[str, Any],
    rows: list[Change],
    shifts: Sequence[tuple[Shift, list[Change]]] = (),
    read_on: dict[str, Any] | None = None,
) -> Path:
    """The run's rows, each shift with the rows of the points that differ from it, and what
    it was `read_on` ({"cpus": {id: identity}, "onednn": {id: each side's ISA}})."""
    run = {
        "time": time,
        "rows": [r.as_json() for r in rows],
        "shifts": [dict(s.as_json(), rows=[r.as_json() for r in differ]) for s, differ in shifts],
        **(read_on or {}),
    }
    return keptfiles.gate_run.write(keptfiles.gate_run.path(results_dir, machine, pair), run)


def read(
    results_dir: Path, machine: str, pair: tuple[str, str]
) -> keptfiles.gate_run.GateRun | None:
    """The kept run, every field checked; None where there is none (KeptFileError where it
    is not of its form)."""
    kept = keptfiles.gate_run.path(results_dir, machine, pair)
    if not kept.exists() and not kept.is_symlink():
        return None
    return keptfiles.gate_run.read(kept)


def worse_rows(run: keptfiles.gate_run.GateRun) -> list[GateRow]:
    """The run's worse rows of figures a nightly bisection reads (tfbench.figures), in the
    order to write them up: by the table's order of figures (what the heap and the verdict
    say first), then by relative change, largest first."""
    order = {f.method: k for k, f in enumerate(figures.FIGURES) if f.bisect}

    def change(row: GateRow) -> float:
        old, new = row["old"] or 0.0, row["new"] or 0.0
        return abs(new - old) / max(abs(old), 1e-12)

    found = [r for r in run["rows"] if r["direction"] == "worse" and r["metric"] in order]
    return sorted(found, key=lambda r: (order[r["metric"]], -change(r)))
