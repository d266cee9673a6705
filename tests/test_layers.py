"""The package's layers import one way only, read from the source (no import is run).

units  <-  measure  <-  scenarios  <-  targets  <-  probes (the probe's contract: grids,
figures, the probes file; history's asvconf)  <-  gate (readings, rules, the session, its
asv runs)  <-  publish (which also reads the scenario catalog)  <-  cli
units  <-  floors  <-  probes (its figures' floors), gate, sweep, publish
targets  <-  pairs (time read in pairs of processes, two builds side by side)  <-  gate,
sweep, nightly, publish (its verdict's line)
history  <-  sweep (release environments)  <-  cli
sources  <-  versions (benchmark versions and their file's format)  <-  cli
grammar (the forms of kept values), escape (Markdown, shell): below every reader
scenarios, sweep  <-  keptfiles (every kept file, a module a kind: its format, name, check,
read and write)  <-  probes, gate, nightly, publish, cli
targets, sweep  <-  nightly (the bisection over tf-nightly builds, the upstream report)  <-
publish (renders the reports filed upstream), cli
figures (the one table of figures) and paths: below every reader, the measured record's
figures among them; benchmarks/ (the suite)
on top: tfbench imports it only by computed names, each declared (DYNAMIC)
targets  <-  explain (why a step grows: its own traced run)  <-  cli
cpu (the CPU a figure is read on; the standard library alone)  <-  keptfiles, probes, gate,
history, nightly, publish, cli
profile (where a run's and the tests' time goes; escape for its tables)  <-  cli
naming (the suite's names: time_, the Costs twin, the GPU param; the standard library
alone): below every reader
floors, measure  <-  answers (a reported leak's answer from its step's record)  <-  publish, cli
whole (files written whole, asv's kept whole, the run's lock, scratch folders) and faults
(how a run ends: the exit codes, a fault's line), the standard library alone: below every
writer
"""

import ast
import graphlib
import re
from pathlib import Path

import pytest

from tfbench.paths import ROOT
from tfbench.sources import closure, imports

# layer -> the layers it may import (its own included)
ALLOWED = {
    "units": {"units"},
    "naming": {"naming"},
    "grammar": {"grammar"},
    "escape": {"escape"},
    "floors": {"units", "floors"},
    "figures": {"units", "floors", "figures"},
    "sources": {"sources"},
    "versions": {"units", "sources", "versions"},
    "measure": {"units", "figures", "measure"},  # the record: its figures' keys
    "scenarios": {"units", "measure", "scenarios"},
    "targets": {"units", "measure", "scenarios", "targets"},
    "history": {"units", "history"},
    "pairs": {"units", "measure", "scenarios", "targets", "pairs"},
    "sweep": {
        *("units", "floors", "figures", "measure", "scenarios", "targets"),
        *("history", "pairs", "sweep"),
    },
    "keptfiles": {
        *("grammar", "units", "figures", "measure", "scenarios", "history"),
        "keptfiles",
    },
    "probes": {
        "grammar",
        "keptfiles",
        "units",
        "floors",
        "measure",
        "scenarios",
        "targets",
        "history",
        "probes",
    },
    "explain": {"units", "measure", "targets", "history", "explain"},
    "gate": {
        *("keptfiles", "units", "floors", "figures", "history", "measure"),
        *("targets", "probes", "pairs", "gate"),
    },
    "nightly": {
        "figures",
        "grammar",
        "escape",
        "keptfiles",
        "units",
        "floors",
        "measure",
        "scenarios",
        "targets",
        "history",
        "sweep",
        "pairs",
        "nightly",
    },
    "publish": {
        "figures",
        "grammar",
        "escape",
        "keptfiles",
        "units",
        "floors",
        "history",
        "gate",
        "probes",
        "scenarios",
        "nightly",
        "pairs",
        "measure",  # spawn: asv's publish ends with it
        "publish",
    },
    "cli": {
        "figures",
        "grammar",
        "escape",
        "keptfiles",
        "units",
        "measure",
        "scenarios",
        "targets",
        "history",
        "gate",
        "pairs",
        "sweep",
        "publish",
        "explain",
        "versions",
        "nightly",
        "probes",
        "profile",
        "cli",
        "faults",
    },
    # the handler of faults and interrupts: the console script and the CLI both import it
    "faults": {"faults"},
    "__main__": {"__main__", "cli", "faults"},
}
ALLOWED["answers"] = {"units", "floors", "figures", "measure", "answers"}
for reader in ("publish", "cli"):
    ALLOWED[reader].add("answers")
ALLOWED["cpu"] = {"cpu"}  # the CPU a figure is read on: the standard library alone
ALLOWED["profile"] = {"profile", "escape"}  # where the time goes: its tables escaped
for reader in ("keptfiles", "probes", "gate", "nightly", "publish", "cli", "history"):
    ALLOWED[reader].add("cpu")
ALLOWED["paths"], ALLOWED["whole"] = set(), {"whole"}
for allowed in ALLOWED.values():  # where things are, how a file is written, how a run ends,
    allowed |= {"paths", "whole", "faults", "naming"}  # what the suite's names say
PACKAGE = ROOT / "tfbench"


# The asv suite: it reads tfbench's instrument; nothing of tfbench imports it by name.
ALLOWED["benchmarks"] = {
    *("units", "figures", "measure", "scenarios", "targets", "probes"),
    *("versions", "paths", "benchmarks"),
}
# Imports by a name computed at run time, each declared: the module -> (the layer it
# reaches, why). The suite's own modules are loaded by the processes that measure it.
DYNAMIC = {
    "tfbench.gate.confirm": ("benchmarks", "the suite's Costs classes, read again"),
    "tfbench.pairs.server": ("benchmarks", "the suite's step classes, timed"),
    "tfbench.targets": ("benchmarks", "the modules that register a family's scenarios"),
    "tfbench.scenarios": ("scenarios", "every family module of the catalog, registering it"),
}


def layer(module: str) -> str:
    """tfbench.measure.meter -> measure; tfbench.cli -> cli; benchmarks.loops -> benchmarks."""
    parts = module.split(".")
    if parts[0] == "benchmarks":
        return "benchmarks"
    return parts[1] if len(parts) > 1 else "units"  # `import tfbench` alone reaches nothing


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


SOURCES = sorted([*PACKAGE.rglob("*.py"), *(ROOT / "benchmarks").glob("*.py")])


def dynamic_imports(source: str) -> list[str]:
    """What each importlib.import_module or __import__ call of the source imports, as
    written (its argument's source)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and node.args:
            called = node.func
            name = called.attr if isinstance(called, ast.Attribute) else getattr(called, "id", "")
            if name in ("import_module", "__import__"):
                found.append(ast.unparse(node.args[0]))
    return found


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_imports_go_one_way(path):
    name = module_name(path)
    own = layer(name)
    found = imports(path.read_text(), name, path.name == "__init__.py")
    wrong = {m for m in found if layer(m) not in ALLOWED[own]}
    assert not wrong, f"{own} may import only {sorted(ALLOWED[own])}"


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_imports_by_computed_names_are_declared_and_go_one_way(path):
    """A dynamic import is no exception to the layers: each is declared with the layer it
    reaches, which its module's layer may import."""
    name = module_name(path)
    sites = dynamic_imports(path.read_text())
    if not sites:
        assert name not in DYNAMIC, "declared dynamic, imports nothing by a computed name"
        return
    assert name in DYNAMIC, f"undeclared dynamic imports: {sites}"
    reached, _ = DYNAMIC[name]
    own = layer(name)
    assert reached == own or reached == "benchmarks", (own, reached)


def test_no_module_imports_itself_round_a_circle():
    """Within a layer too, modules import one way (a type's import included: #68 found
    gate/asvruns <-> gate/shards); a package's own __init__ is not counted."""
    names = {module_name(p) for p in PACKAGE.rglob("*.py")}
    graph = {}
    for path in PACKAGE.rglob("*.py"):
        name, found = module_name(path), set()
        for dotted in imports(path.read_text(), name, path.name == "__init__.py"):
            while dotted not in names and "." in dotted:  # an attribute: its module
                dotted = dotted.rpartition(".")[0]
            if dotted in names and not f"{name}.".startswith(f"{dotted}."):
                found.add(dotted)
        graph[name] = found
    graphlib.TopologicalSorter(graph).prepare()  # CycleError names the circle


def test_nothing_of_tfbench_imports_the_suite_by_name():
    for path in PACKAGE.rglob("*.py"):
        found = {m for m in imports_all(path) if m.split(".")[0] == "benchmarks"}
        assert not found, path


def imports_all(path: Path) -> set[str]:
    """Every module a source imports (ours and others'), by name."""
    tree = ast.parse(path.read_text())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
    return found


def test_every_module_is_in_a_layer():
    assert {layer(module_name(p)) for p in SOURCES} <= set(ALLOWED)


def test_the_reader_finds_imports_of_every_form():
    source = """
import tfbench.units
from tfbench.measure import devices
from ..publish import report
from . import sibling
def late():
    from tfbench.history.repo import history_tags
"""
    found = imports(source, "tfbench.measure.meter")
    assert {
        "tfbench.units",
        "tfbench.measure.devices",
        "tfbench.publish.report",
        "tfbench.measure.sibling",
        "tfbench.history.repo",
    } <= found
    assert {layer(m) for m in found} - ALLOWED["measure"] == {"publish", "history"}


def test_a_version_reaches_what_a_family_imports_and_no_other_family():
    """tfbench.versions digests this closure: a family's version answers for every module
    its results go through, and adding another family changes none."""

    def reached(name):
        path = PACKAGE.joinpath(*name.split(".")[1:]).with_suffix(".py")
        return set(closure([path], [name]))

    loops = reached("tfbench.scenarios.loops")
    assert {"tfbench.measure.devices", "tfbench.scenarios"} <= loops
    assert "tfbench.scenarios.graphs" not in loops
    assert "tfbench.scenarios.graphs" in reached("tfbench.scenarios.threads")
    targets = reached("tfbench.targets")
    assert {
        "tfbench.measure.steps",
        "tfbench.measure.growth",
        "tfbench.measure.meter",
        "tfbench.units",
    } <= targets
    assert not any(m.startswith("tfbench.scenarios.") for m in targets)


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_modules_and_functions_stay_short(path):
    """A module's docstring says what it is in 20 lines at most; a function fits 60."""
    tree = ast.parse(path.read_text())
    doc = ast.get_docstring(tree, clean=False) or ""
    assert len(doc.splitlines()) <= 20, "module docstring over 20 lines"
    long = [
        f"{n.name}: {n.end_lineno - n.lineno + 1} lines"
        for n in ast.walk(tree)
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
        and n.end_lineno - n.lineno + 1 > 60
    ]
    assert not long


@pytest.mark.parametrize(
    "package", sorted(p.parent for p in PACKAGE.rglob("__init__.py")), ids=lambda p: p.name
)
def test_every_packages_docstring_names_each_of_its_modules(package):
    """A package's docstring is its map: each module in it named (#68)."""
    doc = ast.get_docstring(ast.parse((package / "__init__.py").read_text())) or ""
    modules = {p.stem for p in package.iterdir() if p.suffix in (".py", ".c")} - {"__init__"}
    assert not {m for m in modules if not re.search(rf"\b{re.escape(m)}\b", doc)}
