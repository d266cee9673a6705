"""A release-by-release line plot as inline SVG (report.html, nightly.html): numbers drawn
by this code, every label escaped; no scripts."""

from __future__ import annotations

import html
import math

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
