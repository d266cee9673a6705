"""The release report as Markdown (report.md, `tfbench report`).

Names, param values, reasons and file paths come from results, possibly other machines':
every such text goes through `_t`, so that a renderer that passes HTML through shows it as
text. Claims are this project's own Markdown.
"""

from __future__ import annotations

import html
import re

from tfbench.publish.gate import FACTOR
from tfbench.publish.report import EXPLAIN, NO_VALUE, MachineReport, Report, verdict_parts
from tfbench.units import format_value

_SPECIAL = re.compile(r"([\\`*\[\]|])")


def _t(text: str) -> str:
    """Untrusted text as Markdown text: HTML's metacharacters as entities, Markdown's escaped."""
    return _SPECIAL.sub(r"\\\1", html.escape(text, quote=False))


def _machine(m: MachineReport) -> list[str]:
    releases = [_t(r) for r in m.releases]
    out = [
        f"## Machine {_t(m.name)}",
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
            f"- [{v.claim.article}] {v.claim.text}: " + "; ".join([newest, *map(_t, parts)])
        )
    out += ["", f"### Newest-release gate ({' -> '.join(releases[-2:])}, factor {FACTOR})", ""]
    if not m.gate:
        out.append("No benchmark got worse." if m.gate_pair else "Needs two releases.")
    else:
        out += [
            "| benchmark | before | after | ratio | evidence | bisect |",
            "|---|---|---|---|---|---|",
        ]
        for item in m.gate:
            r = item.row
            out.append(
                f"| [{_t(r.name)}]({item.url}) | {format_value(r.before, r.unit)} | "
                f"{format_value(r.after, r.unit)} | {r.ratio_text} | {_t(r.evidence)} | "
                f"`{item.bisect}` |"
            )
    for family in m.families:
        out += ["", f"### {_t(family.name)}", ""]
        if family.empty:
            out += [f"{NO_VALUE}: {_t('; '.join(family.empty))}", ""]
        if not family.rows:
            continue
        out.append("| " + " | ".join(["point", *releases]) + " |")
        out.append("|" + "---|" * (len(m.releases) + 1))
        out += [
            "| " + " | ".join([_t(row.label), *(c.text() for c in row.cells)]) + " |"
            for row in family.rows
        ]
    return out


def render(report: Report) -> str:
    out = ["# tfbench release report", "", EXPLAIN, ""]
    out += [f"- unreadable results file skipped: {_t(p)}" for p in report.problems]
    for machine in report.machines:
        out += _machine(machine)
    return "\n".join(out) + "\n"
