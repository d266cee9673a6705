"""The release report as Markdown (report.md, `tfbench report`).

Names, param values, reasons and file paths come from results, possibly other machines':
every such text goes through `escape`, so that a renderer that passes HTML through shows it as
text. Claims are this project's own Markdown.
"""

from __future__ import annotations

from tfbench.escape import code
from tfbench.escape import command as shell
from tfbench.escape import markdown as escape
from tfbench.history.releases import label
from tfbench.publish.changes import Changes
from tfbench.publish.filed import WHERE_MEASURED
from tfbench.publish.findings import ARTICLES_NOTE, FAMILY, example_text
from tfbench.publish.reasons import span
from tfbench.publish.report import (
    BESIDE,
    CHANGES_NOTE,
    EXPLAIN,
    NO_VALUE,
    MachineReport,
    Report,
    brief,
    by_cpu_head,
    read_on_line,
    shifts_line,
    summary_lines,
    told,
    told_articles,
    verdict_parts,
)

HEAD = ["| point | direction | what changed | re-measure |", "|---|---|---|---|"]


def _changes(changes: Changes) -> list[str]:
    """The newest pair: where its rows come from, its common shifts, its table."""
    out = [f"From {changes.source}."]
    out += [escape(shifts_line(changes.shifts))] * bool(changes.shifts)
    if not changes.items:
        other = "other " * bool(changes.shifts)
        return [*out, f"No {other}change beyond the floors."]
    return [*out, "", *HEAD, *_rows(changes)]


def _rows(changes: Changes, first: str = "") -> list[str]:
    """A row a finding; `first` the cells before them (the pair, in the table of pairs)."""
    out = []
    for point in changes.points:
        what = "; ".join(
            f"[{escape(i.row.metric)}]({i.url}): {escape(i.row.told)}" for i in point.items
        )
        alike = f" (and alike at {len(point.alike)} more: {'; '.join(point.alike)})" * bool(
            point.alike
        )
        name = escape(point.name + alike)
        out.append(f"| {first}{name} | {point.direction} | {what} | {code(point.command)} |")
    return out


def _pairs(m: MachineReport) -> list[str]:
    """Every adjacent pair but the newest (told above), newest first, in one table: a
    pair's common shifts are one row, its findings one row each."""
    out = ["", "### What changed between adjacent releases", "", CHANGES_NOTE, ""]
    out += ["| releases " + HEAD[0], "|---" + HEAD[1]]
    for changes in reversed(m.changes):
        if m.summary.newest and changes.pair == m.summary.newest.pair:
            continue
        pair = " -> ".join(escape(label(t)) for t in changes.pair) + " | "
        if changes.shifts:
            shifts = "; ".join(s.text() for s in changes.shifts)
            out.append(f"| {pair}most points | common, one cause each | {escape(shifts)} | |")
        out += _rows(changes, pair)
        if not changes.items:
            out.append(f"| {pair}- | none | no {'other ' * bool(changes.shifts)}change | |")
    return out


def _articles(m: MachineReport) -> list[str]:
    if not m.articles:
        return []
    out = ["", "### Articles: their examples as written", "", ARTICLES_NOTE]
    shown, not_here = told_articles(m)
    if not_here:
        out += ["", escape(not_here)]
    for section in shown:
        out += ["", f"#### {section.article.number}: {section.article.title}", ""]
        for ex in section.examples:
            found = "; ".join(
                f"on {escape(span(tags, m.releases))}: {escape(text)}"
                for text, tags in ex.findings
            )
            why = m.why.get(f"{FAMILY}('{ex.example.variant}')")
            why = f" Why on {escape(label(m.releases[-1]))}: {escape(why)}." if why else ""
            out.append(
                f"- **{ex.example.variant}** ({escape(example_text(ex.example))}). The article: "
                f"{ex.example.says}. Found {found}.{why}"
            )
        heads = ["as written", *map(escape, m.releases)]
        out += ["", "| " + " | ".join(heads) + " |", "|---" * len(heads) + "|"]
        for ex in section.examples:
            cells = [escape(lit.text()) for lit in ex.literal]
            out.append("| " + " | ".join([ex.example.variant, *cells]) + " |")
    return out


def _newest(m: MachineReport) -> list[str]:
    s = m.summary
    if s.newest is None:
        return []
    pair = s.newest.pair
    out = ["", f"### Newest release: {' -> '.join(escape(label(t)) for t in pair)}", ""]
    out += _changes(s.newest)
    if m.by_cpu:
        out += ["", escape(by_cpu_head(m.by_cpu)), ""]
        out += [f"- {escape(line)}" for line in m.by_cpu.lines()]
    if not s.remeasured:
        command = shell(["tfbench", "gate", *pair, "--machine", m.name])
        out += ["", f"Not re-measured on this machine yet: {code(command)}"]
    return out


def _why(m: MachineReport) -> list[str]:
    if not m.why:
        return []
    newest = escape(label(m.releases[-1]))
    out = ["", f"### Why they leak on {newest} (`tfbench explain`: its own traced run)", ""]
    if not any(m.why.values()):
        command = shell(["tfbench", "explain", "--leaking", "--machine", m.name])
        return [
            *out,
            f"{len(m.why)} point(s) leak; not explained on this machine yet: {code(command)}",
        ]
    return out + [
        f"- {escape(name)}: {escape(why or 'not explained')}" for name, why in m.why.items()
    ]


def _filed(m: MachineReport) -> list[str]:
    if not m.filed:
        return []
    out = ["", "### To file with TensorFlow (`tfbench upstream`: nightly bisections)", ""]
    return out + [
        f"- {escape(f.target)}, {escape(f.metric)}: {escape(f.line)} "
        + (
            f"([issue]({f.link(m.name, 'issue.md')}), [repro]({f.link(m.name, 'repro.py')}))"
            if f.rendered
            else f"({WHERE_MEASURED})"
        )
        for f in m.filed
    ]


def _pythons(m: MachineReport) -> list[str]:
    s = m.pythons
    if s is None:
        return []
    out = [
        "",
        f"### Pythons at {escape(label(s.release))}: {', '.join(s.pythons)} beside 3.11",
        "",
    ]
    if not s.findings:
        return [
            *out,
            "No point's leak verdict, kept bytes, garbage or heap peak differs beyond the floors.",
        ]
    return out + [
        f"- {escape(f.point)}, Python {escape(f.python)}: {escape(f.text)}"
        + (f" ({code(f.command)})" if f.command else "")
        for f in s.findings
    ]


def _claims(m: MachineReport) -> list[str]:
    out = ["", "### Claims", ""]
    newest = escape(label(m.releases[-1])) if m.releases else None
    shown, not_here = told(m)
    for v in shown:
        word, parts = verdict_parts(v)
        head = f"**{word}** on {newest}" if newest else "**no data**"
        out.append(
            f"- [{v.claim.article}] {v.claim.text}: " + "; ".join([head, *map(escape, parts)])
        )
    if not_here:
        out.append(f"- {escape(not_here)}")
    return out


def _families(m: MachineReport) -> list[str]:
    """Every family's points in one table, each named as the report names points."""
    releases = [escape(label(r)) for r in m.releases]
    out = ["", "### Families, point by point", "", EXPLAIN]
    shown = [f for f in m.families if not (f.name == FAMILY and m.articles)]  # told above
    empty = [f"{f.name}: {'; '.join(f.empty)}" for f in shown if f.empty]
    if empty:
        out += ["", f"{NO_VALUE}: {escape(' / '.join(empty))}"]
    if any(f.rows for f in shown):
        out += ["", "| " + " | ".join(["point", *releases]) + " |"]
        out.append("|" + "---|" * (len(m.releases) + 1))
    for family in shown:
        out += [
            "| "
            + " | ".join([escape(f"{family.name}: {row.label}"), *(c.text() for c in row.cells)])
            + " |"
            for row in family.rows
        ]
    return out


def _screen(m: MachineReport) -> list[str]:
    """The first screen: the newest release in the patterns' words (tfbench.publish.headline)."""
    if m.screen is None:
        return []
    out = ["", f"### {escape(m.screen.title)}"]
    for heading, lines in m.screen.parts:
        out += ["", f"**{escape(heading)}**", "", *(f"- {escape(line)}" for line in lines)]
    return out


def _machine(m: MachineReport) -> list[str]:
    releases = [escape(label(r)) for r in m.releases]
    out = [f"## Machine {escape(m.name)}", "", f"Releases: {', '.join(releases) or 'none'}"]
    out += ["", escape(read_on_line(m))]
    if m.beside:  # its newest pair as this CPU read it, in brief; the rest is the history's
        return [
            *out,
            "",
            *(f"- {escape(line)}" for line in brief(m)),
            "",
            f"{BESIDE} {escape(m.beside)}.",
        ]
    out += _screen(m)
    out += ["", "### Summary", "", *(f"- {escape(line)}" for line in summary_lines(m.summary))]
    out += _newest(m)
    out += _claims(m)
    out += _why(m)
    out += _filed(m)
    out += _pythons(m)
    out += _articles(m)
    return out + _pairs(m) + _families(m)


def render(report: Report) -> str:
    out = ["# tfbench release report"]
    for machine in report.machines:
        out += ["", *_machine(machine)]
    if report.problems:
        out += ["", "## Results files skipped", ""]
        out += [f"- {escape(p)}" for p in report.problems]
    return "\n".join(out) + "\n"
