"""A nightly bisection (`tfbench upstream`, `tfbench bisect --nightlies`; tfbench.nightly.run
makes it): results/upstream/<machine>/<slug>/bisect.json, every build it read with its
readings, what it concluded, and what the write-ups beside it (issue.md, repro.py,
plot.png) are rendered from again."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypedDict

from packaging.version import Version

from tfbench import figures, grammar
from tfbench.grammar import Invalid, field, optional
from tfbench.keptfiles import fields, reading

FORMAT = 1
READS: tuple[int, ...] = ()
FOLDER = "upstream"
INSIDE = 3  # upstream/<machine>/<slug>/
RENDERED = ("issue.md", "repro.py", "plot.png")  # beside it, rendered from it, never read
KINDS = ("step", "drift", "none", "unknown")  # what a bisection concludes


def named(name: str) -> bool:
    return name == "bisect.json"


def rendered(folder: str, parts: tuple[str, ...]) -> bool:
    """A write-up beside a bisection (FOLDER/<machine>/<slug>/NAME), rendered from it."""
    return folder == FOLDER and len(parts) == INSIDE and parts[-1] in RENDERED


class Limits(TypedDict):
    iterations: int | None
    warmup: int | None
    budget_bytes: int | None
    timeout_s: float


class Elsewhere(TypedDict):
    """A time point's gate verdict on one CPU."""

    cpu: Annotated[str, grammar.machine_text]  # the CPU a gate read it on, as the report names it
    answer: Annotated[str, grammar.one_of((*fields.ANSWERS[:3], "no row"))]
    ratio: fields.RATIO
    low: fields.RATIO
    high: fields.RATIO


_elsewhere = grammar.schema(Elsewhere)


def elsewhere(value: Any, where: str) -> Elsewhere:
    found = _elsewhere(value, where)
    fields.answered(found, where)
    return found


class Bisection(TypedDict):
    target: dict[str, Any]  # {scenario, params} (a catalog's) or {file, function}: a name
    metric: str
    kind: str
    builds: list[fields.Build]
    readings: dict[str, list[dict[str, Any]]]  # nightly version -> records
    broken: dict[str, str]  # nightly version -> why
    last_good: str | None  # of the largest step
    first_bad: str | None
    steps: list[list[str]]  # every step, [last good, first bad], largest first (absent
    # before: the one named)
    undecided: str | None
    times: list[fields.Compared]  # time: each pair of builds read in pairs (absent before: none)
    compare_url: str | None
    old: str
    new: str
    releases: dict[str, list[dict[str, Any]]]  # release -> records
    dependencies: list[str]  # name old -> new
    packages: dict[str, list[str] | None]  # nightly version -> name==version
    environment: fields.Environment
    repro: dict[str, str]  # nightly version -> what repro.py printed there
    limits: Limits
    seconds: float
    elsewhere: list[Elsewhere]  # a time point's gate verdicts on each CPU (absent before)


def _limits(value: Any, where: str) -> Limits:
    data = grammar.obj(value, where)
    count = optional(grammar.integer)
    return Limits(
        iterations=count(data.get("iterations"), f"{where}.iterations"),
        warmup=count(data.get("warmup"), f"{where}.warmup"),
        budget_bytes=count(data.get("budget_bytes"), f"{where}.budget_bytes"),
        timeout_s=field(data, "timeout_s", grammar.number, where),
    )


def check(value: Any) -> Bisection:
    """A bisection's every field of its form, the builds it names among those it covers."""
    data = grammar.obj(value, "")
    reading.format_of(data, FORMAT)
    builds = field(data, "builds", lambda v, f: grammar.each(v, f, fields.build))
    if not builds:
        raise Invalid("builds", "no build")
    for k, (a, b) in enumerate(itertools.pairwise(builds), 1):  # the window, oldest first
        if Version(b["version"]) <= Version(a["version"]):
            raise Invalid(f"builds[{k}]", f"{b['version']!r} is not newer than {a['version']!r}")
    covered = {b["version"] for b in builds}

    def build(v: Any, where: str) -> str:
        if grammar.nightly(v, where) not in covered:
            raise Invalid(where, f"{v!r} is no build of the bisection")
        return v

    def by_build(check: Callable[[Any, str], Any]) -> Callable[[Any, str], Any]:
        return lambda v, f: grammar.mapping(v, f, build, check)

    def by_release(check: Callable[[Any, str], Any]) -> Callable[[Any, str], Any]:
        return lambda v, f: grammar.mapping(v, f, grammar.release, check)

    return Bisection(
        target=field(data, "target", fields.target),
        metric=field(data, "metric", grammar.one_of(figures.BISECTED)),
        kind=field(data, "kind", grammar.one_of(KINDS)),
        builds=builds,
        readings=field(data, "readings", by_build(fields.records)),
        broken=field(data, "broken", by_build(grammar.text)),
        last_good=field(data, "last_good", optional(build)),
        first_bad=field(data, "first_bad", optional(build)),
        steps=_steps(data, build),
        undecided=optional(build)(data.get("undecided"), "undecided"),
        times=grammar.each(data.get("times", []), "times", lambda v, f: _times(v, f, build)),
        compare_url=field(data, "compare_url", optional(grammar.compare_url)),
        old=field(data, "old", grammar.release),
        new=field(data, "new", grammar.release),
        releases=field(data, "releases", by_release(fields.records)),
        dependencies=field(data, "dependencies", lambda v, f: grammar.each(v, f, _pin_change)),
        packages=field(data, "packages", by_build(optional(_package_list))),
        environment=field(data, "environment", fields.environment),
        repro=field(data, "repro", by_build(grammar.text)),
        limits=field(data, "limits", _limits),
        seconds=field(data, "seconds", grammar.number),
        elsewhere=grammar.each(data.get("elsewhere", []), "elsewhere", elsewhere),
    )


def _steps(data: dict[str, Any], build: Callable[[Any, str], str]) -> list[list[str]]:
    """Every step as [last good, first bad] builds of the bisection, the largest first;
    kept before steps were: the one it named."""
    if "steps" not in data:
        good, bad = data.get("last_good"), data.get("first_bad")
        return [[good, bad]] if good and bad else []

    def step(value: Any, where: str) -> list[str]:
        pair = grammar.each(value, where, build)
        if len(pair) != 2:
            raise Invalid(where, f"{len(pair)} builds where a step has 2")
        return pair

    return grammar.each(data["steps"], "steps", step)


def _times(value: Any, where: str, build: Callable[[Any, str], str]) -> fields.Compared:
    found = fields.compared(value, where)
    build(found["old"], f"{where}.old")
    build(found["new"], f"{where}.new")
    return found


def _pin_change(value: Any, where: str) -> str:
    return grammar.pin_change(value, where)


def _package_list(value: Any, where: str) -> list[str]:
    return grammar.each(value, where, grammar.package)


def read(path: Path) -> Bisection:
    """A kept bisect.json (reading.KeptFileError: the file and the field)."""
    return reading.read(path, check, 3)  # upstream/<machine>/<slug>/


def write(where: Path, bisection: dict[str, Any]) -> Path:
    return reading.write(where, {reading.KEY: FORMAT, **bisection}, check, sort_keys=True)
