"""Text from kept files made inert where tfbench writes it: Markdown (report.md, issue.md)
and shell commands. The one place of each: every value that may come from another machine
goes through here before it is written into a page or a command someone pastes."""

from __future__ import annotations

import html
import re
import shlex
from collections.abc import Iterable
from pathlib import Path

# @ and # also: no mention, no issue link; `_` where it could open or close emphasis (an
# identifier's inner underscores cannot)
_SPECIAL = re.compile(r"([\\`*\[\]|#~@]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9]))")
# what makes a line a block when it starts one: a list item's marker, a setext underline
_LINE_START = re.compile(r"^(\s*(?:\d{1,9})?)([-+.)=])(?=\s|$|[-=]+\s*$)")
_AUTOLINK = re.compile(r"(?i)\b(https?|ftp)(:)|\b(www)(\.)")
_BREAKS = re.compile(r"[\r\n\t\f\v\u2028\u2029\x85]+")
# characters a terminal acts on or that reorder what follows (bidi controls): shown as \uXXXX
_HIDDEN = re.compile(
    r"[\x00-\x08\x0e-\x1f\x7f-\x84\x86-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff]"
)


def plain(text: str) -> str:
    """Untrusted text as one line of plain text (a terminal's): line breaks as one space,
    control characters (a terminal's escape sequences) and bidi controls made visible as
    their code points (\u001b, \u202e)."""
    return _HIDDEN.sub(lambda m: f"\\u{ord(m[0]):04x}", _BREAKS.sub(" ", text))


def markdown(text: str) -> str:
    """Untrusted text as inline Markdown text: one plain line, HTML's metacharacters as
    entities, Markdown's punctuation escaped, a list marker at its start escaped, and no
    bare URL a renderer would turn into a link."""
    text = plain(text)
    text = _SPECIAL.sub(r"\\\1", html.escape(text, quote=False))
    text = _LINE_START.sub(r"\1\\\2", text)
    return _AUTOLINK.sub(lambda m: f"{m[1] or m[3]}\\{m[2] or m[4]}", text)


def code(text: str) -> str:
    """Untrusted text as an inline code span: one line, fenced by more backticks than any
    run of them inside (Markdown shows a code span's content as it is)."""
    text = plain(text)
    fence = "`" * (_longest_run(text) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def block(text: str, info: str = "") -> str:
    """Untrusted lines as a fenced code block: a fence of more backticks than any run of
    them inside, so no line can close it."""
    fence = "`" * max(3, _longest_run(text) + 1)
    return f"{fence}{info}\n{text.rstrip(chr(10))}\n{fence}"


def _longest_run(text: str) -> int:
    return max((len(run) for run in re.findall(r"`+", text)), default=0)


def command(words: Iterable[str]) -> str:
    """A command to paste into a shell: every word quoted (shlex)."""
    return shlex.join(words)


def local(text: str, folder: Path | None) -> str:
    """A line naming files under `folder` with the folder's own name in place of where it
    sits on this machine (a published page shows no local path)."""
    if folder is None:
        return text
    for where in dict.fromkeys([str(folder), str(folder.resolve())]):
        text = text.replace(f"{where}/", f"{folder.name}/")
    return text
