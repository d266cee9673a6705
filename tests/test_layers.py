"""The package's layers import one way only, read from the source (no import is run).

units  <-  measure  <-  scenarios  <-  targets  <-  probes (the probe's contract: grids,
figures, the probes file; history's asvconf)  <-  gate (readings, rules, the session, its
asv runs)  <-  publish (which also reads the scenario catalog)  <-  cli
units  <-  floors  <-  probes (its figures' floors), gate, sweep, publish
history  <-  sweep (release environments)  <-  cli
sources  <-  versions (benchmark versions)  <-  cli;  formats (kept files' numbers): any
grammar (the forms of kept values), escape (Markdown, shell): below every reader
scenarios, sweep  <-  keptfiles (every kept file, read and checked)  <-  probes, gate,
nightly, publish, cli
targets, sweep  <-  nightly (the bisection over tf-nightly builds, the upstream report)  <-
publish (renders the reports filed upstream), cli
targets  <-  explain (why a step grows: its own traced run)  <-  cli
"""

import ast
from pathlib import Path

import pytest

from tfbench.paths import ROOT
from tfbench.sources import closure, imports

# layer -> the layers it may import (its own included)
ALLOWED = {
    "units": {"units"},
    "formats": {"formats"},
    "grammar": {"grammar"},
    "escape": {"escape"},
    "floors": {"formats", "units", "floors"},
    "figures": {"units", "floors", "figures"},
    "sources": {"formats", "sources"},
    "versions": {"formats", "units", "sources", "versions"},
    "measure": {"formats", "units", "measure"},
    "scenarios": {"formats", "units", "measure", "scenarios"},
    "targets": {"formats", "units", "measure", "scenarios", "targets"},
    "history": {"formats", "units", "history"},
    "sweep": {
        *("formats", "units", "floors", "figures", "measure", "scenarios", "targets"),
        *("history", "sweep"),
    },
    "keptfiles": {
        *("formats", "grammar", "units", "figures", "measure", "scenarios", "history"),
        "keptfiles",
    },
    "probes": {
        "formats",
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
    "explain": {"formats", "units", "measure", "targets", "history", "explain"},
    "gate": {
        *("formats", "keptfiles", "units", "floors", "figures", "history", "measure"),
        *("probes", "gate"),
    },
    "nightly": {
        "figures",
        "formats",
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
        "nightly",
    },
    "publish": {
        "figures",
        "formats",
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
        "publish",
    },
    "cli": {
        "figures",
        "formats",
        "grammar",
        "escape",
        "keptfiles",
        "units",
        "measure",
        "scenarios",
        "targets",
        "history",
        "gate",
        "sweep",
        "publish",
        "explain",
        "versions",
        "nightly",
        "cli",
        "__main__",
    },
    "__main__": {"__main__", "cli"},
}
ALLOWED["paths"] = set()
for allowed in ALLOWED.values():  # where things are: any layer may ask (tfbench/paths.py)
    allowed.add("paths")
PACKAGE = ROOT / "tfbench"


def layer(module: str) -> str:
    """tfbench.measure.meter -> measure; tfbench.cli -> cli."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "units"  # `import tfbench` alone reaches nothing


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


SOURCES = sorted(PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_imports_go_one_way(path):
    name = module_name(path)
    own = layer(name)
    found = imports(path.read_text(), name, path.name == "__init__.py")
    wrong = {m for m in found if layer(m) not in ALLOWED[own]}
    assert not wrong, f"{own} may import only {sorted(ALLOWED[own])}"


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
        "tfbench.measure.verdict",
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
