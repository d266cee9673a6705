"""The report's "Reported leaks" section: each memory report of TensorFlow's tracker the
suite holds (tfbench.scenarios.reported), its answer on every release (tfbench.answers,
from the history's figures of its step) and the releases where the answer changed."""

from __future__ import annotations

import ast
import inspect
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tfbench import answers, escape
from tfbench.answers import Answer
from tfbench.history.releases import label
from tfbench.publish.families import Family
from tfbench.publish.findings import Literal, literal
from tfbench.publish.results import MachineResults
from tfbench.scenarios.reported import REPORTS, Report

FAMILY = "reported.Reported"  # the step benchmarks of tfbench/scenarios/reported.py
REPORTED_NOTE = (
    "Memory reports from TensorFlow's issue tracker, each its reporter's reproducer as a step "
    "(the reporter's loop body; what each adapts: tfbench/scenarios/reported.py), answered on "
    "every release: reproduces (the step keeps memory for good), garbage only (it leaves "
    "reference cycles that only Python's collector frees: a periodic gc.collect() bounds "
    "them), does not reproduce, or does not run (its error)."
)


@dataclass(frozen=True)
class Change:
    before: str  # the release read last before the answer changed
    after: str  # the first release with the new answer
    was: str  # answers.ANSWERS
    now: str

    def said(self) -> str:
        """v2.21.0 (after v2.16.2): reproduces → does not reproduce."""
        return f"{label(self.after)} (after {label(self.before)}): {self.was} → {self.now}"


@dataclass(frozen=True)
class StepAnswers:
    variant: str  # the family's variant: the scenario id less "reported."
    answers: list[Answer | None]  # per release of the machine; None: not read there
    # the newest release on each other Python the history measured it on
    pythons: dict[str, Answer] = field(default_factory=dict)

    def newest(self) -> tuple[int, Answer] | None:
        """The newest release's position with an answer, and that answer."""
        found = [(k, a) for k, a in enumerate(self.answers) if a is not None]
        return found[-1] if found else None

    def changes(self, releases: list[str]) -> list[Change]:
        """Each release whose answer differs from the release read before it."""
        out, last = [], None
        for release, found in zip(releases, self.answers):
            if found is None:
                continue
            if last is not None and last[1].text != found.text:
                out.append(Change(last[0], release, last[1].text, found.text))
            last = (release, found)
        return out


@dataclass(frozen=True)
class ReportAnswers:
    report: Report
    steps: list[StepAnswers]

    @property
    def measured(self) -> bool:
        return any(s.newest() for s in self.steps)


def _answer(found: Literal) -> Answer | None:
    """A step's answer from what it did on a release: its reason, where the probe kept no
    figures, is a `does not run`; None: not read."""
    if found.error is not None:
        return Answer(answers.FAILS, None, None, found.error)
    if found.leak is None:
        return None
    basis = answers.HEAP if found.heap else answers.RSS
    return answers.judged(found.leak, found.growth, found.garbage, basis=basis)


def answer_on(family: Family, machine: MachineResults, variant: str, tag: str) -> Answer | None:
    """A step's answer on one release, from the history's figures read as the articles'
    examples are (tfbench.publish.findings.literal)."""
    return _answer(literal(family, machine, variant, tag))


def on_pythons(family: Family, machine: MachineResults, variant: str) -> dict[str, Answer]:
    """A step's answer on the newest release on each other Python measured there (what
    reads no verdict there is left out: its reason is kept for the history's Python only)."""
    newest = machine.releases[-1]
    found = {p: _answer(literal(family, machine, variant, newest, p)) for p in machine.pythons}
    return {p: a for p, a in sorted(found.items()) if a is not None}


def answered(families: dict[str, Family], machine: MachineResults) -> list[ReportAnswers]:
    """Every report's answers on the machine's releases; none where the history holds no
    reported family."""
    family = families.get(FAMILY)
    if family is None:
        return []
    out = []
    for report in REPORTS:
        steps = []
        for sid in report.steps:
            variant = sid.split(".", 1)[1]
            found = [answer_on(family, machine, variant, t) for t in machine.releases]
            pythons = on_pythons(family, machine, variant) if machine.releases else {}
            steps.append(StepAnswers(variant, found, pythons))
        out.append(ReportAnswers(report, steps))
    return out


def _helpers(prepare: Callable[..., Any]) -> list[str]:
    """The module's functions and constants a step's prepare names (and what they name in
    turn), first: the comment's code reads whole, as the suite runs it (the articles' graph
    mode and counters named, not inlined)."""
    module = inspect.getmodule(prepare)
    found: dict[str, str] = {}

    def visit(code: Callable[..., Any]) -> None:
        for node in ast.walk(ast.parse(textwrap.dedent(inspect.getsource(code)))):
            name = node.id if isinstance(node, ast.Name) else None
            value = getattr(module, name, None) if name else None
            if name is None or name in found or value is None or value is prepare:
                continue
            if inspect.isfunction(value) and inspect.getmodule(value) is module:
                found[name] = ""  # placed before its source, so a cycle ends here
                visit(value)
                found[name] = inspect.getsource(value).rstrip()
            elif isinstance(value, int | tuple) and name.isupper():
                found[name] = f"{name} = {value!r}"

    visit(prepare)
    return [text for text in found.values() if text]


def comment(found: ReportAnswers, releases: list[str], machine: str) -> str:
    """The comment a maintainer could post on the report: what reproduces on which release,
    the step that was run and the figures its answers rest on (results' text escaped)."""
    report = found.report
    variants = [s.variant for s in found.steps]
    lines = [
        f"tfbench ran this report's reproducer on the TensorFlow releases below, on "
        f"machine {escape.code(machine)} (CPU): the reporter's loop body as a step, the "
        "heap in use read after Python's full collections (what a step keeps for good) apart "
        "from the garbage only the cyclic collector frees.",
        "",
        "| release | " + " | ".join(escape.code(v) for v in variants) + " |",
        "|---" * (len(variants) + 1) + "|",
    ]
    for k, release in enumerate(releases):
        cells = []
        for step in found.steps:
            answer = step.answers[k]
            cells.append(escape.markdown(answer.said()) if answer else "not read")
        lines.append(f"| {escape.markdown(label(release))} | " + " | ".join(cells) + " |")
    for python in sorted({p for s in found.steps for p in s.pythons}):
        cells = [
            escape.markdown(s.pythons[python].said()) if python in s.pythons else "not read"
            for s in found.steps
        ]
        release = escape.markdown(f"{label(releases[-1])}, Python {python}")
        lines.append(f"| {release} | " + " | ".join(cells) + " |")
    changed = [
        f"- {escape.code(s.variant)}: {escape.markdown(c.said())}"
        for s in found.steps
        for c in s.changes(releases)
    ]
    read = sum(any(s.answers[k] for s in found.steps) for k in range(len(releases)))
    unchanged = (  # one release read tells no change
        f"No answer changed over the {read} releases read."
        if read > 1
        else f"Read on {read} of {len(releases)} releases: a change needs two."
    )
    lines += ["", *(changed or [unchanged]), ""]
    lines.append(f"What the step adapts of the reproducer: {escape.markdown(report.adapted)}.")
    for sid, (prepare, _, _) in report.steps.items():
        code = "\n\n".join([*_helpers(prepare), inspect.getsource(prepare)])
        lines += ["", f"{escape.code(sid)}:", "", "```python", code, "```"]
    lines += [
        "",
        "To read a step again on every release (tfbench's own command, from its checkout): "
        f"`tfbench measure {next(iter(report.steps))} --releases all`.",
    ]
    return "\n".join(lines) + "\n"
