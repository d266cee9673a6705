"""The release report as Markdown (report.md, `tfbench report`).

Names, param values, reasons and file paths come from results, possibly other machines':
every such text goes through `escape`, so that a renderer that passes HTML through shows it as
text. Claims are this project's own Markdown.
"""

from __future__ import annotations

from tfbench.escape import markdown as escape
from tfbench.history.releases import label
from tfbench.publish import blocks, sections
from tfbench.publish.findings import ARTICLES_NOTE, FAMILY, example_text
from tfbench.publish.reasons import span
from tfbench.publish.report import (
    CHANGES_NOTE,
    EXPLAIN,
    NO_VALUE,
    MachineReport,
    Report,
    read_on_line,
    told_articles,
)


def _pairs(m: MachineReport) -> list[str]:
    """Every adjacent pair but the newest (told above), newest first, in one table: a
    pair's common shifts are one row, its findings one row each."""
    out = ["", "### What changed between adjacent releases", "", CHANGES_NOTE, ""]
    out += blocks.markdown([blocks.Table(("releases", *sections.CHANGE_HEAD), ())])
    for changes in reversed(m.changes):
        if m.summary.newest and changes.pair == m.summary.newest.pair:
            continue
        pair = " -> ".join(escape(label(t)) for t in changes.pair) + " | "
        if changes.shifts:
            shifts = "; ".join(s.text() for s in changes.shifts)
            out.append(f"| {pair}most points | common, one cause each | {escape(shifts)} | |")
        out += [f"| {pair}{blocks.md_row(row)[2:]}" for row in sections.change_rows(changes)]
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
    found = blocks.markdown(sections.newest(m))
    return ["", *found] if found else []


def _why(m: MachineReport) -> list[str]:
    return ["", *blocks.markdown(sections.why(m))] if m.why else []


def _filed(m: MachineReport) -> list[str]:
    return ["", *blocks.markdown(sections.filed(m))] if m.filed else []


def _pythons(m: MachineReport) -> list[str]:
    return ["", *blocks.markdown(sections.pythons(m))] if m.pythons else []


def _claims(m: MachineReport) -> list[str]:
    return ["", *blocks.markdown(sections.claims(m))]


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
    return ["", *blocks.markdown(sections.screen(m))] if m.screen else []


def _machine(m: MachineReport) -> list[str]:
    releases = [escape(label(r)) for r in m.releases]
    out = [f"## Machine {escape(m.name)}", "", f"Releases: {', '.join(releases) or 'none'}"]
    out += ["", escape(read_on_line(m))]
    if m.beside:  # its newest pair as this CPU read it, in brief; the rest is the history's
        return [*out, "", *blocks.markdown(sections.beside(m))]
    out += _screen(m)
    out += ["", *blocks.markdown(sections.summary(m))]
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
