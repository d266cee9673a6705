"""What the report shows, as data a renderer emits: headings, paragraphs, bullet lists and
tables, their text in pieces (plain text, a link, code), emitted as Markdown (report.md,
`tfbench report`, a CI job's summary), HTML (report.html) or a terminal's lines (the CLI).
A sentence is written once, where its section is built (tfbench.publish.sections); each
emitter escapes every piece of text for its format (names, params and reasons come from
results, possibly other machines')."""

from __future__ import annotations

import html as _html
from dataclasses import dataclass

from tfbench import escape
from tfbench.publish import svg


@dataclass(frozen=True)
class Link:
    text: str
    url: str


@dataclass(frozen=True)
class Code:
    text: str


@dataclass(frozen=True)
class Strong:
    text: str


@dataclass(frozen=True)
class Own:
    """This project's own Markdown (a claim as written): as it is in Markdown, as text in
    HTML."""

    text: str


Piece = str | Link | Code | Strong | Own
Text = tuple[Piece, ...]  # a run of pieces, read as one line
Cell = tuple[Text, ...]  # a table cell: its lines ("; " between them in Markdown)


@dataclass(frozen=True)
class Heading:
    text: Text
    anchor: str | None = None  # the HTML id a link elsewhere in the page points to
    level: int = 3  # a section's; 4 for a part of one


@dataclass(frozen=True)
class Paragraph:
    text: Text


@dataclass(frozen=True)
class Bullets:
    items: tuple[Text, ...]


@dataclass(frozen=True)
class Table:
    head: tuple[str, ...]
    rows: tuple[tuple[Cell, ...], ...]
    css: str = ""  # the HTML table's class
    marks: tuple[tuple[str, ...], ...] = ()  # each row's cells' HTML classes (leak, flat)


@dataclass(frozen=True)
class Plots:
    """A figure's line plots across releases, each (title, log scale, label -> a value a
    release), and the legend of their lines: on the page, inline SVG (tfbench.publish.svg);
    the Markdown and the terminal show the table beside them instead."""

    releases: tuple[str, ...]
    plots: tuple[tuple[str, bool, dict[str, list[float | None]]], ...]
    caption: str
    legend: tuple[str, ...]


@dataclass(frozen=True)
class Section:
    """Blocks set apart on the page (its HTML class styles them); in Markdown, the blocks."""

    css: str
    blocks: tuple[Heading | Paragraph | Bullets | Table, ...]


@dataclass(frozen=True)
class Details:
    """Blocks folded under a line on the page (HTML's details), detail the Markdown leaves
    to it; on a terminal, the line and the blocks."""

    summary: Text
    blocks: tuple[Block, ...]


Block = Heading | Paragraph | Bullets | Table | Plots | Section | Details


def _md(text: Text) -> str:
    out = []
    for piece in text:
        if isinstance(piece, Link):
            out.append(f"[{escape.markdown(piece.text)}]({piece.url})")
        elif isinstance(piece, Code):
            out.append(escape.code(piece.text))
        elif isinstance(piece, Strong):
            out.append(f"**{escape.markdown(piece.text)}**")
        elif isinstance(piece, Own):
            out.append(piece.text)
        else:
            out.append(escape.markdown(piece))
    return "".join(out)


def _html_text(text: Text) -> str:
    out = []
    for piece in text:
        if isinstance(piece, Link):
            out.append(f'<a href="{_html.escape(piece.url)}">{_html.escape(piece.text)}</a>')
        elif isinstance(piece, Code):
            out.append(f"<code>{_html.escape(piece.text)}</code>")
        elif isinstance(piece, Strong):
            out.append(f"<strong>{_html.escape(piece.text)}</strong>")
        else:  # text, or this project's own Markdown, shown as written
            out.append(_html.escape(piece if isinstance(piece, str) else piece.text))
    return "".join(out)


def md_row(cells: tuple[Cell, ...]) -> str:
    """A table row in Markdown (a row of a table whose head is written elsewhere)."""
    return "| " + " | ".join("; ".join(_md(line) for line in cell) for cell in cells) + " |"


def markdown(blocks: list[Block]) -> list[str]:
    """The blocks as Markdown lines, a blank line between blocks."""
    out: list[str] = []
    for block in blocks:
        if isinstance(block, Plots | Details):
            continue  # the page's alone: the Markdown reads in a minute
        if isinstance(block, Section):
            lines = markdown(list(block.blocks))
        elif isinstance(block, Heading):
            lines = [f"{'#' * block.level} {_md(block.text)}"]
        elif isinstance(block, Paragraph):
            lines = [_md(block.text)]
        elif isinstance(block, Bullets):
            lines = [f"- {_md(item)}" for item in block.items]
        else:
            lines = ["| " + " | ".join(block.head) + " |", "|---" * len(block.head) + "|"]
            lines += [md_row(row) for row in block.rows]
        out += ["", *lines] if out else lines
    return out


def html(blocks: list[Block]) -> list[str]:
    """The blocks as HTML, an element a line (a table's rows each a line)."""
    out: list[str] = []
    for block in blocks:
        if isinstance(block, Section):
            out.append(f'<section class="{_html.escape(block.css)}">')
            out += [*html(list(block.blocks)), "</section>"]
        elif isinstance(block, Details):
            out.append(f"<details><summary>{_html_text(block.summary)}</summary>")
            out += [*html(list(block.blocks)), "</details>"]
        elif isinstance(block, Plots):
            out += _plots(block)
        elif isinstance(block, Heading):
            anchor = f' id="{_html.escape(block.anchor)}"' if block.anchor else ""
            tag = f"h{block.level}"
            out.append(f"<{tag}{anchor}>{_html_text(block.text)}</{tag}>")
        elif isinstance(block, Paragraph):
            out.append(f"<p>{_html_text(block.text)}</p>")
        elif isinstance(block, Bullets):
            out.append("<ul>" + "".join(f"<li>{_html_text(i)}</li>" for i in block.items))
            out.append("</ul>")
        else:
            css = f' class="{_html.escape(block.css)}"' if block.css else ""
            out.append(f"<table{css}><tr>" + "".join(f"<th>{h}</th>" for h in block.head))
            out[-1] += "</tr>"
            for k, row in enumerate(block.rows):
                marks = block.marks[k] if block.marks else ("",) * len(row)
                cells = ("<br>".join(_html_text(line) for line in cell) for cell in row)
                tds = (f'<td class="{_html.escape(m)}">' if m else "<td>" for m in marks)
                out.append(
                    "<tr>" + "".join(f"{td}{c}</td>" for td, c in zip(tds, cells)) + "</tr>"
                )
            out.append("</table>")
    return out


def _plots(block: Plots) -> list[str]:
    out = [
        f"<figure>{svg.plot(title, list(block.releases), series, log=log)}<figcaption>"
        f"{_html.escape(block.caption)}: {_html.escape(title)}</figcaption></figure>"
        for title, log, series in block.plots
    ]
    keys = (
        f'<span style="color:{svg.COLORS[k % len(svg.COLORS)]}">&#9632;</span>&nbsp;'
        f"{_html.escape(label)}"
        for k, label in enumerate(block.legend)
    )
    return [*out, '<p class="legend">' + " ".join(keys) + "</p>"]


def _plain_text(text: Text) -> str:
    """A run of pieces as plain text: a link's address after its text."""
    out = []
    for piece in text:
        if isinstance(piece, Link):
            out.append(f"{piece.text} ({piece.url})")
        else:
            out.append(piece if isinstance(piece, str) else piece.text)
    return "".join(out)


def _plain(text: Text) -> str:
    """A run of pieces as a terminal shows it: control characters and bidi marks as their
    code points (escape.plain)."""
    return escape.plain(_plain_text(text))


def terminal(blocks: list[Block]) -> list[str]:
    """The blocks as a terminal's lines: a heading flush left, the rest indented, a
    table's columns aligned but its last (its widest: evidence, reasons) left free."""
    out: list[str] = []
    for block in blocks:
        if isinstance(block, Plots):
            continue  # the table beside them holds their values
        if isinstance(block, Section):
            out += terminal(list(block.blocks))
        elif isinstance(block, Details):
            out += [_plain(block.summary), *terminal(list(block.blocks))]
        elif isinstance(block, Heading):
            out.append(_plain(block.text))
        elif isinstance(block, Paragraph):
            out.append(f"  {_plain(block.text)}")
        elif isinstance(block, Bullets):
            out += [f"  - {_plain(item)}" for item in block.items]
        else:
            rows = [block.head, *(tuple("; ".join(map(_plain, c)) for c in r) for r in block.rows)]
            widths = [max(len(row[k]) for row in rows) for k in range(len(block.head) - 1)]
            for row in rows:
                cells = [cell.ljust(width) for cell, width in zip(row, widths)] + [row[-1]]
                out.append("  " + "  ".join(cells).rstrip())
    return out
