"""What an asv environment held: results/packages/<machine>/<commit8>-<env>-<cpu|gpu>.txt, a
`# ` header line, then name==version a line. It is written where the environment is made,
by tfbench.history.envsync, with the standard library alone (asv runs it as a script in
the release's environment); this module reads it."""

from __future__ import annotations

from pathlib import Path

from tfbench import grammar
from tfbench.grammar import Invalid
from tfbench.keptfiles import reading

FOLDER = "packages"
INSIDE = 2  # packages/<machine>/


def named(name: str) -> bool:
    return name.endswith(".txt") and bool(grammar.RECORD_NAME.fullmatch(name[:-4]))


def read(path: Path) -> list[str]:
    """What an asv environment held (results/packages/<machine>/<record>.txt): a `# ` header
    line, then name==version a line."""
    try:
        reading.regular(path, INSIDE)
        lines = path.read_bytes().decode("utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise reading.KeptFileError(path, f"unreadable ({e})") from None
    if not lines or not lines[0].startswith("# "):
        raise reading.KeptFileError(path, "line 1: not a packages record's `# ` header")
    try:
        return [grammar.package(line, f"line {k}") for k, line in enumerate(lines[1:], 2) if line]
    except Invalid as e:
        raise reading.KeptFileError(path, str(e)) from None
