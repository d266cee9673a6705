"""The release report as a page of the published site (report.html): tables, inline SVG
plots, no scripts."""

from __future__ import annotations

import html

from tfbench.history.releases import label as release_label
from tfbench.publish import blocks, sections
from tfbench.publish.report import (
    MachineReport,
    Report,
    read_on_line,
)

STYLE = """
body { font-family: sans-serif; margin: 1.5em; }
table { border-collapse: collapse; font-size: 12px; margin: 0.5em 0 1.5em; }
td, th { border: 1px solid #ccc; padding: 2px 6px; vertical-align: top; }
td.leak { background: #fde0dc; } td.flat { background: #e8f5e9; }
figure { display: inline-block; margin: 0 1em 1em 0; } figcaption { font-size: 12px; }
.plot text { font-size: 10px; } .legend { font-size: 12px; max-width: 1200px; }
.summary { background: #f4f6fb; border: 1px solid #ccd; padding: 0.2em 1em; max-width: 1100px; }
details { margin: 0.3em 0; } summary { cursor: pointer; }
"""


def _screen(m: MachineReport) -> list[str]:
    return blocks.html(sections.screen(m))


def _newest(m: MachineReport) -> list[str]:
    return blocks.html(sections.newest(m))


def _pythons(m: MachineReport) -> list[str]:
    return blocks.html(sections.pythons(m))


def _filed(m: MachineReport) -> list[str]:
    return blocks.html(sections.filed(m))


def _why(m: MachineReport) -> list[str]:
    return blocks.html(sections.why(m))


def _claims(m: MachineReport) -> list[str]:
    return blocks.html(sections.claims(m))


def _machine(m: MachineReport) -> list[str]:
    releases = html.escape(", ".join(map(release_label, m.releases)) or "none")
    out = [f'<h2 class="machine">Machine {html.escape(m.name)}</h2><p>Releases: {releases}</p>']
    out.append(f"<p>{html.escape(read_on_line(m))}</p>")
    if m.beside:  # its newest pair as this CPU read it, in brief; the rest is the history's
        return [*out, *blocks.html(sections.beside(m))]
    out += (
        _screen(m)
        + blocks.html(sections.summary(m))
        + _newest(m)
        + _claims(m)
        + _why(m)
        + _filed(m)
        + _pythons(m)
    )
    out += blocks.html(
        sections.articles(m) + sections.reported(m) + sections.pairs(m) + sections.families(m)
    )
    return out


REPORTED_PAGE = "reported.html"


def _head(title: str, report: Report) -> list[str]:
    return [
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{title}</title>",
        f"<style>{STYLE}</style></head><body>",
        '<p><a href="index.html">&larr; asv graphs</a> | <a href="report.html">release report</a>'
        + (' | <a href="nightly.html">nightly watch</a>' if report.nightly else "")
        + (f' | <a href="{REPORTED_PAGE}">reported leaks</a>' if report.reported else "")
        + f"</p><h1>{title}</h1>",
    ]


def render_reported(report: Report) -> str:
    """The site's page of TensorFlow's reported leaks: each machine's answers."""
    out = _head("TensorFlow's reported leaks, answered by tfbench", report)
    for machine in report.machines:
        found = sections.reported(machine)
        if found:
            out.append(f'<h2 class="machine">Machine {html.escape(machine.name)}</h2>')
            out += blocks.html(found)
    out.append("</body></html>")
    return "\n".join(out)


def render(report: Report) -> str:
    out = _head("tfbench release report", report)
    for machine in report.machines:
        out += _machine(machine)
    if report.problems:
        out.append('<h2 id="skipped">Results files skipped</h2>')
        out += [f'<p class="problem">{html.escape(p)}</p>' for p in report.problems]
    out.append("</body></html>")
    return "\n".join(out)
