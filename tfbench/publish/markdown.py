"""The release report as Markdown (report.md, `tfbench report`)."""

from __future__ import annotations

from tfbench.publish.gate import FACTOR
from tfbench.publish.report import EXPLAIN, NO_VALUE, MachineReport, Report, verdict_parts
from tfbench.units import format_value


def _machine(m: MachineReport) -> list[str]:
    out = [
        f"## Machine {m.name}",
        "",
        f"Releases: {', '.join(m.releases) or 'none'}",
        "",
        "### Verdicts",
        "",
    ]
    for v in m.verdicts:
        word, parts = verdict_parts(v)
        newest = f"**{word}** on {m.releases[-1]}" if m.releases else "**no data**"
        out.append(f"- [{v.claim.article}] {v.claim.text}: " + "; ".join([newest, *parts]))
    out += ["", f"### Newest-release gate ({' -> '.join(m.releases[-2:])}, factor {FACTOR})", ""]
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
                f"| [{r.name}]({item.url}) | {format_value(r.before, r.unit)} | "
                f"{format_value(r.after, r.unit)} | {r.ratio_text} | {r.evidence} | "
                f"`{item.bisect}` |"
            )
    for family in m.families:
        out += ["", f"### {family.name}", ""]
        if family.empty:
            out += [f"{NO_VALUE}: {'; '.join(family.empty)}", ""]
        if not family.rows:
            continue
        out.append("| " + " | ".join(["point", *m.releases]) + " |")
        out.append("|" + "---|" * (len(m.releases) + 1))
        out += [
            "| " + " | ".join([row.label, *(c.text() for c in row.cells)]) + " |"
            for row in family.rows
        ]
    return out


def render(report: Report) -> str:
    out = ["# tfbench release report", "", EXPLAIN, ""]
    out += [f"- unreadable results file skipped: {p}" for p in report.problems]
    for machine in report.machines:
        out += _machine(machine)
    return "\n".join(out) + "\n"
