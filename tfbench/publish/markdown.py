"""The release report as Markdown (report.md, `tfbench report`).

Names, param values, reasons and file paths come from results, possibly other machines':
every such text goes through `escape`, so that a renderer that passes HTML through shows it as
text. Claims are this project's own Markdown.
"""

from __future__ import annotations

import html
import re
import shlex

from tfbench.history.releases import label
from tfbench.publish.changes import Changes
from tfbench.publish.findings import ARTICLES_NOTE, FAMILY, describe
from tfbench.publish.reasons import span
from tfbench.publish.report import (
    CHANGES_NOTE,
    EXPLAIN,
    NO_VALUE,
    MachineReport,
    Report,
    summary_lines,
    verdict_parts,
)

_SPECIAL = re.compile(r"([\\`*\[\]|])")


def escape(text: str) -> str:
    """Untrusted text as Markdown text: HTML's metacharacters as entities, Markdown's escaped."""
    return _SPECIAL.sub(r"\\\1", html.escape(text, quote=False))


def _changes(changes: Changes, source: bool = True) -> list[str]:
    out = [f"From {changes.source}."] if source else []
    out += [f"Common to most points: {escape(shift.text())}." for shift in changes.shifts]
    if not changes.items:
        other = "other " * bool(changes.shifts)
        return [*out, f"No {other}change beyond the floors."]
    out += ["", "| point | direction | what changed | re-measure |", "|---|---|---|---|"]
    for point in changes.points:
        what = "; ".join(
            f"[{escape(i.row.metric)}]({i.url}): {escape(i.row.evidence)}" for i in point.items
        )
        alike = f" (and alike at {len(point.alike)} more: {'; '.join(point.alike)})" * bool(
            point.alike
        )
        name = escape(point.name + alike)
        out.append(f"| {name} | {point.direction} | {what} | `{point.command}` |")
    return out


def _articles(m: MachineReport) -> list[str]:
    if not m.articles:
        return []
    out = ["", "### Articles: their examples as written", "", ARTICLES_NOTE]
    for section in m.articles:
        out += ["", f"#### {section.article.number}: {section.article.title}", ""]
        for ex in section.examples:
            found = "; ".join(
                f"on {escape(span(tags, m.releases))}: {escape(text)}"
                for text, tags in ex.findings
            )
            why = m.why.get(f"{FAMILY}('{ex.example.variant}')")
            why = f" Why on {escape(label(m.releases[-1]))}: {escape(why)}." if why else ""
            out.append(
                f"- **{ex.example.variant}** ({escape(describe(ex.example))}). The article: "
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
    if not s.remeasured:
        command = shlex.join(["tfbench", "gate", *pair, "--machine", m.name])
        out += ["", f"Not re-measured on this machine yet: `{command}`"]
    return out


def _why(m: MachineReport) -> list[str]:
    if not m.why:
        return []
    newest = escape(label(m.releases[-1]))
    out = ["", f"### Why they leak on {newest} (`tfbench explain`: its own traced run)", ""]
    if not any(m.why.values()):
        command = shlex.join(["tfbench", "explain", "--leaking", "--machine", m.name])
        return [
            *out,
            f"{len(m.why)} point(s) leak; not explained on this machine yet: `{command}`",
        ]
    return out + [
        f"- {escape(name)}: {escape(why or 'not explained')}" for name, why in m.why.items()
    ]


def _claims(m: MachineReport) -> list[str]:
    out = ["", "### Claims", ""]
    newest = escape(label(m.releases[-1])) if m.releases else None
    for v in m.verdicts:
        word, parts = verdict_parts(v)
        head = f"**{word}** on {newest}" if newest else "**no data**"
        out.append(
            f"- [{v.claim.article}] {v.claim.text}: " + "; ".join([head, *map(escape, parts)])
        )
    return out


def _families(m: MachineReport) -> list[str]:
    releases = [escape(label(r)) for r in m.releases]
    out = ["", "### Families, point by point", "", EXPLAIN]
    for family in m.families:
        out += ["", f"#### {escape(family.name)}", ""]
        if family.empty:
            out += [f"{NO_VALUE}: {escape('; '.join(family.empty))}", ""]
        if not family.rows:
            continue
        out.append("| " + " | ".join(["point", *releases]) + " |")
        out.append("|" + "---|" * (len(m.releases) + 1))
        out += [
            "| " + " | ".join([escape(row.label), *(c.text() for c in row.cells)]) + " |"
            for row in family.rows
        ]
    return out


def _machine(m: MachineReport) -> list[str]:
    releases = [escape(label(r)) for r in m.releases]
    out = [f"## Machine {escape(m.name)}", "", f"Releases: {', '.join(releases) or 'none'}"]
    out += ["", "### Summary", "", *(f"- {escape(line)}" for line in summary_lines(m.summary))]
    out += _newest(m)
    out += _claims(m)
    out += _why(m)
    out += _articles(m)
    out += ["", "### What changed between adjacent releases", "", CHANGES_NOTE]
    for changes in reversed(m.changes):
        pair = " -> ".join(escape(label(t)) for t in changes.pair)
        if m.summary.newest and changes.pair == m.summary.newest.pair:
            out += ["", f"#### {pair}: the newest release, above"]
            continue
        out += ["", f"#### {pair}", "", *_changes(changes, source=False)]
    return out + _families(m)


def render(report: Report) -> str:
    out = ["# tfbench release report"]
    for machine in report.machines:
        out += ["", *_machine(machine)]
    if report.problems:
        out += ["", "## Results files skipped", ""]
        out += [f"- {escape(p)}" for p in report.problems]
    return "\n".join(out) + "\n"
