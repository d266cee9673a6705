"""The release report as a page of the published site: tables, inline SVG plots, no scripts."""

from __future__ import annotations

import html
import math

from tfbench import report

COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
          "#7f7f7f", "#bcbd22", "#17becf"]
STYLE = """
body { font-family: sans-serif; margin: 1.5em; }
table { border-collapse: collapse; font-size: 12px; margin: 0.5em 0 1.5em; }
td, th { border: 1px solid #ccc; padding: 2px 6px; vertical-align: top; }
td.leak { background: #fde0dc; } td.flat { background: #e8f5e9; }
figure { display: inline-block; margin: 0 1em 1em 0; } figcaption { font-size: 12px; }
.plot text { font-size: 10px; } .legend { font-size: 12px; max-width: 1200px; }
"""


def plot(title: str, releases: list[str], series: dict[str, list[float | None]],
         log: bool = False, width: int = 560, height: int = 260) -> str:
    """A line per series across releases; gaps where a release has no value."""
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
    parts = [f'<svg class="plot" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}">',
             f'<text x="{left}" y="12">{html.escape(title)}</text>',
             f'<line x1="{left}" y1="{height - bottom}" x2="{width - right}" y2="{height - bottom}" stroke="#444"/>',
             f'<line x1="{left}" y1="{top}" x2="{left}" y2="{height - bottom}" stroke="#444"/>']
    for i, tag in enumerate(releases):
        parts.append(f'<text x="{x(i):.1f}" y="{height - bottom + 14}" text-anchor="middle">{tag}</text>')
    for v in (min(values), max(values)):
        parts.append(f'<text x="{left - 4}" y="{y(v) + 3:.1f}" text-anchor="end">{v:.3g}</text>')
    for k, (label, vs) in enumerate(series.items()):
        color = COLORS[k % len(COLORS)]
        points = [(x(i), y(v)) for i, v in enumerate(vs) if v is not None and (not log or v > 0)]
        if len(points) > 1:
            path = " ".join(f"{px:.1f},{py:.1f}" for px, py in points)
            parts.append(f'<polyline fill="none" stroke="{color}" points="{path}"><title>'
                         f'{html.escape(label)}</title></polyline>')
        parts += [f'<circle cx="{px:.1f}" cy="{py:.1f}" r="2.5" fill="{color}"><title>'
                  f'{html.escape(label)}</title></circle>' for px, py in points]
    parts.append("</svg>")
    return "".join(parts)


def _family_section(family: report.Family, machine: report.MachineResults) -> str:
    combos, empty = report.rows(family, machine)
    out = [f"<h3>{family.name}</h3>"]
    if empty:
        out.append(f'<p class="empty">{html.escape(report.NO_VALUE)}: '
                   f"{html.escape('; '.join(report._label(family, c) for c in empty))}</p>")
    if not combos:
        return "\n".join(out)
    labels = {combo: report._label(family, combo) for combo in combos}
    for metric, title, scale, log in (("time", "time per iteration (ms, log scale)", 1e3, True),
                                      ("growth", "growth per iteration (KiB/iteration)", 1 / 1024, False),
                                      ("peak", "peak increase (MiB)", 1 / (1 << 20), False)):
        series = {}
        for combo in combos:
            vs = [machine.value(family.benchmark(metric), combo, tag) for tag in machine.releases]
            series[labels[combo]] = [None if v is None else v * scale for v in vs]
        out.append(f"<figure>{plot(title, machine.releases, series, log=log)}"
                   f"<figcaption>{family.name}: {title}</figcaption></figure>")
    out.append('<p class="legend">' + " ".join(
        f'<span style="color:{COLORS[k % len(COLORS)]}">&#9632;</span>&nbsp;{html.escape(labels[c])}'
        for k, c in enumerate(combos)) + "</p>")
    out.append('<table class="family"><tr><th>point</th>'
               + "".join(f"<th>{t}</th>" for t in machine.releases) + "</tr>")
    for combo in combos:
        cells = []
        for prev, tag in zip([None, *machine.releases], machine.releases):
            text = report.cell(family, machine, combo, tag, prev)
            css = "leak" if text.endswith("LEAK") else "flat" if text.endswith("flat") else ""
            cells.append(f'<td class="{css}">{html.escape(text)}</td>')
        out.append(f"<tr><th>{html.escape(labels[combo])}</th>{''.join(cells)}</tr>")
    out.append("</table>")
    return "\n".join(out)


def page(data: report.Data) -> str:
    fams = report.families(data.benchmarks)
    by_name = {f.name: f for f in fams}
    out = ["<!DOCTYPE html><html><head><meta charset='utf-8'><title>tfbench release report</title>",
           f"<style>{STYLE}</style></head><body>",
           '<p><a href="index.html">&larr; asv graphs</a></p><h1>tfbench release report</h1>',
           "<p>Each cell: time per iteration · peak increase · growth per iteration · leak "
           "verdict; (xN) is the ratio to the previous release.</p>"]
    out += [f'<p class="problem">Unreadable results file skipped: {html.escape(p)}</p>'
            for p in data.problems]
    for machine in data.machines.values():
        out.append(f'<h2 class="machine">Machine {html.escape(machine.machine)}</h2>'
                   f"<p>Releases: {', '.join(machine.releases) or 'none'}</p><h3>Verdicts</h3><ul>")
        out += [f"<li>{html.escape(report.verdict(c, by_name, machine)).replace('**', '')}</li>"
                for c in report.CLAIMS]
        out.append("</ul>")
        regressions = report.gate(data, machine)
        out.append(f"<h3>Newest-release gate ({' &rarr; '.join(machine.releases[-2:])}, "
                   f"factor {report.FACTOR})</h3>")
        if not regressions:
            out.append("<p>No benchmark got worse.</p>" if len(machine.releases) > 1
                       else "<p>Needs two releases.</p>")
        else:
            out.append('<table class="gate"><tr><th>benchmark</th><th>before</th><th>after</th>'
                       "<th>ratio</th><th>evidence</th><th>bisect</th></tr>")
            out += [f'<tr><td><a href="{html.escape(report.graph_url(r, machine.machine))}">'
                    f"{html.escape(r.name)}</a></td><td>{report.human(r.before, r.unit)}</td>"
                    f"<td>{report.human(r.after, r.unit)}</td><td>{r.ratio}</td><td>{r.evidence}</td>"
                    f"<td><code>{html.escape(report.bisect_command(r, machine))}</code></td></tr>"
                    for r in regressions]
            out.append("</table>")
        out += [_family_section(f, machine) for f in fams]
    out.append("</body></html>")
    return "\n".join(out)
