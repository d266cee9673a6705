"""The release report, computed once as data; tfbench.publish.markdown and .html render it,
and `as_json` gives it to other tools (`tfbench report --json`).

Per machine, in reading order: a summary (the newest release against the one it is
compared with: how many points got worse or better, common shifts, leaks that appeared or
went away, claims whose verdict changed); that pair's rows, as `tfbench gate` re-measured
them or by the gate's rules on the history (tfbench.publish.changes); a verdict per
seed-article claim, release by release (with a one-line reason where a release has no
value); the articles' examples; what changed between adjacent releases; per family, plots
across releases and a table of grid points x releases.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from tfbench import answers, escape
from tfbench.figures import BY_NAME, SLOPE
from tfbench.gate.rules import RSS_ONLY, Change
from tfbench.gate.shifts import Shift
from tfbench.history.releases import label, newest_pair
from tfbench.pairs.verdict import time_line
from tfbench.publish import (
    articles,
    by_cpu,
    chain,
    changes,
    claims,
    coverage,
    explained,
    families,
    filed,
    findings,
    headline,
    python_axis,
    reasons,
)
from tfbench.publish.reasons import span
from tfbench.publish.reported import ReportAnswers, answered
from tfbench.publish.results import Data, MachineResults
from tfbench.units import KiB, MiB, format_value

NAMED = 4  # points named in a summary line; the rest counted
LEAK = BY_NAME["leak"].method
CHANGES_NOTE = (
    "By the gate's rules on the readings the history recorded (each release's timing "
    "samples and probe repeats), newest first, the newest pair above: confirmed changes only, "
    "a row a grid point and the points of its family that changed alike; RSS that moved "
    "without the heap is left out (the newest pair shows it)."
)

BESIDE = (
    "Claims, examples and families: as the site's graphs show this CPU's figures beside those"
    " of the history that holds these releases and more,"
)
NO_VALUE = "No value on any release here (skipped or failed: asv's log has the reason)"
EXPLAIN = (
    "Each cell: time per iteration · peak increase · growth per iteration · leak "
    "verdict; (xN) is the ratio to the previous release."
)


@dataclass(frozen=True)
class Value:
    value: float | None
    unit: str
    ratio: float | None  # to the previous release, where it means something

    def text(self) -> str:
        ratio = f" (x{self.ratio:.2f})" if self.ratio is not None else ""
        return format_value(self.value, self.unit) + ratio


@dataclass(frozen=True)
class FamilyCell:
    release: str
    figures: tuple[Value, ...]  # families.CELL: time, heap-peak, retained
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
    cells: list[FamilyCell]


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
class Summary:
    newest: changes.Changes | None  # None: fewer than two releases
    remeasured: bool  # by `tfbench gate`; else by the gate's rules on the history
    claims_changed: list[tuple[claims.Claim, bool | None, bool | None]]

    def _rows(self, metric: str, direction: str) -> list[Change]:
        rows = self.newest.rows if self.newest else []
        return [r for r in rows if r.direction == direction and r.metric.startswith(metric)]

    def newest_rows(
        self, direction: str, keep: Callable[[Change], bool] = lambda r: True
    ) -> list[Change]:
        return [r for r in self._rows("", direction) if keep(r)]

    @property
    def leaks_appeared(self) -> list[Change]:
        return self._rows(LEAK, "worse")

    @property
    def leaks_gone(self) -> list[Change]:
        return self._rows(LEAK, "better")


@dataclass(frozen=True)
class MachineReport:
    name: str
    releases: list[str]
    summary: Summary
    # the newest release's leaking points -> why they leak (tfbench explain; None: not yet)
    why: dict[str, str | None]
    verdicts: list[claims.Answer]
    changes: list[changes.Changes]  # adjacent releases, oldest first, from the history
    articles: list[findings.ArticleSection]
    reported: list[ReportAnswers]  # TensorFlow's reported leaks, answered
    families: list[FamilySection]
    filed: list[filed.Filed]  # reports to file with TensorFlow (tfbench upstream)
    pythons: python_axis.PythonSection | None  # the newest release on other Pythons
    # which CPU read each release's time: (releases, the CPU), tfbench.publish.chain.read_on
    read_on: list[tuple[list[str], str]]
    # the machine whose history holds every release this one read and more: this one is
    # told in brief beside it (its CPU's figures; the rest is the history's to tell)
    beside: str | None = None
    by_cpu: by_cpu.ByCpu | None = None  # the newest pair's time on each CPU that read it
    screen: headline.Screen | None = None  # the first screen, in a TensorFlow user's words


@dataclass(frozen=True)
class Report:
    problems: list[str]  # unreadable results files, and why
    machines: list[MachineReport]
    nightly: bool = False  # the site has the nightly watch's page

    @property
    def reported(self) -> bool:
        """Whether some machine answers TensorFlow's reported leaks (the site's page)."""
        return any(r.measured for m in self.machines for r in m.reported)


PLOTS = (
    ("time", "time per iteration (ms, log scale)", 1e3, True),
    ("retained", "retained per iteration, the heap (KiB/iteration)", 1 / KiB, False),
    ("heap-peak", "heap peak increase (MiB)", 1 / MiB, False),
    ("growth", "RSS growth per iteration (KiB/iteration)", 1 / KiB, False),
    ("peak", "RSS peak increase (MiB)", 1 / MiB, False),
)


def _cell(
    family: families.Family,
    machine: MachineResults,
    combo: tuple[str, ...],
    tag: str,
    previous: str | None,
) -> FamilyCell:
    figures = []
    for metric in families.CELL:
        value = machine.value(family.benchmark(metric), combo, tag)
        if value is None and metric in families.RSS_OF:  # measured before the heap was read
            metric = families.RSS_OF[metric]
            value = machine.value(family.benchmark(metric), combo, tag)
        unit = BY_NAME[metric].unit
        before = machine.value(family.benchmark(metric), combo, previous) if previous else None
        slope = BY_NAME[metric].kind == SLOPE
        ratio = None
        if value is not None and before and (not slope or abs(before) >= KiB):
            ratio = value / before
        figures.append(Value(value, unit, ratio))
    leak = machine.value(family.benchmark("leak"), combo, tag)
    return FamilyCell(tag, tuple(figures), None if leak is None else leak >= 1)


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


def _summary(data: Data, machine: MachineResults, verdicts: list[claims.Answer]) -> Summary:
    """The newest pair: as `tfbench gate` re-measured it where that run is kept, else by
    the gate's rules on the history; and the claims whose verdict differs between them."""
    pair = newest_pair(machine.releases)
    if pair is None:
        return Summary(None, False, [])
    kept = changes.kept_run(data, machine, data.results_dir) if data.results_dir else None
    newest = kept or changes.recorded(data, machine, pair)
    changed = []
    for v in verdicts:
        held = {o.release: o.holds for o in v.outcomes}
        if held.get(pair[0]) != held.get(pair[1]):
            changed.append((v.claim, held.get(pair[0]), held.get(pair[1])))
    return Summary(newest, kept is not None, changed)


def _machine(
    data: Data, machine: MachineResults, beside: str | None, bisected: list[filed.Filed]
) -> MachineReport:
    fams = families.families(data.benchmarks)
    by_name = {f.name: f for f in fams}
    verdicts = [claims.judge(c, by_name.get(c.family), machine) for c in articles.CLAIMS]
    why: dict[str, str | None] = {}
    leaking: list[tuple[str, str, dict]] = []
    if machine.releases:
        newest = machine.releases[-1]
        found = explained.read(data, machine.machine, newest)
        leaking = explained.leaking(data, machine, newest)
        why = {name: found.get(name) for name, _, _ in leaking}
    summary = _summary(data, machine, verdicts)
    cpus = _by_cpu(data, machine) if beside is None else None
    read_on = chain.read_on(machine.releases, machine.cpu, _links(data, machine.machine))
    return MachineReport(
        machine.machine,
        list(machine.releases),
        summary,
        why,
        verdicts,
        [_counted(c) for c in changes.history_changes(data, machine)],
        findings.sections(by_name, machine),
        answered(by_name, machine),
        [_family(f, machine) for f in fams],
        bisected,
        python_axis.across_pythons(machine, fams),
        read_on,
        beside,
        cpus,
        headline.screen(summary.newest, leaking, fams, cpus, "on this machine's CPU")
        if beside is None
        else None,
    )


def _by_cpu(data: Data, machine: MachineResults) -> by_cpu.ByCpu | None:
    pair = newest_pair(machine.releases)
    if pair is None or data.results_dir is None:
        return None
    return by_cpu.read(data.results_dir, pair, data.problems)


def _counted(found: changes.Changes) -> changes.Changes:
    """A pair's changes without its `rss only` rows (heap layout, not counted)."""
    items = [i for i in found.items if i.row.direction != RSS_ONLY]
    return dataclasses.replace(found, items=items)


def _links(data: Data, machine: str) -> dict[str, Any]:
    return chain.links(data.results_dir, machine, data.problems) if data.results_dir else {}


def by_cpu_head(found: by_cpu.ByCpu) -> str:
    return (
        f"Time on each CPU that read this pair ({'; '.join(found.cpus)}; ratios in that "
        "order): a time change holds for the CPU it was read on, and is general where it "
        "holds on each."
    )


def brief(m: MachineReport) -> list[str]:
    """A machine told beside a history: its newest pair's counts and time line."""
    return summary_lines(m.summary)[:2]


def read_on_line(m: MachineReport) -> str:
    """Which CPU each release's time was read on, in a sentence (a time figure holds for its
    CPU: docs/history.md)."""
    parts = [f"{span(tags, m.releases)} on {on}" for tags, on in m.read_on]
    return f"Time read: {'; '.join(parts)}." if parts else "No time read."


def _points(rows: Iterable[Change]) -> list[str]:
    """The grid points the rows are of, as the report names them: family(params)."""
    return list(dict.fromkeys("{}({})".format(*changes.point_of(r)) for r in rows))


def _names(rows: list[Change]) -> str:
    points = _points(rows)
    named = ", ".join(points[:NAMED])
    return named + (f" and {len(points) - NAMED} more" if len(points) > NAMED else "")


def shifts_line(found: tuple[Shift, ...]) -> str:
    """A pair's common shifts, one sentence: each is one cause, its points not rows."""
    told = "; ".join(s.text() for s in found)
    return f"Common to most points (each one cause, not counted as rows): {told}."


WORD = {True: "holds", False: "does not hold", None: "no value"}
NOT_HERE = "No data on this machine (not measured here, or of another version)"


def told(m: MachineReport) -> tuple[list[claims.Answer], str | None]:
    """The machine's claims with a value or a reason on some release, and one line naming
    those with neither (their family not measured on this machine)."""
    shown = [v for v in m.verdicts if any(o.holds is not None or o.reason for o in v.outcomes)]
    rest = [f"[{v.claim.article}] {v.claim.text}" for v in m.verdicts if v not in shown]
    return shown, f"{NOT_HERE}: {'; '.join(rest)}" if rest else None


def told_articles(m: MachineReport) -> tuple[list[findings.ArticleSection], str | None]:
    """The articles with an example measured or failing on some release, and one line
    naming the rest."""
    shown = [
        a
        for a in m.articles
        if any(lit.error is not None or lit.measured for ex in a.examples for lit in ex.literal)
    ]
    rest = [a.article.number for a in m.articles if a not in shown]
    return shown, f"{NOT_HERE}: {', '.join(rest)}." if rest else None


def summary_lines(s: Summary) -> list[str]:
    """The summary as plain sentences (3-8), for either renderer."""
    if s.newest is None:
        return ["Fewer than two releases: nothing to compare yet."]
    old, new = s.newest.pair
    how = "re-measured by tfbench gate" if s.remeasured else "by the gate's rules on the history"
    counts = [len(_points(s.newest_rows(d, changes.confirmed))) for d in ("worse", "better")]
    rss_only = _points(s.newest_rows(RSS_ONLY))
    once = _points(
        r for d in ("worse", "better") for r in s.newest_rows(d) if not changes.confirmed(r)
    )
    lines = [
        f"{label(new)} against {label(old)} ({how}): {counts[0]} point(s) worse"
        f" and {counts[1]} better beyond the floors"
        + (
            f", confirmed; {len(once)} more read apart too few times (shown, not counted)"
            if once
            else ""
        )
        + (
            f"; RSS moved without the heap at {len(rss_only)} more (heap layout, not counted)."
            if rss_only
            else "."
        )
    ]
    if s.newest.time:
        said = time_line(s.newest.time, s.newest.cpu)
        lines.append(said + ": no row is no proof of no change there.")
    if s.newest.shifts:
        lines.append(shifts_line(s.newest.shifts))
    appeared, gone = s.leaks_appeared, s.leaks_gone
    if appeared or gone:
        lines.append(
            f"Leaks that appeared: {_names(appeared) or 'none'}. "
            f"Leaks that went away: {_names(gone) or 'none'}."
        )
    else:
        lines.append("No leak appeared or went away.")
    if s.claims_changed:
        lines += [
            f"Claim changed: {c.text}: {WORD[a]} on {old}, {WORD[b]} on {new}."
            for c, a, b in s.claims_changed
        ]
    else:
        lines.append("No claim's verdict changed.")
    worse = [r for r in s.newest_rows("worse") if r.metric != LEAK]
    lines.append(
        f"Worse: {_names(worse)}." if worse or appeared else "Nothing measured here got worse."
    )
    return lines


def build(data: Data) -> Report:
    """The whole report, once: the renderers only format it. The reference machine
    (coverage.REFERENCE) leads; the time of a pair on each CPU is said once, under the
    first machine that reads the pair; the bisections to file upstream, every machine's,
    under the first machine."""
    held = {m.machine: set(m.releases) for m in data.machines.values()}
    ordered = sorted(data.machines.values(), key=lambda m: m.machine != coverage.REFERENCE)
    machines: list[MachineReport] = []
    said: set[tuple[str, str] | None] = set()  # the pairs whose time on each CPU is said
    bisected = filed.read(data)  # every machine's bisections, under the first machine
    for m in ordered:  # may add problems
        beside = next((o for o, r in held.items() if r > held[m.machine]), None)
        built = _machine(data, m, beside, [] if machines else bisected)
        pair = newest_pair(built.releases)
        if built.by_cpu is not None and pair in said:
            built = dataclasses.replace(built, by_cpu=None)
        said.add(pair if built.by_cpu is not None else None)
        machines.append(built)
    return Report(
        list(dict.fromkeys(escape.local(p, data.results_dir) for p in data.problems)), machines
    )


def verdict_parts(verdict: claims.Answer) -> tuple[str, list[str]]:
    """(the word for the newest release: TRUE, FALSE, does not run (its probe kept why: an
    error, a timeout or a skip) or no data; the release-by-release summary), as plain text
    for either renderer."""
    newest = verdict.newest
    if newest is None or newest.holds is None:
        word = answers.FAILS if newest and newest.reason else "no data"
    else:
        word = "TRUE" if newest.holds else "FALSE"
    groups: dict[str, list[claims.Outcome]] = {"holds": [], "does not hold": [], "no value": []}
    for o in verdict.outcomes:
        groups[WORD[o.holds]].append(o)
    releases = [o.release for o in verdict.outcomes]
    parts = []
    for key, found in groups.items():
        if not found:
            continue
        ratios = [o.ratio for o in found if o.ratio is not None]
        spread = f" (x{min(ratios):.2f}-x{max(ratios):.2f})" if ratios else ""
        parts.append(f"{key} on {reasons.span([o.release for o in found], releases)}{spread}")
    missing = [(o.release, o.reason) for o in verdict.outcomes if o.reason]
    parts += [f"why {why}" for why in reasons.by_release(missing, releases)]
    return word, parts


def _change(r: Change) -> dict[str, Any]:
    return dict(r.as_json(), name=r.name)


def _changes(c: changes.Changes | None) -> dict[str, Any] | None:
    if c is None:
        return None
    return {
        "pair": list(c.pair),
        "source": c.source,
        "shifts": [s.as_json() | {"text": s.text()} for s in c.shifts],
        "rows": [_change(r) for r in c.rows],
    }


def as_json(report: Report) -> dict[str, Any]:
    """The summary and the findings as data (`tfbench report --json`): for CI job
    summaries and other tools."""
    machines = []
    for m in report.machines:
        s = m.summary
        machines.append(
            {
                "machine": m.name,
                "releases": [{"tag": t, "candidate": label(t) != t} for t in m.releases],
                "summary": {
                    "lines": summary_lines(s),
                    "newest": _changes(s.newest),
                    "remeasured": s.remeasured,
                    "leaks_appeared": [r.name for r in s.leaks_appeared],
                    "leaks_gone": [r.name for r in s.leaks_gone],
                    "claims_changed": [
                        {"claim": c.text, "before": a, "after": b} for c, a, b in s.claims_changed
                    ],
                },
                "claims": [
                    {"claim": v.claim.text, "article": v.claim.article}
                    | dict(zip(("newest", "releases"), verdict_parts(v)))
                    for v in m.verdicts
                ],
                "articles": [
                    {
                        "article": a.article.title,
                        "examples": [
                            {"example": e.example.variant, "says": e.example.says}
                            | {"findings": [{"finding": f, "releases": t} for f, t in e.findings]}
                            for e in a.examples
                        ],
                    }
                    for a in m.articles
                ],
                "why": m.why,
                "changes": [_changes(c) for c in m.changes],
            }
        )
    return {"problems": report.problems, "machines": machines}
