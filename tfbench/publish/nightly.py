"""The nightly watch as a page of the published site (nightly.html): each machine's history
of tf-nightly builds (results/nightly/<machine>/), the steps and drifts it calls with their
commits, each sentinel's figures over the builds, and the time comparisons read."""

from __future__ import annotations

import html
from pathlib import Path

from tfbench import escape, grammar, keptfiles
from tfbench.nightly import sentinels, series, watch
from tfbench.nightly.series import Entry
from tfbench.pairs.verdict import compared_line
from tfbench.publish.html import STYLE
from tfbench.publish.svg import plot
from tfbench.units import KiB, MiB

PAGE = "nightly.html"
# a figure as plotted: its title and the scale of its axis
SCALES = {
    "footprint-heap": ("the heap after import (MiB)", 1 / MiB),
    "retained": ("retained per iteration (KiB)", 1 / KiB),
    "heap-peak": ("heap peak increase (MiB)", 1 / MiB),
}
TICKS = 8  # build labels on an axis, at most


def histories(results_dir: Path) -> tuple[dict[str, list[Entry]], list[str]]:
    """Each machine's builds read, oldest first; the files that could not be read, why."""
    found: dict[str, list[Entry]] = {}
    problems: list[str] = []
    root = results_dir / keptfiles.nightly_build.FOLDER
    for where in sorted(root.iterdir()) if root.is_dir() else []:
        if not (where.is_dir() and grammar.MACHINE.fullmatch(where.name)):
            continue
        found[where.name] = series.load(results_dir, where.name, problems)
    return {m: es for m, es in found.items() if es}, problems


def _call(c: watch.Call) -> str:
    a, b = c.shown()
    url = c.compare_url
    link = f' <a href="{html.escape(url)}">commits</a>' if url else " (a GIT_VERSION is missing)"
    return (
        f"<li><strong>{c.kind}</strong>: {html.escape(c.sentinel)} "
        f"{html.escape(c.metric)} {html.escape(a)} &rarr; {html.escape(b)}, "
        f"{html.escape(c.before.version)} &rarr; {html.escape(c.after.version)}"
        + (f" ({c.state})" if c.state else "")
        + f"{link}<br>readings: {html.escape(c.readings_text())}</li>"
    )


def _day(version: str) -> str:
    """A build's day, as an axis labels it: 2.22.0.dev20260215 -> 2026-02-15."""
    day = version.rsplit("dev", 1)[-1]
    return f"{day[:4]}-{day[4:6]}-{day[6:]}"


def _plots(entries: list[Entry]) -> list[str]:
    labels = [_day(e.version) for e in entries]
    out = []
    for sentinel, metrics in sentinels.FIGURES.items():
        for metric in metrics:
            title, scale = SCALES[metric]
            values = [e.median(sentinel, metric) for e in entries]
            points = {sentinel: [None if v is None else v * scale for v in values]}
            svg = plot(title, labels, points, every=-(-len(labels) // TICKS))
            caption = f"{html.escape(sentinel)}: {html.escape(title)}"
            out.append(f"<figure>{svg}<figcaption>{caption}</figcaption></figure>")
    return out


def _machine(name: str, entries: list[Entry]) -> list[str]:
    first, last = entries[0].version, entries[-1].version
    out = [
        f"<h2>Machine {html.escape(name)}</h2>",
        f"<p>{len(entries)} builds read, {html.escape(first)} to {html.escape(last)}.</p>",
    ]
    calls = watch.calls(entries)
    out.append("<h3>Called</h3>")
    out += ["<ul>", *map(_call, calls), "</ul>"] if calls else ["<p>No step and no drift.</p>"]
    broken = [e for e in entries if e.broken]
    if broken:
        items = "".join(
            f"<li>{html.escape(e.version)}: {html.escape(e.broken or '')}</li>" for e in broken
        )
        out.append(f"<h3>Builds that could not be read</h3><ul>{items}</ul>")
    out += ["<h3>Sentinels, build by build</h3>", *_plots(entries)]
    times = [t for e in entries for t in e.times]
    if times:
        items = "".join(f"<li>{html.escape(compared_line(t))}</li>" for t in times)
        out.append(
            f"<h3>Time of {html.escape(sentinels.TIMED)}, each build against the one "
            f"before, in one run</h3><ul>{items}</ul>"
        )
    return out


def render(results_dir: Path, graphs: bool = False) -> str | None:
    """The page, or None where no machine has a nightly history; `graphs`: the site has
    asv's graphs of the nightlies (tfbench.publish.nightly_graphs) to link."""
    found, problems = histories(results_dir)
    if not found and not problems:
        return None
    command = escape.command(["tfbench", "watch"])
    out = [
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>tfbench nightly watch</title>",
        f"<style>{STYLE}</style></head><body>",
        '<p><a href="report.html">&larr; release report</a></p><h1>tfbench nightly watch</h1>',
        f"<p>Every tf-nightly build read on the sentinels (<code>{html.escape(command)}</code>): "
        "the heap's figures compare across machines and days; time only within one run.</p>",
    ]
    if graphs:
        out.append(
            '<p>The same figures in asv: <a href="nightly/index.html">graphs</a>, '
            '<a href="nightly/index.html#regressions">regressions</a>.</p>'
        )
    for name, entries in found.items():
        out += _machine(name, entries)
    if problems:
        out.append("<h2>Files skipped</h2>")
        out += [f"<p>{html.escape(escape.local(p, results_dir))}</p>" for p in problems]
    out.append("</body></html>")
    return "\n".join(out)
