"""The release report, computed once as data; tfbench.publish.markdown and .html render it.

Per machine: a verdict per seed-article claim, release by release (with the reason where a
release has no value); what changed between adjacent releases by the gate's rules, and the
newest pair as `tfbench gate` re-measured it (tfbench.publish.changes); per family, plots across
releases and a table of grid points x releases: time per iteration, peak increase, growth
per iteration, leak/flat, each with its ratio to the previous release.
"""

from __future__ import annotations

from dataclasses import dataclass

from tfbench.publish import changes, claims, families, findings
from tfbench.publish.results import Data, MachineResults
from tfbench.units import KiB, MiB, format_value

NO_VALUE = "No value on any release here (skipped or failed: asv's log has the reason)"
EXPLAIN = (
    "Each cell: time per iteration · peak increase · growth per iteration · leak "
    "verdict; (xN) is the ratio to the previous release."
)


@dataclass(frozen=True)
class Figure:
    value: float | None
    unit: str
    ratio: float | None  # to the previous release, where it means something

    def text(self) -> str:
        ratio = f" (x{self.ratio:.2f})" if self.ratio is not None else ""
        return format_value(self.value, self.unit) + ratio


@dataclass(frozen=True)
class Cell:
    release: str
    figures: tuple[Figure, ...]  # time, peak, growth
    leak: bool | None

    @property
    def empty(self) -> bool:
        return self.leak is None and all(f.value is None for f in self.figures)

    def text(self) -> str:
        if self.empty:
            return "no value"
        leak = "n/a" if self.leak is None else "LEAK" if self.leak else "flat"
        return " · ".join([*(f.text() for f in self.figures), leak])


@dataclass(frozen=True)
class TableRow:
    label: str
    cells: list[Cell]


@dataclass(frozen=True)
class Plot:
    title: str
    log: bool
    series: dict[str, list[float | None]]  # label -> value per release, in display units


@dataclass(frozen=True)
class FamilySection:
    name: str
    rows: list[TableRow]
    empty: list[str]  # labels of the scenario points with no value on any release
    plots: list[Plot]


@dataclass(frozen=True)
class MachineReport:
    name: str
    releases: list[str]
    verdicts: list[claims.Verdict]
    changes: list[changes.Changes]  # adjacent releases, oldest first, from the history
    gate_run: changes.Changes | None  # the newest pair, re-measured by `tfbench gate`
    articles: list[findings.ArticleSection]
    families: list[FamilySection]


@dataclass(frozen=True)
class Report:
    problems: list[str]  # unreadable results files, and why
    machines: list[MachineReport]


PLOTS = (
    ("time", "time per iteration (ms, log scale)", 1e3, True),
    ("growth", "growth per iteration (KiB/iteration)", 1 / KiB, False),
    ("peak", "peak increase (MiB)", 1 / MiB, False),
)


def _cell(
    family: families.Family,
    machine: MachineResults,
    combo: tuple[str, ...],
    tag: str,
    previous: str | None,
) -> Cell:
    figures = []
    for metric in ("time", "peak", "growth"):
        unit = families.METRICS[metric][1]
        value = machine.value(family.benchmark(metric), combo, tag)
        before = previous and machine.value(family.benchmark(metric), combo, previous)
        meaningful = value is not None and before and (metric != "growth" or abs(before) >= KiB)
        figures.append(Figure(value, unit, value / before if meaningful else None))
    leak = machine.value(family.benchmark("leak"), combo, tag)
    return Cell(tag, tuple(figures), None if leak is None else leak >= 1)


def _family(family: families.Family, machine: MachineResults) -> FamilySection:
    combos, empty = families.rows(family, machine)
    rows = [
        TableRow(
            family.label(c),
            [
                _cell(family, machine, c, tag, prev)
                for prev, tag in zip([None, *machine.releases], machine.releases)
            ],
        )
        for c in combos
    ]
    plots = []
    for metric, title, scale, log in PLOTS:
        series = {}
        for combo in combos:
            values = [machine.value(family.benchmark(metric), combo, t) for t in machine.releases]
            series[family.label(combo)] = [None if v is None else v * scale for v in values]
        plots.append(Plot(title, log, series))
    return FamilySection(family.name, rows, [family.label(c) for c in empty], plots)


def _machine(data: Data, machine: MachineResults) -> MachineReport:
    fams = families.families(data.benchmarks)
    by_name = {f.name: f for f in fams}
    return MachineReport(
        machine.machine,
        list(machine.releases),
        [claims.judge(c, by_name.get(c.family), machine) for c in claims.CLAIMS],
        changes.history_changes(data, machine),
        changes.kept_run(data, machine, data.results_dir) if data.results_dir else None,
        findings.sections(by_name, machine),
        [_family(f, machine) for f in fams],
    )


def build(data: Data) -> Report:
    """The whole report, once: the renderers only format it."""
    return Report(list(data.problems), [_machine(data, m) for m in data.machines.values()])


def verdict_parts(verdict: claims.Verdict) -> tuple[str, list[str]]:
    """(the word for the newest release: TRUE, FALSE or no data; the release-by-release
    summary), as plain text for either renderer."""
    newest = verdict.newest
    word = (
        "no data"
        if newest is None or newest.holds is None
        else "TRUE"
        if newest.holds
        else "FALSE"
    )
    groups: dict[str, list[str]] = {"holds on": [], "does not hold on": [], "no value on": []}
    for o in verdict.outcomes:
        ratio = f" (x{o.ratio:.2f})" if o.ratio is not None else ""
        key = "no value on" if o.holds is None else "holds on" if o.holds else "does not hold on"
        groups[key].append(o.release + ratio)
    parts = [f"{k} {', '.join(v)}" for k, v in groups.items() if v]
    parts += [f"why: {r}" for r in verdict.reasons]
    return word, parts
