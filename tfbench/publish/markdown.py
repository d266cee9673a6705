"""The release report as Markdown (report.md, `tfbench report`).

Names, param values, reasons and file paths come from results, possibly other machines':
every such text goes through `escape`, so that a renderer that passes HTML through shows it as
text. Claims are this project's own Markdown.
"""

from __future__ import annotations

import html
import re
import shlex

from tfbench.history.releases import label, newest_pair
from tfbench.publish.changes import Changes
from tfbench.publish.findings import ARTICLES_NOTE, LEAK_WORD, describe
from tfbench.publish.report import EXPLAIN, NO_VALUE, MachineReport, Report, verdict_parts
from tfbench.units import format_value

_SPECIAL = re.compile(r"([\\`*\[\]|])")


def escape(text: str) -> str:
    """Untrusted text as Markdown text: HTML's metacharacters as entities, Markdown's escaped."""
    return _SPECIAL.sub(r"\\\1", html.escape(text, quote=False))


def _changes(changes: Changes) -> list[str]:
    out = [f"From {changes.source}."]
    if not changes.items:
        return [*out, "", "No change beyond the floors."]
    out += [
        "",
        "| benchmark | direction | before | after | evidence | re-measure |",
        "|---|---|---|---|---|---|",
    ]
    for item in changes.items:
        r = item.row
        before, after = (format_value(v, r.unit) for v in (r.before, r.after))
        out.append(
            f"| [{escape(r.name)}]({item.url}) | {r.direction} | {before} | {after} | "
            f"{escape(r.evidence)} | `{item.command}` |"
        )
    return out


def _articles(m: MachineReport) -> list[str]:
    if not m.articles:
        return []
    out = ["", "### Articles: their examples as written", "", ARTICLES_NOTE]
    for section in m.articles:
        out += ["", f"#### {section.article.number}: {section.article.title}"]
        for ex in section.examples:
            out += ["", f"**{ex.example.variant}**: {describe(ex.example)}", ""]
            out += [f"- the article: {ex.example.says}"]
            out += [
                f"- finding on {', '.join(map(escape, tags))}: {escape(text)}"
                for text, tags in ex.findings
            ]
            heads = ["release", "as written", *(i.label for i, _ in ex.isolating)]
            out += ["", "| " + " | ".join(heads) + " |", "|---" * len(heads) + "|"]
            for k, lit in enumerate(ex.literal):
                verdicts = [LEAK_WORD[v[k]] for _, v in ex.isolating]
                out.append(
                    "| " + " | ".join([escape(lit.release), escape(lit.text()), *verdicts]) + " |"
                )
    return out


def _machine(m: MachineReport) -> list[str]:
    releases = [escape(label(r)) for r in m.releases]
    out = [
        f"## Machine {escape(m.name)}",
        "",
        f"Releases: {', '.join(releases) or 'none'}",
        "",
        "### Verdicts",
        "",
    ]
    for v in m.verdicts:
        word, parts = verdict_parts(v)
        newest = f"**{word}** on {releases[-1]}" if m.releases else "**no data**"
        out.append(
            f"- [{v.claim.article}] {v.claim.text}: " + "; ".join([newest, *map(escape, parts)])
        )
    out += ["", "### Newest release, re-measured (`tfbench gate`)", ""]
    if m.gate_run:
        out += _changes(m.gate_run)
    elif newest_pair(m.releases):
        command = shlex.join(["tfbench", "gate", *newest_pair(m.releases), "--machine", m.name])
        out.append(f"Not re-measured on this machine yet: `{command}`")
    else:
        out.append("Needs two releases.")
    out += ["", "### What changed between adjacent releases (the gate's rules)", ""]
    for changes in reversed(m.changes):
        out += [f"#### {' -> '.join(map(escape, changes.pair))}", "", *_changes(changes), ""]
    out += _articles(m)
    for family in m.families:
        out += ["", f"### {escape(family.name)}", ""]
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


def render(report: Report) -> str:
    out = ["# tfbench release report", "", EXPLAIN, ""]
    out += [f"- unreadable results file skipped: {escape(p)}" for p in report.problems]
    for machine in report.machines:
        out += _machine(machine)
    return "\n".join(out) + "\n"
