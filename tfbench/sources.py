"""The project modules a module imports, read from its source (nothing is imported).

The layer test checks import directions with it; benchmark versions (tfbench.versions)
read the code of every project module a benchmark reaches, transitively.
"""

from __future__ import annotations

import ast
from collections.abc import Container
from pathlib import Path

from tfbench.paths import ROOT

PACKAGE = "tfbench"


def _imported(source: str, name: str, is_package: bool):
    """(the name an import binds, or None; the dotted name it imports) for every import in
    the source of module `name`, at any depth (functions too), relative ones resolved."""
    package = name if is_package else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield a.asname, a.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}" if base else anchor
            yield None, base
            for a in node.names:
                yield a.asname or a.name, f"{base}.{a.name}"


def _ours(dotted: str) -> bool:
    return dotted == PACKAGE or dotted.startswith(PACKAGE + ".")


def imports(source: str, name: str, is_package: bool = False) -> set[str]:
    """Every `tfbench` module (or attribute path) that the source of module `name` imports,
    at any depth (functions too): `from a.b import c` gives a.b and a.b.c."""
    return {dotted for _, dotted in _imported(source, name, is_package) if _ours(dotted)}


def module_names(source: str, name: str, is_package: bool = False, root: Path = ROOT) -> set[str]:
    """The names the source's imports bind to `tfbench` modules (`from tfbench import
    probes` binds probes)."""
    return {
        bound
        for bound, dotted in _imported(source, name, is_package)
        if bound and _ours(dotted) and origin(dotted, root)
    }


def origin(name: str, root: Path = ROOT) -> Path | None:
    """The source file of project module `name` in the project at `root`, found without
    importing anything; None for an attribute path (tfbench.units.MiB) or a name outside
    the project."""
    if not _ours(name):
        return None
    path = root.joinpath(*name.split("."))
    for found in (path.with_suffix(".py"), path / "__init__.py"):
        if found.is_file():
            return found
    return None


def closure(
    paths: list[Path], names: list[str], root: Path = ROOT, leaves: Container[str] = ()
) -> dict[str, Path]:
    """The given modules (their files and dotted names) and every project module they
    import, transitively, from the project at `root`: dotted name -> file. What a module
    of `leaves` (or of a package there) imports is not followed."""
    todo = list(zip(names, paths))
    seen: dict[str, Path] = {}
    while todo:
        name, path = todo.pop()
        if name in seen:
            continue
        seen[name] = path
        if name in leaves or name.rpartition(".")[0] in leaves:
            continue
        for imported in imports(path.read_text(), name, path.name == "__init__.py"):
            found = origin(imported, root)
            if found is not None and imported not in seen:
                todo.append((imported, found))
    return seen
