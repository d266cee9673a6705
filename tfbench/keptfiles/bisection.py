"""A nightly bisection (`tfbench upstream`, `tfbench bisect --nightlies`; tfbench.nightly.run
makes it): results/upstream/<machine>/<slug>/bisect.json, every build it read with its
readings, what it concluded, and what the write-ups beside it (issue.md, repro.py,
plot.png) are rendered from again."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Annotated, Any, TypedDict

from packaging.version import Version

from tfbench import figures, grammar
from tfbench.grammar import Invalid, optional
from tfbench.keptfiles import fields, reading

FORMAT = 1
FOLDER = "upstream"
INSIDE = 3  # upstream/<machine>/<slug>/
RENDERED = ("issue.md", "repro.py", "plot.png")  # beside it, rendered from it, never read
KINDS = ("step", "drift", "none", "unknown")  # what a bisection concludes


def named(name: str) -> bool:
    return name == "bisect.json"


def rendered(folder: str, parts: tuple[str, ...]) -> bool:
    """A write-up beside a bisection (FOLDER/<machine>/<slug>/NAME), rendered from it."""
    return folder == FOLDER and len(parts) == INSIDE and parts[-1] in RENDERED


COUNT = Annotated[int | None, optional(grammar.integer)]


class KeptLimits(TypedDict):
    iterations: COUNT
    warmup: COUNT
    budget_bytes: COUNT
    timeout_s: Annotated[float, grammar.number]


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


BUILD = Annotated[str | None, optional(grammar.nightly)]  # a build of those it covers


def _by_build(check: Callable[[Any, str], Any]) -> Callable[[Any, str], dict[str, Any]]:
    return grammar.mapping_of(grammar.nightly, check)


class Bisection(TypedDict):
    # {scenario, params} (a catalog's) or {file, function}: a name
    target: Annotated[dict[str, Any], fields.target]
    metric: Annotated[str, grammar.one_of(figures.BISECTED)]
    kind: Annotated[str, grammar.one_of(KINDS)]
    builds: Annotated[list[fields.KeptBuild], grammar.each_of(fields.build)]  # oldest first
    # nightly version -> records
    readings: Annotated[dict[str, list[dict[str, Any]]], _by_build(fields.records)]
    broken: Annotated[dict[str, str], _by_build(grammar.text)]  # nightly version -> why
    last_good: BUILD  # of the largest step
    first_bad: BUILD
    # every step, [last good, first bad], largest first (absent before: the one named)
    steps: Annotated[
        list[list[str]], grammar.absent([], grammar.each_of(fields.pair_of(grammar.nightly)))
    ]
    undecided: BUILD
    # time: each pair of builds read in pairs (absent before: none)
    times: Annotated[list[fields.Compared], grammar.absent([], grammar.each_of(fields.compared))]
    compare_url: Annotated[str | None, optional(grammar.compare_url)]
    old: Annotated[str, grammar.release]
    new: Annotated[str, grammar.release]
    releases: Annotated[  # release -> records
        dict[str, list[dict[str, Any]]], grammar.mapping_of(grammar.release, fields.records)
    ]
    dependencies: Annotated[list[str], grammar.each_of(grammar.pin_change)]  # name old -> new
    # nightly version -> name==version
    packages: Annotated[
        dict[str, list[str] | None], _by_build(optional(grammar.each_of(grammar.package)))
    ]
    environment: Annotated[fields.Environment, fields.environment]
    repro: Annotated[dict[str, str], _by_build(grammar.text)]  # version -> what repro.py printed
    limits: Annotated[KeptLimits, grammar.schema(KeptLimits)]
    seconds: Annotated[float, grammar.number]
    # a time point's gate verdicts on each CPU (absent before)
    elsewhere: Annotated[list[Elsewhere], grammar.absent([], grammar.each_of(elsewhere))]


_bisection = grammar.schema(Bisection)


def check(value: Any) -> Bisection:
    """A bisection's every field of its form, the builds it names among those it covers."""
    data = grammar.obj(value, "")
    reading.format_of(data, FORMAT)
    found = _bisection(data, "")
    builds = found["builds"]
    if not builds:
        raise Invalid("builds", "no build")
    for k, (a, b) in enumerate(itertools.pairwise(builds), 1):  # the window, oldest first
        if Version(b["version"]) <= Version(a["version"]):
            raise Invalid(f"builds[{k}]", f"{b['version']!r} is not newer than {a['version']!r}")
    if "steps" not in data:  # kept before steps were: the one it named
        good, bad = found["last_good"], found["first_bad"]
        found["steps"] = [[good, bad]] if good and bad else []
    covered = {b["version"] for b in builds}
    for where, version in _named_builds(found):
        if version not in covered:
            raise Invalid(where, f"{version!r} is no build of the bisection")
    return found


def _named_builds(found: Bisection) -> Iterator[tuple[str, str]]:
    """Each build a field of the bisection names, and where."""
    by_build: dict[str, Mapping[str, Any]] = {
        "readings": found["readings"],
        "broken": found["broken"],
        "packages": found["packages"],
        "repro": found["repro"],
    }
    for key, mapped in by_build.items():
        yield from ((f"{key} key", version) for version in mapped)
    ends = {"last_good": found["last_good"], "first_bad": found["first_bad"]}
    for key, version in {**ends, "undecided": found["undecided"]}.items():
        if version is not None:
            yield key, version
    for k, step in enumerate(found["steps"]):
        yield from ((f"steps[{k}][{j}]", version) for j, version in enumerate(step))
    for k, times in enumerate(found["times"]):
        yield from ((f"times[{k}].{side}", times[side]) for side in ("old", "new"))


def read(path: Path) -> Bisection:
    """A kept bisect.json (reading.KeptFileError: the file and the field)."""
    return reading.read(path, check, 3)  # upstream/<machine>/<slug>/


def write(where: Path, bisection: dict[str, Any]) -> Path:
    return reading.write(where, {reading.KEY: FORMAT, **bisection}, check, sort_keys=True)
