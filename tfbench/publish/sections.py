"""The report's sections as blocks (tfbench.publish.blocks), built once for both of its
renderers: each sentence written here, escaped by the emitter of each format."""

from __future__ import annotations

from tfbench import answers
from tfbench.answers import Answer
from tfbench.escape import command as shell
from tfbench.history.releases import label
from tfbench.publish.blocks import (
    Block,
    Bullets,
    Cell,
    Code,
    Details,
    Heading,
    Link,
    Own,
    Paragraph,
    Plots,
    Section,
    Strong,
    Table,
)
from tfbench.publish.changes import Changes
from tfbench.publish.filed import WHERE_MEASURED, Filed
from tfbench.publish.findings import ARTICLES_NOTE, FAMILY, LEAK_WORD, example_text
from tfbench.publish.reasons import span
from tfbench.publish.report import (
    BESIDE,
    CHANGES_NOTE,
    EXPLAIN,
    NO_VALUE,
    MachineReport,
    brief,
    by_cpu_head,
    shifts_line,
    summary_lines,
    told,
    told_articles,
    verdict_parts,
)
from tfbench.publish.reported import REPORTED_NOTE, ReportAnswers, StepAnswers

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


def why(m: MachineReport) -> list[Block]:
    """Why the newest release's leaking points leak, as `tfbench explain` read them, or the
    command that reads them here."""
    if not m.why:
        return []
    out: list[Block] = [
        Heading((f"Why they leak on {label(m.releases[-1])}",), anchor="why"),
        Paragraph(("As ", Code("tfbench explain"), " read it, in a traced run of its own.")),
    ]
    if not any(m.why.values()):
        command = shell(["tfbench", "explain", "--leaking", "--machine", m.name])
        said = f"{len(m.why)} point(s) leak; not explained on this machine yet: "
        return [*out, Paragraph((said, Code(command)))]
    return [
        *out,
        Bullets(tuple((f"{name}: {w or 'not explained'}",) for name, w in m.why.items())),
    ]


def filed(m: MachineReport) -> list[Block]:
    """The nightly bisections to file with TensorFlow, each with its write-up's files."""
    if not m.filed:
        return []
    items = []
    for f in m.filed:
        files: tuple = (WHERE_MEASURED,)
        if f.rendered:
            names = ("issue.md", "repro.py", "plot.png")
            files = sum(((Link(n, f.link(n)), ", ") for n in names), ())[:-1]
        items.append((f"{f.target}, {f.metric}: {f.line} (", *files, ")"))
    return [
        Heading(("To file with TensorFlow",), anchor="upstream"),
        Paragraph(
            (
                "Nightly bisections (",
                Code("tfbench upstream"),
                "), each with the issue to file and a standalone reproducer.",
            )
        ),
        Bullets(tuple(items)),
    ]


def screen(m: MachineReport) -> list[Block]:
    """The first screen: the newest release in the patterns' words (tfbench.publish.headline)."""
    if m.screen is None:
        return []
    parts: list[Heading | Paragraph | Bullets | Table] = [
        Heading((m.screen.title,), anchor="screen")
    ]
    for heading, lines in m.screen.parts:
        parts += [Heading((heading,), level=4), Bullets(tuple((line,) for line in lines))]
    return [Section("screen", tuple(parts))]


def pythons(m: MachineReport) -> list[Block]:
    """The newest release on the other Pythons of the history, point by point."""
    s = m.pythons
    if s is None:
        return []
    head = f"Pythons at {label(s.release)}: {', '.join(s.pythons)} beside 3.11"
    out: list[Block] = [Heading((head,), anchor="pythons")]
    if not s.findings:
        said = (
            "No point's leak verdict, kept bytes, garbage or heap peak differs beyond the floors."
        )
        return [*out, Paragraph((said,))]
    items = []
    for f in s.findings:
        command = (" (", Code(f.command), ")") if f.command else ()
        items.append((f"{f.point}, Python {f.python}: {f.text}", *command))
    return [*out, Bullets(tuple(items))]


def claims(m: MachineReport) -> list[Block]:
    """Each claim's answer on the newest release, and why the rest are not told here."""
    shown, not_here = told(m)
    items = []
    for v in shown:
        word, parts = verdict_parts(v)
        newest = (
            (Strong(word), f" on {label(m.releases[-1])}") if m.releases else (Strong("no data"),)
        )
        said = sum((("; ", p) for p in parts), ())
        items.append((Own(f"[{v.claim.article}] {v.claim.text}"), ": ", *newest, *said))
    if not_here:
        items.append((not_here,))
    return [Heading(("Claims",), anchor="claims"), Bullets(tuple(items))]


def summary(m: MachineReport) -> list[Block]:
    """The summary: what the newest release changed, in the gate's words."""
    lines = tuple((line,) for line in summary_lines(m.summary))
    return [Section("summary", (Heading(("Summary",), anchor="summary"), Bullets(lines)))]


def beside(m: MachineReport) -> list[Block]:
    """A machine whose releases another's history holds: its newest pair as its CPU read
    it, in brief, and where the rest is told."""
    said = f"{BESIDE} {m.beside}."
    return [Bullets(tuple((line,) for line in brief(m))), Paragraph((said,))]


def articles(m: MachineReport) -> list[Block]:
    """Each article's examples as written: what each found over the releases, and a table
    of them (and, folded, the catalog variants that isolate the cause)."""
    if not m.articles:
        return []
    releases = tuple(label(t) for t in m.releases)
    out: list[Block] = [
        Heading(("Articles: their examples as written",), anchor="articles"),
        Paragraph((ARTICLES_NOTE,)),
    ]
    shown, not_here = told_articles(m)
    if not_here:
        out.append(Paragraph((not_here,)))
    for section in shown:
        article = section.article  # its title as the article gives it
        out.append(Heading((Own(f"{article.number}: {article.title}"),), level=4))
        items = []
        for ex in section.examples:
            found = "; ".join(f"on {span(tags, m.releases)}: {text}" for text, tags in ex.findings)
            why = m.why.get(f"{FAMILY}('{ex.example.variant}')")
            why = f" Why on {releases[-1]}: {why}." if why else ""
            said = f" ({example_text(ex.example)}). The article: "
            items.append(
                (
                    Strong(ex.example.variant),
                    said,
                    Own(f"{ex.example.says}."),
                    f" Found {found}.{why}",
                )
            )
        out.append(Bullets(tuple(items)))
        rows = tuple(
            _row(ex.example.variant, [lit.text() for lit in ex.literal]) for ex in section.examples
        )
        out.append(Table(("as written", *releases), rows))
        for ex in section.examples:
            if ex.isolating:
                isolating = tuple(
                    _row(i.label, [LEAK_WORD[v] for v in vs]) for i, vs in ex.isolating
                )
                summary = f"{ex.example.variant}: the catalog variants that isolate the cause"
                out.append(Details((summary,), (Table(("variant", *releases), isolating),)))
    return out


def reported(m: MachineReport) -> list[Block]:
    """TensorFlow's reported leaks: a row a report's step, with the reporter's claim, the
    newest answer and the releases where the answer changed; folded, every release's."""
    if not any(r.measured for r in m.reported):
        return []
    releases = tuple(label(t) for t in m.releases)
    newest = releases[-1]
    head = ("report", "reported on", "the reporter says", f"answer on {newest}", "changed")
    rows, marks, every, unread = [], [], [], []
    for r in m.reported:
        for step in r.steps:
            found = step.newest()
            if found is None:
                unread.append(f"#{r.report.number} {step.variant}")
                continue
            bisected = [f for f in m.filed if f.target == f"reported.{step.variant}"]
            rows.append(_reported_row(r, step, found, m.releases, bisected))
            leaks = found[1].text == answers.REPRODUCES
            marks.append(("", "", "", "leak" if leaks else "", ""))
            texts = [a.text if a else "not read" for a in step.answers]
            every.append(_row(f"#{r.report.number} {step.variant}", texts))
    out: list[Block] = [
        Heading(("Reported leaks: TensorFlow's issues, answered",), anchor="reported"),
        Paragraph((REPORTED_NOTE,)),
        Table(head, tuple(rows), marks=tuple(marks)),
        Details(("Every release's answer",), (Table(("step", *releases), tuple(every)),)),
    ]
    if unread:
        out.append(Paragraph((f"Not read on this machine yet: {', '.join(unread)}.",)))
    return out


def _reported_row(
    r: ReportAnswers,
    step: StepAnswers,
    found: tuple[int, Answer],
    tags: list[str],
    bisected: list[Filed],
) -> tuple[Cell, ...]:
    """A step's row; `found`: its newest release read (a position in `tags`) and answer."""
    report = r.report
    on = ", ".join(
        part
        for part in (
            f"TF {report.release}" if report.release else "",
            f"Python {report.python}" if report.python else "",
        )
        if part
    )
    where = "" if found[0] == len(tags) - 1 else f" (on {label(tags[found[0]])})"
    now = [(found[1].said() + where,)]
    same = [p for p, a in step.pythons.items() if a.text == found[1].text]
    if same:
        now.append((f"the same on Python {', '.join(same)}",))
    now += [(f"Python {p}: {a.said()}",) for p, a in step.pythons.items() if p not in same]
    changed = [c.said() for c in step.changes(tags)]
    changed += [f"over the nightlies ({f.metric}): {f.line}" for f in bisected]
    link = Link(f"tensorflow#{report.number}", report.url)
    return (
        ((link,), (report.title,), (Code(step.variant),)),
        ((on or "not stated",),),
        ((report.claim,),),
        tuple(now),
        tuple((c,) for c in changed) or (("no change over the releases read",),),
    )


def _row(name: str, texts: list[str]) -> tuple[Cell, ...]:
    return ((name,),), *(((t,),) for t in texts)


def pairs(m: MachineReport) -> list[Block]:
    """Every adjacent pair but the newest (told above), newest first, in one table: a
    pair's common shifts are one row, its findings one row each."""
    rows: list[tuple[Cell, ...]] = []
    for found in reversed(m.changes):
        if m.summary.newest and found.pair == m.summary.newest.pair:
            continue
        pair: Cell = ((" → ".join(label(t) for t in found.pair),),)
        if found.shifts:
            shifts = "; ".join(s.text() for s in found.shifts)
            rows.append((pair, *_row("most points", ["common, one cause each", shifts, ""])))
        rows += [(pair, *row) for row in change_rows(found)]
        if not found.items:
            rows.append(
                (pair, *_row("-", ["none", f"no {'other ' * bool(found.shifts)}change", ""]))
            )
    return [
        Heading(("What changed between adjacent releases",), anchor="changes"),
        Paragraph((CHANGES_NOTE,)),
        Table(("releases", *CHANGE_HEAD), tuple(rows), css="gate"),
    ]


def families(m: MachineReport) -> list[Block]:
    """Every family's points on every release (the articles' told above): each family's
    plots, and one table, a point a row."""
    releases = tuple(label(t) for t in m.releases)
    out: list[Block] = [
        Heading(("Families, point by point",), anchor="families"),
        Paragraph((EXPLAIN,)),
    ]
    shown = [f for f in m.families if not (f.name == FAMILY and m.articles)]
    empty = [f"{f.name}: {'; '.join(f.empty)}" for f in shown if f.empty]
    if empty:
        out.append(Paragraph((f"{NO_VALUE}: {' / '.join(empty)}",)))
    for family in shown:
        if family.rows:
            plots = tuple((p.title, p.log, p.series) for p in family.plots)
            out.append(Plots(releases, plots, family.name, tuple(r.label for r in family.rows)))
    rows: list[tuple[Cell, ...]] = []
    marks: list[tuple[str, ...]] = []
    for family in shown:
        for row in family.rows:
            rows.append(_row(f"{family.name}: {row.label}", [c.text() for c in row.cells]))
            leaks = ("" if c.leak is None else "leak" if c.leak else "flat" for c in row.cells)
            marks.append(("", *leaks))
    if rows:
        out.append(Table(("point", *releases), tuple(rows), css="family", marks=tuple(marks)))
    return out
