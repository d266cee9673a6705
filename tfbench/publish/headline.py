"""The report's first screen, in a TensorFlow user's words: what changed in the newest
release or candidate, largest first, each with its size and the CPUs it holds on; then what
leaks there; then what got better. The gate's vocabulary (pairs, intervals, unknown) and the
benchmark ids follow it, in the summary and the tables below.

Memory changes come first, largest in bytes first; time changes after them, largest ratio
first. A memory figure is the heap's (read to the byte) and holds on any CPU: three CPUs
read the same kept bytes, leak verdicts and heap peaks (docs/history.md#re-measuring). A
time change holds on the CPUs whose gate runs read it (tfbench.publish.by_cpu).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from tfbench import figures, naming
from tfbench.gate.rules import RSS_ONLY, Change
from tfbench.history.releases import label
from tfbench.publish import by_cpu, changes, families
from tfbench.units import format_value

LEAK = figures.BY_NAME["leak"].method
SHOWN = 6  # points a part names; the rest are counted, and in the tables below


@dataclass(frozen=True)
class Screen:
    title: str
    parts: list[tuple[str, list[str]]]  # (heading, lines): worse, leaks, better


def _words(point: str, row: Change, fams: dict[str, families.Family]) -> str:
    """A grid point in its pattern's words: the catalog's description and its params."""
    figure = figures.BY_METHOD.get(row.metric)
    if figure and figure.kind == figures.FOOTPRINT:  # TensorFlow itself
        said = ", ".join(f"{k}={v.strip(chr(39))}" for k, v in row.params.items())
        return f"TensorFlow after import, in a fresh process ({said})"
    family_name, _, rest = point.partition("(")
    family = fams.get(family_name)
    combo = tuple(v.strip() for v in rest.rstrip(")").split(", ")) if rest else ()
    if family is None:
        return point
    found = families.scenario_of(family, combo)
    if found is None:
        return family.label(combo)
    return _pattern(*found)


def _rss(row: Change) -> bool:
    figure = figures.BY_METHOD.get(row.metric)
    return bool(figure and (figure.heap or figure.name in ("footprint-rss", "process-peak")))


def _size(row: Change) -> tuple[int, float]:
    """The heap's figures first, by bytes; then RSS's, by bytes; then time, by its ratio."""
    old, new = row.old or 0.0, row.new or 0.0
    if naming.timed(row.metric):
        ratio = new / old if old > 0 and new > 0 else 1.0
        return 2, -abs(math.log(ratio))
    return int(_rss(row)), -abs(new - old)


def _figure(row: Change) -> str:
    figure = figures.BY_METHOD.get(row.metric)
    name = figure.label if figure else row.metric
    old, new = (format_value(v, row.unit, per="call") for v in (row.old, row.new))
    if row.metric == LEAK:
        return f"{name} {old} -> {new}"
    if naming.timed(row.metric) and row.old and row.new:
        return f"{name} {old} -> {new} (x{row.new / row.old:.2f})"
    return f"{name} {old} -> {new}"


def _where(point: str, row: Change, cpus: by_cpu.ByCpu | None, cpu: str) -> str:
    """Where a change holds: the heap's figure anywhere, RSS on this machine, a time on the
    CPUs whose gate runs read it (`cpu`: this machine's, where none but its own did)."""
    if _rss(row):
        return "RSS: of this machine's allocator, not its CPU"
    if not naming.timed(row.metric):
        return "the heap's figure: any CPU"
    if cpus is None:
        return cpu
    for group in cpus.groups:
        if any(p == point for p, _ in group.points):
            if len(group.cpus) == len(cpus.cpus):
                return "on each CPU that read it"
            return "on " + " and ".join(group.cpus) + " only"
    return cpu


def _lines(rows: list[Change], fams, cpus, cpu: str) -> list[str]:
    by_point: dict[str, list[Change]] = {}
    for row in sorted(rows, key=_size):
        family, combo = changes.point_of(row)
        by_point.setdefault(f"{family}({combo})", []).append(row)
    out = []
    for point, found in list(by_point.items())[:SHOWN]:
        told = "; ".join(_figure(r) for r in found[:2])
        where = _where(point, found[0], cpus, cpu)
        out.append(f"{_words(point, found[0], fams)}: {told} ({where})")
    if len(by_point) > SHOWN:
        out.append(f"and {len(by_point) - SHOWN} more, in the tables below")
    return out


def _pattern(scenario: str, params: dict) -> str:
    """A scenario in its catalog's words (its id where the catalog has none), its params."""
    from tfbench import scenarios

    found = scenarios.CATALOG.get(scenario)
    said = ", ".join(f"{k}={v}" for k, v in params.items() if k != "device")
    return (found.description if found else scenario) + (f" ({said})" if said else "")


def screen(
    newest: changes.Changes | None,
    leaking: list[tuple[str, str, dict]],
    fams: list[families.Family],
    cpus: by_cpu.ByCpu | None,
    cpu: str,
) -> Screen | None:
    """The first screen of a machine's report: its newest pair's confirmed changes
    (`newest`), the newest release's leaking points (`leaking`: point, scenario, params)."""
    if newest is None:
        return None
    old, new = newest.pair
    named = {f.name: f for f in fams}
    rows = [r for r in newest.rows if r.direction != RSS_ONLY and changes.confirmed(r)]
    worse = [r for r in rows if r.direction == "worse"]
    better = [r for r in rows if r.direction == "better"]
    parts = [
        ("Worse", _lines(worse, named, cpus, cpu) or ["nothing measured here got worse"]),
        (
            f"Leaks on {label(new)}",
            [_pattern(scenario, params) for _, scenario, params in leaking[:SHOWN]]
            + [f"and {len(leaking) - SHOWN} more"] * (len(leaking) > SHOWN)
            or ["none: no pattern keeps memory without bound"],
        ),
        ("Better", _lines(better, named, cpus, cpu) or ["nothing measured here got better"]),
    ]
    return Screen(f"What changed in {label(new)}, against {label(old)}", parts)
