"""The project modules a module imports, read from its source (nothing is imported).

The layer test checks import directions with it; benchmark versions hash the source of
every project module a benchmark reaches, transitively.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
from pathlib import Path

PACKAGE = "tfbench"


def imports(source: str, name: str, is_package: bool = False) -> set[str]:
    """Every `tfbench` module (or attribute path) that the source of module `name` imports,
    at any depth (functions too): `from a.b import c` gives a.b and a.b.c."""
    found = set()
    package = name if is_package else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}" if base else anchor
            found.add(base)
            found.update(f"{base}.{a.name}" for a in node.names)
    return {m for m in found if m == PACKAGE or m.startswith(PACKAGE + ".")}


def _origin(name: str) -> Path | None:
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):  # an attribute path such as tfbench.units.MiB
        return None
    return Path(spec.origin) if spec and spec.origin and spec.origin.endswith(".py") else None


def closure(paths: list[Path], names: list[str]) -> dict[str, Path]:
    """The given modules (their files and dotted names) and every project module they
    import, transitively: dotted name -> file."""
    todo = list(zip(names, paths))
    seen: dict[str, Path] = {}
    while todo:
        name, path = todo.pop()
        if name in seen:
            continue
        seen[name] = path
        for imported in imports(path.read_text(), name, path.name == "__init__.py"):
            origin = _origin(imported)
            if origin is not None and imported not in seen:
                todo.append((imported, origin))
    return seen


def digest(files: dict[str, Path]) -> str:
    """A short hash of the sources, in name order."""
    h = hashlib.sha256()
    for name in sorted(files):
        h.update(name.encode() + b"\0" + files[name].read_bytes())
    return h.hexdigest()[:16]
