"""The release report as Markdown (report.md, `tfbench report`).

Names, param values, reasons and file paths come from results, possibly other machines':
every such text goes through `escape`, so that a renderer that passes HTML through shows it as
text. Claims are this project's own Markdown.
"""

from __future__ import annotations

from tfbench.escape import markdown as escape
from tfbench.history.releases import label
from tfbench.publish import blocks, sections
from tfbench.publish.report import (
    MachineReport,
    Report,
    read_on_line,
)


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
    for section in (
        sections.articles(m),
        sections.reported(m),
        sections.pairs(m),
        sections.families(m),
    ):
        out += ["", *blocks.markdown(section)] if section else []
    return out


def render(report: Report) -> str:
    out = ["# tfbench release report"]
    for machine in report.machines:
        out += ["", *_machine(machine)]
    if report.problems:
        out += ["", "## Results files skipped", ""]
        out += [f"- {escape(p)}" for p in report.problems]
    return "\n".join(out) + "\n"
