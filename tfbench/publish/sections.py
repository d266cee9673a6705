"""The report's sections as blocks (tfbench.publish.blocks), built once for both of its
renderers: each sentence written here, escaped by the emitter of each format."""

from __future__ import annotations

from tfbench.escape import command as shell
from tfbench.history.releases import label
from tfbench.publish.blocks import Block, Bullets, Cell, Code, Heading, Link, Paragraph, Table
from tfbench.publish.changes import Changes
from tfbench.publish.report import MachineReport, by_cpu_head, shifts_line

CHANGE_HEAD = ("point", "direction", "what changed", "re-measure")


def change_rows(changes: Changes) -> tuple[tuple[Cell, ...], ...]:
    """A row a finding (its point, where alike points are told with it), its direction,
    each figure that changed (linked to its graph) and the command that re-measures it."""
    rows = []
    for point in changes.points:
        alike = f" (and alike at {len(point.alike)} more: {'; '.join(point.alike)})" * bool(
            point.alike
        )
        what = tuple((Link(i.row.metric, i.url), ": ", i.row.told) for i in point.items)
        rows.append(
            (((point.name + alike,),), ((point.direction,),), what, ((Code(point.command),),))
        )
    return tuple(rows)


def changes(found: Changes, source: bool = True) -> list[Block]:
    """A pair's changes: where its rows come from (`source`), its common shifts, its table."""
    out: list[Block] = [Paragraph((f"From {found.source}.",))] if source else []
    if found.shifts:
        out.append(Paragraph((shifts_line(found.shifts),)))
    if not found.items:
        other = "other " * bool(found.shifts)
        return [*out, Paragraph((f"No {other}change beyond the floors.",))]
    return [*out, Table(CHANGE_HEAD, change_rows(found), css="gate")]


def newest(m: MachineReport) -> list[Block]:
    """The newest pair: its changes, its time on each CPU that read it, and how to read it
    on this machine where it has not been."""
    s = m.summary
    if s.newest is None:
        return []
    pair = " → ".join(label(t) for t in s.newest.pair)
    out = [Heading((f"Newest release: {pair}",), anchor="newest"), *changes(s.newest)]
    if m.by_cpu:
        out.append(Paragraph((by_cpu_head(m.by_cpu),)))
        out.append(Bullets(tuple((line,) for line in m.by_cpu.lines())))
    if not s.remeasured:
        command = shell(["tfbench", "gate", *s.newest.pair, "--machine", m.name])
        out.append(Paragraph(("Not re-measured on this machine yet: ", Code(command))))
    return out
