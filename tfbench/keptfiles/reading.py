"""The one safe reading path of a kept file, and its one writing path.

Kept files may come from another machine (`tfbench results merge`, a CI job, a pull
request): a reader gets a typed record whose every field was checked against its form
(tfbench.grammar) and nothing else of the file. A file that is not of its form raises
KeptFileError naming the file and the field; no reader sees half of one. A writer keeps a
record whole (tfbench.whole), on disk, and only after checking it as its reader will.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tfbench import whole
from tfbench.grammar import Invalid

KEY = "format"  # a kept JSON file's format number; none: kept before they were numbered, 1

MAX_BYTES = 64 << 20  # no kept file comes near: the largest bisect.json is 0.2 MiB


class KeptFileError(ValueError):
    """A kept file that cannot be read or is not of its form: one line, naming the file and
    the field."""

    def __init__(self, path: Path | str, problem: str) -> None:
        self.path, self.why = Path(path), " ".join(problem.split())
        super().__init__(f"{path}: {self.why}")


def regular(path: Path, inside: int = 0) -> None:
    """KeptFileError unless the file is one to open: a regular file (not a link, a FIFO
    that would block, a device) in `inside` folders of the results none of which is a link
    (gate/<machine>/: 2), of at most MAX_BYTES."""
    if path.is_symlink() or not path.is_file():
        raise KeptFileError(path, "not a regular file")
    linked = next((f for f in path.parents[:inside] if f.is_symlink()), None)
    if linked is not None:
        raise KeptFileError(path, f"its folder {linked.name} is a link: not read through")
    if path.stat().st_size > MAX_BYTES:
        raise KeptFileError(path, f"larger than {MAX_BYTES >> 20} MiB")


def load(path: Path, inside: int = 0) -> Any:
    """A kept file's JSON: a file `regular` allows, UTF-8, strict JSON (no NaN)."""
    try:
        regular(path, inside)
        return json.loads(path.read_bytes().decode("utf-8"), parse_constant=_no_constant)
    except (OSError, UnicodeDecodeError) as e:
        raise KeptFileError(path, f"unreadable ({e})") from None
    except RecursionError:
        raise KeptFileError(path, "not JSON (nested too deep)") from None
    except ValueError as e:
        if isinstance(e, KeptFileError):
            raise
        raise KeptFileError(path, f"not JSON ({e})") from None


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def read(path: Path, check: Callable[[Any], Any], inside: int = 2) -> Any:
    data = load(path, inside)
    try:
        return check(data)
    except Invalid as e:
        raise KeptFileError(path, str(e)) from None


def format_of(data: dict[str, Any], expected: int) -> None:
    """Invalid unless the file is of format `expected` (a kind's reader reads one)."""
    found = data.get(KEY, 1)  # kept before formats were numbered: format 1
    if found != expected:
        raise Invalid(KEY, f"{found!r}; this tfbench reads format {expected}")


def write(
    path: Path,
    record: dict[str, Any],
    check: Callable[[Any], Any],
    indent: int | None = 1,
    sort_keys: bool = False,
) -> Path:
    """`record` kept at `path` whole and on disk, checked first as its reader will read it
    (Invalid names the field): no writer keeps a file its reader would refuse."""
    text = json.dumps(record, indent=indent, sort_keys=sort_keys) + "\n"
    check(json.loads(text))
    whole.write(path, text, sync=True)
    return path
