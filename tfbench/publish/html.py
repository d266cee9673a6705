"""The release report as a page of the published site (report.html): tables, inline SVG
plots, no scripts."""

from __future__ import annotations

import html
import math

from tfbench.history.releases import label as release_label
from tfbench.publish import blocks, sections
from tfbench.publish.findings import ARTICLES_NOTE, FAMILY, LEAK_WORD, example_text
from tfbench.publish.reasons import span
from tfbench.publish.report import (
    CHANGES_NOTE,
    EXPLAIN,
    NO_VALUE,
    FamilySection,
    MachineReport,
    Report,
    read_on_line,
    told_articles,
)

COLORS = [
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
]
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


def plot(
    title: str,
    releases: list[str],
    series: dict[str, list[float | None]],
    log: bool = False,
    width: int = 560,
    height: int = 260,
    every: int = 1,
) -> str:
    """A line per series across releases; gaps where a release has no value; every
    `every`-th release labelled."""
    values = [v for vs in series.values() for v in vs if v is not None and (not log or v > 0)]
    if not values or not releases:
        return f"<p>{html.escape(title)}: no values.</p>"
    scale = (lambda v: math.log10(v)) if log else (lambda v: v)
    low, high = scale(min(values)), scale(max(values))
    if not log:
        low = min(low, 0.0)
    high = high if high > low else low + 1
    left, right, top, bottom = 60, 10, 20, 40
    x = lambda i: left + (width - left - right) * (i / max(1, len(releases) - 1))  # noqa: E731
    y = lambda v: top + (height - top - bottom) * (1 - (scale(v) - low) / (high - low))  # noqa: E731
    parts = [
        f'<svg class="plot" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}">',
        f'<text x="{left}" y="12">{html.escape(title)}</text>',
        f'<line x1="{left}" y1="{height - bottom}" x2="{width - right}" '
        f'y2="{height - bottom}" stroke="#444"/>',
        f'<line x1="{left}" y1="{top}" x2="{left}" y2="{height - bottom}" stroke="#444"/>',
    ]
    for i, tag in list(enumerate(releases))[::every]:
        parts.append(
            f'<text x="{x(i):.1f}" y="{height - bottom + 14}" text-anchor="middle">'
            f"{html.escape(tag)}</text>"
        )
    for v in (min(values), max(values)):
        parts.append(f'<text x="{left - 4}" y="{y(v) + 3:.1f}" text-anchor="end">{v:.3g}</text>')
    for k, (label, vs) in enumerate(series.items()):
        color = COLORS[k % len(COLORS)]
        points = [(x(i), y(v)) for i, v in enumerate(vs) if v is not None and (not log or v > 0)]
        if len(points) > 1:
            path = " ".join(f"{px:.1f},{py:.1f}" for px, py in points)
            parts.append(
                f'<polyline fill="none" stroke="{color}" points="{path}"><title>'
                f"{html.escape(label)}</title></polyline>"
            )
        parts += [
            f'<circle cx="{px:.1f}" cy="{py:.1f}" r="2.5" fill="{color}"><title>'
            f"{html.escape(label)}</title></circle>"
            for px, py in points
        ]
    parts.append("</svg>")
    return "".join(parts)


def _family(family: FamilySection, releases: list[str]) -> str:
    out = [f"<h4>{html.escape(family.name)}</h4>"]
    if family.empty:
        out.append(
            f'<p class="empty">{html.escape(NO_VALUE)}: {html.escape("; ".join(family.empty))}</p>'
        )
    if not family.rows:
        return "\n".join(out)
    for p in family.plots:
        out.append(
            f"<figure>{plot(p.title, releases, p.series, log=p.log)}"
            f"<figcaption>{html.escape(family.name)}: {html.escape(p.title)}</figcaption></figure>"
        )
    out.append(
        '<p class="legend">'
        + " ".join(
            f'<span style="color:{COLORS[k % len(COLORS)]}">&#9632;</span>&nbsp;'
            f"{html.escape(row.label)}"
            for k, row in enumerate(family.rows)
        )
        + "</p>"
    )
    out.append(
        '<table class="family"><tr><th>point</th>'
        + "".join(f"<th>{html.escape(t)}</th>" for t in releases)
        + "</tr>"
    )
    for row in family.rows:
        cells = []
        for c in row.cells:
            css = "" if c.leak is None else "leak" if c.leak else "flat"
            cells.append(f'<td class="{css}">{html.escape(c.text())}</td>')
        out.append(f"<tr><th>{html.escape(row.label)}</th>{''.join(cells)}</tr>")
    out.append("</table>")
    return "\n".join(out)


def _articles(m: MachineReport) -> list[str]:
    if not m.articles:
        return []
    out = [
        '<h3 id="articles">Articles: their examples as written</h3>'
        f"<p>{html.escape(ARTICLES_NOTE)}</p>"
    ]
    shown, not_here = told_articles(m)
    if not_here:
        out.append(f"<p>{html.escape(not_here)}</p>")
    for section in shown:
        a = section.article
        out.append(f"<h4>{html.escape(a.number)}: {html.escape(a.title)}</h4><ul>")
        for ex in section.examples:
            found = "; ".join(
                f"on {html.escape(span(tags, m.releases))}: {html.escape(text)}"
                for text, tags in ex.findings
            )
            why = m.why.get(f"{FAMILY}('{ex.example.variant}')")
            newest = html.escape(release_label(m.releases[-1])) if m.releases else ""
            why = f" Why on {newest}: {html.escape(why)}." if why else ""
            out.append(
                f"<li><strong>{html.escape(ex.example.variant)}</strong> "
                f"({html.escape(example_text(ex.example))}). The article: "
                f"{html.escape(ex.example.says)}. Found {found}.{why}</li>"
            )
        heads = "".join(f"<th>{html.escape(ex.example.variant)}</th>" for ex in section.examples)
        out.append(f"</ul><table><tr><th>release</th>{heads}</tr>")
        for k, tag in enumerate(m.releases):
            cells = "".join(
                f"<td>{html.escape(ex.literal[k].text())}</td>" for ex in section.examples
            )
            out.append(f"<tr><th>{html.escape(release_label(tag))}</th>{cells}</tr>")
        out.append("</table>")
        for ex in section.examples:
            if not ex.isolating:
                continue
            heads = "".join(f"<th>{html.escape(i.label)}</th>" for i, _ in ex.isolating)
            out.append(
                f"<details><summary>{html.escape(ex.example.variant)}: the catalog variants "
                f"that isolate the cause</summary><table><tr><th>release</th>{heads}</tr>"
            )
            for k, tag in enumerate(m.releases):
                cells = "".join(f"<td>{LEAK_WORD[v[k]]}</td>" for _, v in ex.isolating)
                out.append(f"<tr><th>{html.escape(release_label(tag))}</th>{cells}</tr>")
            out.append("</table></details>")
    return out


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
    out += _articles(m)
    out.append(
        f'<h3 id="changes">What changed between adjacent releases</h3><p>{CHANGES_NOTE}</p>'
    )
    for changes in reversed(m.changes):
        pair = " &rarr; ".join(html.escape(release_label(t)) for t in changes.pair)
        if m.summary.newest and changes.pair == m.summary.newest.pair:
            out.append(f'<p>{pair}: the newest release, <a href="#newest">above</a>.</p>')
            continue
        count = f"{len(changes.points)} point(s)" + ", a common shift" * bool(changes.shifts)
        out.append(f"<details><summary>{pair}: {count}</summary>")
        out += [*blocks.html(sections.changes(changes, source=False)), "</details>"]
    out.append(f'<h3 id="families">Families, point by point</h3><p>{html.escape(EXPLAIN)}</p>')
    out += [_family(f, m.releases) for f in m.families]
    return out


def render(report: Report) -> str:
    out = [
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>tfbench release report</title>",
        f"<style>{STYLE}</style></head><body>",
        '<p><a href="index.html">&larr; asv graphs</a>'
        + (' | <a href="nightly.html">nightly watch</a>' if report.nightly else "")
        + "</p><h1>tfbench release report</h1>",
    ]
    for machine in report.machines:
        out += _machine(machine)
    if report.problems:
        out.append('<h2 id="skipped">Results files skipped</h2>')
        out += [f'<p class="problem">{html.escape(p)}</p>' for p in report.problems]
    out.append("</body></html>")
    return "\n".join(out)
