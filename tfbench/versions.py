"""Benchmark versions on purpose: a family's asv `version` changes when what it measures
changes, not when its code is tidied.

benchmarks/versions.json records, per family (its scenario module), the version its
results carry and the digest of the measuring code it was recorded with. The digest reads
the code's meaning only (no comments, docstrings, formatting, local names, imports or
statement order), so tidying keeps it. Code whose digest is not recorded gets a version of
its own (VERSION+DIGEST): its results never pass as the history's until a developer says,
with `tfbench versions`, whether the change is a refactor (--same) or a new measurement
(--new, the history is measured again).
"""

from __future__ import annotations

import ast
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from tfbench import sources
from tfbench.paths import ROOT

FILE = ROOT / "benchmarks" / "versions.json"
FORMAT = 1  # of FILE: a change to its shape gets a new number
# The asv glue every family's benchmarks run through; the versioning code itself, how a
# file is written whole and how a kept file is read and written measure nothing: they and
# what they import (unless measuring code imports it too) stay out of the digest.
GLUE = ("benchmarks.common", ROOT / "benchmarks" / "common.py")
NOT_MEASURING = {"tfbench.versions", "tfbench.sources", "tfbench.whole", "tfbench.keptfiles"}
_UNREAD = {"ctx", "type_comment", "kind", "type_params", "lineno", "col_offset"}


class _Canonical(ast.NodeTransformer):
    """Docstrings out, local names of each top-level function made positional, references
    through an imported project module (`targets.run`) read as the name itself (`run`)."""

    def __init__(self, modules: set[str]) -> None:
        self.modules = modules
        self.depth = 0

    def visit_Module(self, node: ast.Module) -> ast.AST:
        return self._body(node)

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.AST:
        return self._body(node)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        return self._function(node)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> ast.AST:
        return self._function(node)

    def visit_JoinedStr(self, node: ast.JoinedStr) -> ast.AST:
        """An f-string's literal parts joined, empty ones out (3.12 parses them apart)."""
        self.generic_visit(node)
        values: list[ast.expr] = []
        for value in node.values:
            last = values[-1] if values else None
            if (
                isinstance(value, ast.Constant)
                and isinstance(last, ast.Constant)
                and isinstance(value.value, str)
                and isinstance(last.value, str)
            ):
                values[-1] = ast.Constant(last.value + value.value)
            else:
                values.append(value)
        node.values = [v for v in values if not (isinstance(v, ast.Constant) and v.value == "")]
        return node

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.value, ast.Name) and node.value.id in self.modules:
            return ast.Name(id=node.attr, ctx=node.ctx)
        return node

    def _body(self, node):
        body = node.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            if isinstance(body[0].value.value, str):
                body = body[1:] or [ast.Pass()]
        node.body = body
        return self.generic_visit(node)

    def _function(self, node):
        if self.depth == 0:  # a top-level function or a method: its nested ones are its own
            _rename_locals(node)
        self.depth += 1
        try:
            return self._body(node)
        finally:
            self.depth -= 1


def _rename_locals(function: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
    """Name the function's locals (nested functions' included) by order of first binding;
    its parameters and its global and nonlocal names keep theirs."""
    kept = {a.arg for a in _arguments(function.args)}
    for inner in ast.walk(function):
        if isinstance(inner, ast.Global | ast.Nonlocal):
            kept.update(inner.names)
    renamed: dict[str, str] = {}
    for inner in _preorder(function):
        name = _bound_name(inner) if inner is not function else None
        if name and name not in kept and name not in renamed:
            renamed[name] = f"_{len(renamed)}"
    for inner in ast.walk(function):
        for field in _NAME_FIELDS.get(type(inner), ()):
            if getattr(inner, field) in renamed and inner is not function:
                setattr(inner, field, renamed[getattr(inner, field)])


def _arguments(args: ast.arguments) -> list[ast.arg]:
    found = [*args.posonlyargs, *args.args, *args.kwonlyargs]
    return found + [a for a in (args.vararg, args.kwarg) if a is not None]


def _preorder(node: ast.AST):
    yield node
    for child in ast.iter_child_nodes(node):
        yield from _preorder(child)


# Where a node holds a name that may be a function's local.
_NAME_FIELDS = {
    ast.Name: ("id",),
    ast.arg: ("arg",),
    ast.ExceptHandler: ("name",),
    ast.FunctionDef: ("name",),
    ast.AsyncFunctionDef: ("name",),
    ast.ClassDef: ("name",),
}


def _bound_name(node: ast.AST) -> str | None:
    """The name a node binds inside a function: an assigned name, an exception's name, a
    nested function's or class's name or parameter (locals of the function that holds
    them)."""
    if isinstance(node, ast.Name):
        return node.id if isinstance(node.ctx, ast.Store) else None
    fields = _NAME_FIELDS.get(type(node))
    return getattr(node, fields[0]) if fields else None


def _dump(node: object) -> str:
    """ast.dump without positions and without fields that are empty, so that the text is
    the same on every Python the suite runs on (3.12 adds empty `type_params`)."""
    if isinstance(node, ast.AST):
        fields = (
            f"{name}={_dump(value)}"
            for name, value in ast.iter_fields(node)
            if name not in _UNREAD and value is not None and value != []
        )
        return f"{type(node).__name__}({','.join(fields)})"
    if isinstance(node, list):
        return f"[{','.join(map(_dump, node))}]"
    return repr(node)


def statements(source: str, name: str, is_package: bool = False, root: Path = ROOT) -> list[str]:
    """A module's code as the digest reads it: each top-level statement but imports, in
    canonical form."""
    modules = sources.module_names(source, name, is_package, root)
    tree = _Canonical(modules).visit(ast.parse(source))
    return [
        _dump(s) for s in tree.body if not isinstance(s, ast.Import | ast.ImportFrom | ast.Pass)
    ]


def digest(files: dict[str, Path], root: Path = ROOT) -> str:
    """The measuring code's digest: its statements, sorted, wherever they live."""
    found = sorted(
        s
        for name, path in files.items()
        if name not in NOT_MEASURING
        for s in statements(path.read_text(), name, path.name == "__init__.py", root)
    )
    return hashlib.sha256("\n".join(found).encode()).hexdigest()[:16]


def measuring_files(module: str, root: Path = ROOT) -> dict[str, Path]:
    """The asv glue, a family's scenario module and every project module they import."""
    glue_name, glue_path = GLUE
    glue_path = root / glue_path.relative_to(ROOT)
    scenario = root / Path(*module.split(".")).with_suffix(".py")
    return sources.closure([glue_path, scenario], [glue_name, module], root, NOT_MEASURING)


@dataclass(frozen=True)
class FamilyVersion:
    key: str  # the scenario module's name: loops, graphs, ...
    version: str  # recorded: what the family's results carry
    recorded: str  # the digest the version was recorded with
    code: str  # the digest of the code as it is

    @property
    def current(self) -> str:
        """The version of results measured by this code."""
        return self.version if self.code == self.recorded else f"{self.version}+{self.code}"


def read(path: Path = FILE) -> dict[str, dict[str, str]]:
    data = json.loads(path.read_text())
    found = data.get("format", 1) if isinstance(data, dict) else None
    if found != FORMAT:  # of another tfbench: named, never misread
        raise ValueError(f"{path}: format {found!r}; this tfbench reads format {FORMAT}")
    return data["families"]


def _module(key: str) -> str:
    return f"tfbench.scenarios.{key}"


def code_digest(key: str, root: Path = ROOT) -> str:
    """The digest of family `key`'s measuring code in the project at `root`."""
    return digest(measuring_files(_module(key), root), root)


def family(key: str, path: Path = FILE) -> FamilyVersion:
    recorded = read(path)[key]
    return FamilyVersion(key, recorded["version"], recorded["code"], code_digest(key))


def families(path: Path = FILE) -> list[FamilyVersion]:
    return [family(k, path) for k in sorted(read(path))]


def record(keys: list[str], new: bool, path: Path = FILE) -> list[FamilyVersion]:
    """Record the code of these families as it is: with `new`, under a new version (what
    they measure changed; a scenario module not recorded yet becomes a family); otherwise
    under their version (a refactor)."""
    recorded = read(path)
    added = {k for k in keys if new and k not in recorded and sources.origin(_module(k))}
    unknown = sorted(set(keys) - set(recorded) - added)
    if unknown:
        raise KeyError(f"no such family: {', '.join(unknown)}; families: {', '.join(recorded)}")
    changed = []
    for key in sorted(keys):
        code = code_digest(key)
        before = recorded.get(key, {}).get("version", "")
        version = hashlib.sha256(f"{before}:{code}".encode()).hexdigest()[:16] if new else before
        recorded[key] = {"version": version, "code": code}
        changed.append(FamilyVersion(key, version, code, code))
    write(recorded, path)
    return changed


def write(recorded: dict[str, dict[str, str]], path: Path = FILE) -> None:
    run = {"format": FORMAT, "families": recorded}
    text = json.dumps(run, indent=1, sort_keys=True)
    path.write_text(text + "\n")
