"""Every file tfbench keeps beside asv's results, read and checked in one place: the nightly
bisection (bisect.json), the kept gate run, the probes file, the explaining run, the
packages record and asv's machine.json (docs/formats.md).

Kept files may come from another machine (`tfbench results merge`, a CI job, a pull
request): a reader gets a typed record whose every field was checked against its form
(tfbench.grammar) and nothing else of the file. A file that is not of its form raises
KeptFileError naming the file and the field; no reader sees half of one.
"""

from __future__ import annotations

import datetime
import itertools
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypedDict

from packaging.version import Version

from tfbench import cpu, figures, formats, grammar, scenarios
from tfbench.grammar import Invalid, field, optional
from tfbench.history.envsync import record_name
from tfbench.measure.record import FOOTPRINT, STATUSES

MAX_BYTES = 64 << 20  # no kept file comes near: the largest bisect.json is 0.2 MiB
KINDS = ("step", "drift", "none", "unknown")  # what a nightly bisection concludes
ANSWERS = ("different", "same", "unknown", "skipped")  # two builds' times compared
DIRECTIONS = ("worse", "better", "rss only")  # of a gate row (tfbench.gate.rules)


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


def _read(path: Path, check: Callable[[Any], Any], inside: int = 2) -> Any:
    data = load(path, inside)
    try:
        return check(data)
    except Invalid as e:
        raise KeptFileError(path, str(e)) from None


def _format(data: dict[str, Any], expected: int, *older: int) -> int:
    """The file's format: `expected`, or one of the `older` this tfbench still reads."""
    found = data.get(formats.KEY, 1)  # kept before formats were numbered: format 1
    if found != expected and found not in older:
        raise Invalid(formats.KEY, f"{found!r}; this tfbench reads format {expected}")
    return found


# -- the CPU a file's figures were read on (tfbench.cpu) ----------------------------------

_CACHE_LEVELS = ("L1d", "L1i", "L2", "L3", "L4")


def _count(most: int, least: int = 0) -> Callable[[Any, str], int]:
    def check(value: Any, where: str) -> int:
        found = grammar.integer(value, where)
        if not least <= found <= most:
            raise Invalid(where, f"{found} is out of range ({least} to {most})")
        return found

    return check


def cpu_identity(value: Any, where: str = "cpu") -> cpu.Identity:
    """A CPU identity as kept: every field of its form, and its id the one its fields
    derive (an id cannot name another CPU than its fields describe)."""
    data = grammar.obj(value, where)
    found: dict[str, Any] = {
        "vendor": field(data, "vendor", grammar.machine_text, where),
        "model_name": field(data, "model_name", grammar.machine_text, where),
        # -1: the kernel did not say
        **{k: field(data, k, _count(1 << 16, -1), where) for k in ("family", "model", "stepping")},
        "cpus": field(data, "cpus", _count(1 << 16), where),
        "isa": field(data, "isa", lambda v, f: grammar.each(v, f, grammar.one_of(cpu.ISA)), where),
        "caches": field(
            data,
            "caches",
            lambda v, f: grammar.mapping(v, f, grammar.one_of(_CACHE_LEVELS), _count(1 << 40)),
            where,
        ),
    }
    kept = field(data, "id", grammar.matching(cpu.ID), where)
    if kept != cpu.derived_id(found):
        raise Invalid(f"{where}.id", f"{kept!r} is not the id of its fields")
    return cpu.Identity(id=kept, **found)  # type: ignore[typeddict-item]


def cpus(value: Any, where: str = "cpus") -> dict[str, cpu.Identity]:
    """CPU id -> its identity, each id the one its identity derives."""
    found = grammar.mapping(value, where, grammar.matching(cpu.ID), cpu_identity)
    for key, identity in found.items():
        if identity["id"] != key:
            raise Invalid(f"{where}[{key!r}]", f"holds the identity of {identity['id']!r}")
    return found


def _known(named: Any, where: str) -> Callable[[Any, str], str]:
    """A CPU id that the file's `where` names."""

    def check(value: Any, field_: str) -> str:
        if not isinstance(named, dict) or value not in named:
            raise Invalid(field_, f"{value!r} is no CPU of {where}")
        return value

    return check


def cpu_named(value: Any, where: str = "cpu") -> cpu.Identity | str:
    """A record's CPU: an identity, or (kept before identities) the model name alone."""
    return grammar.text(value, where) if isinstance(value, str) else cpu_identity(value, where)


# -- records: what a measurement kept ------------------------------------------------------

_TEXTS = ("error", "heap_note", "method", "leak_basis", "tf_version", "release")
# every figure's field (tfbench.figures) and a measurement's own counts; a footprint's RSS
# and heap are a number, a step's a list (after each iteration)
_SERIES = ("rss_bytes", "heap_bytes")
_NUMBERS = tuple(
    {f.field for f in figures.FIGURES if f.field and f.kind != figures.VERDICT} - set(_SERIES)
)
# a measurement's own counts, sizes and times: none below 0
_COUNTS = (
    *("iterations", "warmup", "warmup_run", "repeats", "measured", "budget_bytes"),
    *("import_seconds", "garbage_objects_per_iteration"),
)
_VERDICTS = ("leak", "rss_leak")
_INTERVALS = tuple(f.interval for f in figures.FIGURES if f.interval)


def _not_negative(value: Any, where: str) -> float:
    found = grammar.number(value, where)
    if found < 0:
        raise Invalid(where, f"{found!r} is below 0")
    return found


def _interval(value: Any, where: str) -> list[float]:
    found = grammar.each(value, where, grammar.number)
    if len(found) != 2:
        raise Invalid(where, f"{len(found)} numbers where an interval has 2")
    return found


def _series(value: Any, where: str) -> float | list[float]:
    if isinstance(value, list):
        return grammar.each(value, where, grammar.number)
    return grammar.number(value, where)


def collector(value: Any, where: str) -> dict[str, Any]:
    """Python's collector as a window found it (tfbench.measure.collector.Collector); a
    figure it could not read is null."""
    data = grammar.obj(value, where)
    found: dict[str, Any] = {
        "python": field(data, "python", grammar.matching(grammar.PYTHON_VERSION), where),
        "thresholds": grammar.each(data.get("thresholds"), f"{where}.thresholds", grammar.integer),
        "tracked": field(data, "tracked", _not_negative, where),
        "tail_calls": field(data, "tail_calls", _not_negative, where),
    }
    for name in (
        *("young_every", "young_pile_bytes", "promoted_per_call", "old_garbage_per_call"),
        *("full_every", "pile_bytes"),
    ):
        found[name] = optional(_not_negative)(data.get(name), f"{where}.{name}")
    return found


def record(value: Any, where: str) -> dict[str, Any]:
    """A measured record as kept (tfbench.measure.record): its status, figures, verdicts,
    intervals, counters and reasons, each of its form; nothing else is kept from it."""
    data = grammar.obj(value, where)
    checks: dict[str, Callable[[Any, str], Any]] = {
        "status": grammar.one_of(STATUSES),
        **dict.fromkeys(_TEXTS, optional(grammar.text)),
        **dict.fromkeys(_NUMBERS, optional(grammar.number)),
        **dict.fromkeys(_COUNTS, optional(_not_negative)),
        **dict.fromkeys(_SERIES, optional(_series)),
        **dict.fromkeys(_VERDICTS, optional(grammar.boolean)),
        **dict.fromkeys(_INTERVALS, optional(_interval)),
        "counters": lambda v, f: grammar.mapping(v, f, grammar.identifier, grammar.number),
        "collector": optional(collector),
        "params": lambda v, f: grammar.mapping(v, f, grammar.identifier, grammar.param_value),
        "device": grammar.device,
    }
    return {k: check(data[k], f"{where}.{k}") for k, check in checks.items() if k in data}


# -- bisect.json: a nightly bisection ------------------------------------------------------


class Build(TypedDict):
    version: str
    uploaded: str
    git_version: str | None


class Environment(TypedDict):
    os: str
    python: str
    cpu: cpu.Identity | str  # the model name alone in a file kept before identities


class Limits(TypedDict):
    iterations: int | None
    warmup: int | None
    budget_bytes: int | None
    timeout_s: float


class Compared(TypedDict):
    old: str
    new: str
    answer: str
    ratio: float | None  # new over old, and its interval
    low: float | None
    high: float | None
    pairs: int
    margin: float
    level: float  # of the interval
    skipped: str | None


class Elsewhere(TypedDict):
    cpu: str  # the CPU a gate read it on, as the report names it
    answer: str
    ratio: float | None
    low: float | None
    high: float | None


def _elsewhere(value: Any, where: str) -> Elsewhere:
    data = grammar.obj(value, where)
    answer, ratio, low, high = _answered(data, where, (*ANSWERS[:3], "no row"))
    return Elsewhere(
        cpu=field(data, "cpu", grammar.machine_text, where),
        answer=answer,
        ratio=ratio,
        low=low,
        high=high,
    )


class Bisection(TypedDict):
    target: dict[str, Any]  # {scenario, params} (a catalog's) or {file, function}: a name
    metric: str
    kind: str
    builds: list[Build]
    readings: dict[str, list[dict[str, Any]]]  # nightly version -> records
    broken: dict[str, str]  # nightly version -> why
    last_good: str | None
    first_bad: str | None
    undecided: str | None
    times: list[Compared]  # time: each pair of builds read in pairs (absent before: none)
    compare_url: str | None
    old: str
    new: str
    releases: dict[str, list[dict[str, Any]]]  # release -> records
    dependencies: list[str]  # name old -> new
    packages: dict[str, list[str] | None]  # nightly version -> name==version
    environment: Environment
    repro: dict[str, str]  # nightly version -> what repro.py printed there
    limits: Limits
    seconds: float
    elsewhere: list[Elsewhere]  # a time point's gate verdicts on each CPU (absent before)


def target(value: Any, where: str = "target") -> dict[str, Any]:
    """A target as kept: a catalog scenario and params it takes (footprint: its device), or
    a user's function by its file's name alone (never a path to read)."""
    data = grammar.obj(value, where)
    if "scenario" in data:
        sid = field(data, "scenario", grammar.scenario, where)
        params = grammar.mapping(
            data.get("params", {}), f"{where}.params", grammar.identifier, grammar.param_value
        )
        if sid == FOOTPRINT:
            if set(params) - {"device"}:
                raise Invalid(f"{where}.params", "footprint takes one param, device")
            grammar.device(params.get("device", "CPU"), f"{where}.params.device")
            return {"scenario": sid, "params": params}
        try:
            scenarios.get(sid).bind(params)
        except scenarios.ParamError as e:
            raise Invalid(where, str(e)) from None
        return {"scenario": sid, "params": params}
    file = Path(field(data, "file", grammar.text, where)).name
    return {
        "file": grammar.file_name(file, f"{where}.file"),
        "function": field(data, "function", grammar.identifier, where),
    }


def _build(value: Any, where: str) -> Build:
    data = grammar.obj(value, where)
    return Build(
        version=field(data, "version", grammar.nightly, where),
        uploaded=field(data, "uploaded", grammar.uploaded, where),
        git_version=optional(grammar.git_version)(data.get("git_version"), f"{where}.git_version"),
    )


def _records(value: Any, where: str) -> list[dict[str, Any]]:
    return grammar.each(value, where, record)


def _environment(value: Any, where: str) -> Environment:
    data = grammar.obj(value, where)
    return Environment(
        os=field(data, "os", grammar.text, where),
        python=field(data, "python", grammar.python_version, where),
        cpu=field(data, "cpu", cpu_named, where),
    )


def _limits(value: Any, where: str) -> Limits:
    data = grammar.obj(value, where)
    count = optional(grammar.integer)
    return Limits(
        iterations=count(data.get("iterations"), f"{where}.iterations"),
        warmup=count(data.get("warmup"), f"{where}.warmup"),
        budget_bytes=count(data.get("budget_bytes"), f"{where}.budget_bytes"),
        timeout_s=field(data, "timeout_s", grammar.number, where),
    )


def _compared(value: Any, where: str, build: Callable[[Any, str], str]) -> Compared:
    data = grammar.obj(value, where)
    answer, ratio, low, high = _answered(data, where, ANSWERS)
    return Compared(
        old=field(data, "old", build, where),
        new=field(data, "new", build, where),
        answer=answer,
        ratio=ratio,
        low=low,
        high=high,
        pairs=field(data, "pairs", _count(1 << 20), where),
        margin=field(data, "margin", grammar.number, where),
        level=_level(data, where),
        skipped=optional(grammar.text)(data.get("skipped"), f"{where}.skipped"),
    )


def check_bisection(value: Any) -> Bisection:
    """A bisection's every field of its form, the builds it names among those it covers."""
    data = grammar.obj(value, "")
    _format(data, formats.BISECTION)
    builds = field(data, "builds", lambda v, f: grammar.each(v, f, _build))
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
        target=field(data, "target", target),
        metric=field(data, "metric", grammar.one_of(figures.BISECTED)),
        kind=field(data, "kind", grammar.one_of(KINDS)),
        builds=builds,
        readings=field(data, "readings", by_build(_records)),
        broken=field(data, "broken", by_build(grammar.text)),
        last_good=field(data, "last_good", optional(build)),
        first_bad=field(data, "first_bad", optional(build)),
        undecided=optional(build)(data.get("undecided"), "undecided"),
        times=grammar.each(data.get("times", []), "times", lambda v, f: _compared(v, f, build)),
        compare_url=field(data, "compare_url", optional(grammar.compare_url)),
        old=field(data, "old", grammar.release),
        new=field(data, "new", grammar.release),
        releases=field(data, "releases", by_release(_records)),
        dependencies=field(data, "dependencies", lambda v, f: grammar.each(v, f, _pin_change)),
        packages=field(data, "packages", by_build(optional(_package_list))),
        environment=field(data, "environment", _environment),
        repro=field(data, "repro", by_build(grammar.text)),
        limits=field(data, "limits", _limits),
        seconds=field(data, "seconds", grammar.number),
        elsewhere=grammar.each(data.get("elsewhere", []), "elsewhere", _elsewhere),
    )


def _pin_change(value: Any, where: str) -> str:
    return grammar.pin_change(value, where)


def _package_list(value: Any, where: str) -> list[str]:
    return grammar.each(value, where, grammar.package)


def bisection(path: Path) -> Bisection:
    """A kept bisect.json (KeptFileError: the file and the field)."""
    return _read(path, check_bisection, 3)  # upstream/<machine>/<slug>/


# -- results/nightly/<machine>/<version>.json: a build the nightly watch read -------------


class NightlyBuild(TypedDict):
    build: Build
    before: str | None  # the build published before it on the index
    readings: dict[str, list[dict[str, Any]]]  # sentinel -> records
    broken: str | None  # why the build could not be installed or run
    times: list[Compared]  # the timed sentinel against the build read before, in one run
    environment: Environment


def check_nightly_build(value: Any) -> NightlyBuild:
    data = grammar.obj(value, "")
    _format(data, formats.NIGHTLY)
    build = field(data, "build", _build)
    times = grammar.each(
        data.get("times", []), "times", lambda v, f: _compared(v, f, grammar.nightly)
    )
    for k, t in enumerate(times):
        if t["new"] != build["version"]:
            raise Invalid(f"times[{k}].new", f"{t['new']!r} is not the build read")
    before = optional(grammar.nightly)(data.get("before"), "before")
    if before is not None and Version(before) >= Version(build["version"]):
        # a build points back to an older one only: the walks over neighbours end
        raise Invalid("before", f"{before!r} is not older than {build['version']!r}")
    return NightlyBuild(
        build=build,
        before=before,
        readings=field(
            data, "readings", lambda v, f: grammar.mapping(v, f, grammar.identifier, _records)
        ),
        broken=optional(grammar.text)(data.get("broken"), "broken"),
        times=times,
        environment=field(data, "environment", _environment),
    )


def nightly_build(path: Path) -> NightlyBuild:
    """A build the nightly watch read (results/nightly/<machine>/<version>.json)."""
    return _read(path, check_nightly_build)


# -- the kept gate run ---------------------------------------------------------------------


class GateRow(TypedDict):
    benchmark: str
    params: dict[str, Any]  # each value as asv's param (a plain string, a number)
    metric: str
    direction: str
    before: float | None
    after: float | None
    unit: str
    evidence: dict[str, Any]  # which rule, on what (tfbench.gate.rules.told)


class GateShift(TypedDict):
    metric: str
    ratio: bool
    amount: float
    followed: int
    points: int
    scope: str | None
    rows: list[GateRow]


class GateRun(TypedDict):
    time: dict[str, Any]  # what the time reader did (tfbench.pairs.timing.summary)
    rows: list[GateRow]
    shifts: list[GateShift]
    cpus: dict[str, cpu.Identity]  # id -> the CPU that read some of it (none: kept before)
    onednn: dict[str, dict[str, str | None]]  # CPU id -> side (old, new) -> its oneDNN's ISA


def _pair_of(check: Callable[[Any, str], Any]) -> Callable[[Any, str], list[Any]]:
    def pair(value: Any, where: str) -> list[Any]:
        found = grammar.each(value, where, check)
        if len(found) != 2:
            raise Invalid(where, f"{len(found)} values where a pair (before, after) is")
        return found

    return pair


# a row's evidence: rule -> its fields' checks (tfbench.gate.rules writes and tells them)
EVIDENCE: dict[str, dict[str, Callable[[Any, str], Any]]] = {
    "apart": {
        "figure": grammar.text,
        "before": _pair_of(grammar.number),
        "after": _pair_of(grammar.number),
        "floor": grammar.number,
        "readings": _pair_of(grammar.integer),
    },
    "flip": {
        "before": grammar.boolean,
        "after": grammar.boolean,
        "readings": _pair_of(grammar.integer),
    },
    "status": {"side": grammar.one_of(("before", "after")), "why": grammar.text},
    "time": {
        **dict.fromkeys(("ratio", "low", "high", "margin", "before", "after"), grammar.number),
        "pairs": grammar.integer,
    },
}
# rss only; a shift's; a time row's CPU (its id: kept before 2026-12-02 without)
EVIDENCE_EXTRA = {
    "heap": grammar.identifier,
    "less": grammar.text,
    "cpu": grammar.matching(cpu.ID),
}


def _level(data: dict[str, Any], where: str) -> float:
    """A time verdict's level: 99% where it was kept before the verdict named its level."""
    path = f"{where}.level" if where else "level"
    level = optional(grammar.number)(data.get("level"), path)
    if level is None:
        return 0.99
    if not 0 < level < 1:
        raise Invalid(path, f"{level!r} is no level of an interval")
    return level


def _evidence(value: Any, where: str) -> dict[str, Any]:
    data = grammar.obj(value, where)
    rule = field(data, "rule", grammar.one_of(tuple(EVIDENCE)), where)
    found: dict[str, Any] = {"rule": rule}
    for name, check in EVIDENCE[rule].items():
        found[name] = field(data, name, check, where)
    if rule == "time":  # a row: a change decided, its interval apart from no change
        found["level"] = _level(data, where)
        _estimate(data, where)
        if data["low"] <= 1 <= data["high"]:
            raise Invalid(f"{where}.ratio", "a time row whose interval holds no change")
        found["pairs"] = _count(1 << 20, 1)(data["pairs"], f"{where}.pairs")
    for name, check in EVIDENCE_EXTRA.items():
        if name in data:
            found[name] = check(data[name], f"{where}.{name}")
    return found


def _time_summary(value: Any, where: str) -> dict[str, Any]:
    data = grammar.obj(value, where)
    return {
        "design": field(
            data,
            "design",
            grammar.one_of(("interleaved", "turns", "duet", "duet-unpinned")),
            where,
        ),
        "margin": field(data, "margin", grammar.number, where),
        "level": _level(data, where),
        "pairs": field(data, "pairs", _pair_of(grammar.integer), where),
        "seconds": field(data, "seconds", grammar.number, where),
        **{k: field(data, k, grammar.integer, where) for k in ("skipped", "different", "same")},
        "unknown": field(data, "unknown", lambda v, f: grammar.each(v, f, grammar.point), where),
        # absent in runs kept before them
        "unseen": optional(_pair_of(grammar.number))(data.get("unseen"), f"{where}.unseen"),
        "watch": optional(grammar.number)(data.get("watch"), f"{where}.watch"),
        "apart": optional(grammar.boolean)(data.get("apart"), f"{where}.apart"),
        "points": grammar.each(data.get("points", []), f"{where}.points", _time_point),
    }


class TimePoint(TypedDict):
    point: str  # benchmark(asv's values)
    cpu: str | None  # the id of the CPU its pairs were read on (None: kept before it)
    answer: str
    ratio: float | None  # new over old, and its interval: None under the pairs that give one
    low: float | None
    high: float | None
    pairs: int


def _positive(value: Any, where: str) -> float:
    found = grammar.number(value, where)
    if found <= 0:
        raise Invalid(where, f"{found!r} is no ratio (not above 0)")
    return found


def _estimate(data: dict[str, Any], where: str) -> tuple[Any, Any, Any]:
    """A ratio and its interval (new over old): all three above 0, the ratio within the
    interval, or none of the three."""
    found = [optional(_positive)(data.get(k), f"{where}.{k}") for k in ("ratio", "low", "high")]
    ratio, low, high = found
    if any(f is None for f in found) and any(f is not None for f in found):
        raise Invalid(where, "an estimate without its interval, or an interval without it")
    if ratio is not None and not low <= ratio <= high:
        raise Invalid(f"{where}.ratio", f"{ratio!r} lies outside its interval")
    return ratio, low, high


def _answered(data: dict[str, Any], where: str, answers: tuple[str, ...]) -> tuple[Any, ...]:
    """An answer among `answers` and its estimate (_estimate's); `different` only with an
    interval that holds no change (the reader's rule: beyond the margin on one side)."""
    answer = field(data, "answer", grammar.one_of(answers), where)
    ratio, low, high = _estimate(data, where)
    if answer == "different" and (ratio is None or low <= 1 <= high):
        raise Invalid(f"{where}.answer", "different, but no interval apart from no change")
    return answer, ratio, low, high


def _time_point(value: Any, where: str) -> TimePoint:
    """A gate's time point (tfbench.pairs.timing.summary): an estimate within its interval,
    or none of the three."""
    data = grammar.obj(value, where)
    answer, ratio, low, high = _answered(data, where, ANSWERS[:3])
    return TimePoint(
        point=field(data, "point", grammar.point, where),
        cpu=optional(grammar.matching(cpu.ID))(data.get("cpu"), f"{where}.cpu"),
        answer=answer,
        ratio=ratio,
        low=low,
        high=high,
        pairs=field(data, "pairs", _count(1 << 20), where),
    )


def _row(value: Any, where: str) -> GateRow:
    data = grammar.obj(value, where)
    found = GateRow(
        benchmark=field(data, "benchmark", grammar.dotted, where),
        params=field(
            data,
            "params",
            lambda v, f: grammar.mapping(v, f, grammar.identifier, grammar.param_value),
            where,
        ),
        metric=field(data, "metric", grammar.identifier, where),
        direction=field(data, "direction", grammar.one_of(DIRECTIONS), where),
        before=field(data, "before", optional(grammar.number), where),
        after=field(data, "after", optional(grammar.number), where),
        unit=field(data, "unit", grammar.text, where),
        evidence=field(data, "evidence", _evidence, where),
    )
    evidence = found["evidence"]
    if evidence["rule"] == "time" and (evidence["ratio"] > 1) != (found["direction"] == "worse"):
        raise Invalid(f"{where}.direction", f"{found['direction']} at x{evidence['ratio']:.3f}")
    return found


def _rows(value: Any, where: str) -> list[GateRow]:
    return grammar.each(value, where, _row)


def _shift(value: Any, where: str) -> GateShift:
    data = grammar.obj(value, where)
    return GateShift(
        metric=field(data, "metric", grammar.identifier, where),
        ratio=field(data, "ratio", grammar.boolean, where),
        amount=field(data, "amount", grammar.number, where),
        followed=field(data, "followed", grammar.integer, where),
        points=field(data, "points", grammar.integer, where),
        scope=optional(grammar.dotted)(data.get("scope"), f"{where}.scope"),
        rows=_rows(data.get("rows", []), f"{where}.rows"),
    )


def check_gate_run(value: Any) -> GateRun:
    data = grammar.obj(value, "")
    _format(data, formats.GATE_RUN)
    found = GateRun(
        time=field(data, "time", _time_summary),
        rows=field(data, "rows", _rows),
        shifts=grammar.each(data.get("shifts", []), "shifts", _shift),
        cpus=cpus(data.get("cpus", {}), "cpus"),
        onednn=grammar.mapping(
            data.get("onednn", {}),
            "onednn",
            _known(data.get("cpus", {}), "cpus"),
            lambda v, f: grammar.mapping(
                v, f, grammar.one_of(("old", "new")), optional(grammar.machine_text)
            ),
        ),
    )
    for k, point in enumerate(found["time"]["points"]):
        if point["cpu"] is not None:  # a point kept before CPUs were names none
            _known(found["cpus"], "cpus")(point["cpu"], f"time.points[{k}].cpu")
    return found


def gate_run(path: Path) -> GateRun:
    """A kept gate run (results/gate/<machine>/<old>-<new>.json)."""
    return _read(path, check_gate_run)


# -- the time reader's calibration on one CPU (tfbench.gate.calibration) --------------------


class Calibration(TypedDict):
    kind: str  # aa, plant
    plant: float
    pair: list[str]
    date: str
    cpu: cpu.Identity
    points: int  # time points read on it
    worse: int  # time rows: an A/A's false; a plant's found
    better: int
    memory_rows: int  # of the whole gate: an A/A's false
    seconds: float  # the gate's


def check_calibration(value: Any) -> Calibration:
    data = grammar.obj(value, "")
    _format(data, formats.CALIBRATION)
    kind = field(data, "kind", grammar.one_of(("aa", "plant")))
    plant = field(data, "plant", grammar.number)
    if (kind == "plant") != (0 < plant < 1):
        raise Invalid("plant", f"{plant!r} for a calibration of kind {kind}")
    date = field(data, "date", grammar.matching(re.compile(r"\d{4}-\d{2}-\d{2}")))
    try:
        datetime.date.fromisoformat(date)
    except ValueError:
        raise Invalid("date", f"{date!r} is no day") from None
    counts = {k: field(data, k, _count(1 << 20)) for k in ("points", "worse", "better")}
    return Calibration(
        kind=kind,
        plant=plant,
        pair=field(data, "pair", _pair_of(grammar.tag)),
        date=date,
        cpu=field(data, "cpu", cpu_identity),
        points=counts["points"],
        worse=counts["worse"],
        better=counts["better"],
        memory_rows=field(data, "memory_rows", _count(1 << 20)),
        seconds=field(data, "seconds", _positive),
    )


def calibration(path: Path) -> Calibration:
    """A calibration of the time reader on one CPU (results/calibration/<id>/<name>.json),
    its folder the id of the CPU it holds."""
    found = _read(path, check_calibration)
    if found["cpu"]["id"] != path.parent.name:
        raise KeptFileError(path, f"cpu: {found['cpu']['id']!r}, not its folder's")
    return found


# -- a shard of a gate (tfbench.gate.shards) ------------------------------------------------

ShardPoint = tuple[str, tuple[str, ...]]  # (benchmark, asv's values)


class GateShard(TypedDict):
    pair: list[str]  # old, new: tags
    shard: list[int]  # I, N
    plant: float
    reader: dict[str, Any]  # how the time reader read (tfbench.pairs.timing.Reader, its level)
    seconds: float
    units: list[tuple[str, str, tuple[str, ...]]]  # its share (tfbench.gate.shards.Unit)
    cpus: dict[str, cpu.Identity]  # the one CPU that read it
    onednn: dict[str, dict[str, str | None]]
    before: list[tuple[ShardPoint, list[list[float]], list[str]]]  # point, runs, why missing
    after: list[tuple[ShardPoint, list[list[float]], list[str]]]
    times: list[ShardTime]


def _values(value: Any, where: str) -> tuple[str, ...]:
    return tuple(grammar.each(value, where, grammar.literal))


def _readings(value: Any, where: str) -> tuple[ShardPoint, list[list[float]], list[str]]:
    data = grammar.array(value, where)
    if len(data) != 4:
        raise Invalid(where, "not [benchmark, values, runs, missing]")
    runs = grammar.each(data[2], f"{where}[2]", lambda v, f: grammar.each(v, f, grammar.number))
    missing = grammar.each(data[3], f"{where}[3]", grammar.text)
    return (grammar.dotted(data[0], f"{where}[0]"), _values(data[1], f"{where}[1]")), runs, missing


ShardTime = tuple[ShardPoint, list[float], float | None, str | None]  # logs, before, why


def _shard_time(value: Any, where: str) -> ShardTime:
    data = grammar.array(value, where)
    if len(data) != 3:
        raise Invalid(where, "not [benchmark, values, pairs]")
    read = grammar.obj(data[2], f"{where}[2]")
    logs = field(read, "logs", lambda v, f: grammar.each(v, f, grammar.number), f"{where}[2]")
    before = optional(_positive)(read.get("before"), f"{where}[2].before")
    skipped = optional(grammar.text)(read.get("skipped"), f"{where}[2].skipped")
    point = (grammar.dotted(data[0], f"{where}[0]"), _values(data[1], f"{where}[1]"))
    return point, logs, before, skipped


def _unit(value: Any, where: str) -> tuple[str, str, tuple[str, ...]]:
    data = grammar.array(value, where)
    if len(data) != 3:
        raise Invalid(where, "not [kind, name, values]")
    kind = grammar.one_of(("memory", "time"))(data[0], f"{where}[0]")
    return kind, grammar.dotted(data[1], f"{where}[1]"), _values(data[2], f"{where}[2]")


_READER = {
    "design": grammar.one_of(("interleaved", "turns", "duet", "duet-unpinned")),
    **dict.fromkeys(("margin", "seconds", "budget_s", "watch", "level"), _positive),
    **dict.fromkeys(("first", "most"), _count(1 << 10, 1)),
    "apart": grammar.boolean,
}


def check_gate_shard(value: Any) -> GateShard:
    """A shard's every field of its form; read on one CPU, its oneDNN record that CPU's."""
    data = grammar.obj(value, "")
    _format(data, formats.GATE_SHARD)
    pair = field(data, "pair", _pair_of(grammar.tag))
    shard = field(data, "shard", _pair_of(_count(64, 1)))
    if shard[0] > shard[1]:
        raise Invalid("shard", f"{shard[0]} of {shard[1]}")
    plant = field(data, "plant", grammar.number)
    if not 0 <= plant < 1:
        raise Invalid("plant", f"{plant!r} is no share of a step's work")
    reader = field(data, "reader", grammar.obj)
    read_on = field(data, "cpus", cpus)
    if len(read_on) != 1:
        raise Invalid("cpus", f"{len(read_on)} CPUs: a shard is read on one")
    sides = field(data, "sides", grammar.obj)
    return GateShard(
        pair=pair,
        shard=shard,
        plant=plant,
        reader={k: field(reader, k, check, "reader") for k, check in _READER.items()},
        seconds=field(data, "seconds", grammar.number),
        units=field(data, "units", lambda v, f: grammar.each(v, f, _unit)),
        cpus=read_on,
        onednn=grammar.mapping(
            data.get("onednn", {}),
            "onednn",
            _known(read_on, "cpus"),
            lambda v, f: grammar.mapping(
                v, f, grammar.one_of(("old", "new")), optional(grammar.machine_text)
            ),
        ),
        before=field(sides, "before", lambda v, f: grammar.each(v, f, _readings), "sides"),
        after=field(sides, "after", lambda v, f: grammar.each(v, f, _readings), "sides"),
        times=field(data, "times", lambda v, f: grammar.each(v, f, _shard_time)),
    )


def gate_shard(path: Path) -> GateShard:
    """A kept shard of a gate (results/gate/<machine>/<old>-<new>.shard-I-of-N.json)."""
    return _read(path, check_gate_shard)


# -- a release chained onto a history (tfbench.publish.chain) --------------------------------


class ChainPoint(TimePoint):
    before: float  # the history's figure for the release before
    value: float  # it, moved by the pairs' estimate
    spread: list[float]  # the chain's interval as factors of `value`, since the history read


class ChainLink(TypedDict):
    release: str
    before: str
    env: str
    gate: str  # the machine whose kept gate run read the pairs
    raw: str  # the machine that read the release's figures
    cpus: dict[str, cpu.Identity]  # the CPUs its pairs were read on (each point names its)
    links: int  # since the history last read a release itself
    points: list[ChainPoint]


def _chain_point(value: Any, where: str) -> ChainPoint:
    point = _time_point(value, where)
    if point["ratio"] is None:
        raise Invalid(f"{where}.ratio", "missing: a chained point moves by its estimate")
    if point["cpu"] is None:
        raise Invalid(f"{where}.cpu", "missing: a chained point names the CPU of its pairs")
    data = grammar.obj(value, where)
    found = ChainPoint(
        **point,
        before=field(data, "before", _positive, where),
        value=field(data, "value", _positive, where),
        spread=field(data, "spread", _pair_of(_positive), where),
    )
    low, high = found["spread"]
    if not low <= 1 <= high:
        raise Invalid(f"{where}.spread", f"{found['spread']!r} does not hold the estimate")
    return found


def check_chain_link(value: Any) -> ChainLink:
    data = grammar.obj(value, "")
    _format(data, formats.CHAIN)
    found = ChainLink(
        release=field(data, "release", grammar.tag),
        before=field(data, "before", grammar.tag),
        env=field(data, "env", grammar.matching(grammar.ENVIRONMENT)),
        gate=field(data, "gate", grammar.machine),
        raw=field(data, "raw", grammar.machine),
        cpus=field(data, "cpus", cpus),
        links=field(data, "links", _count(1 << 20)),
        points=field(data, "points", lambda v, f: grammar.each(v, f, _chain_point)),
    )
    for k, point in enumerate(found["points"]):
        _known(found["cpus"], "cpus")(point["cpu"], f"points[{k}].cpu")
    return found


def chain_link(path: Path) -> ChainLink:
    """A release chained onto a history (results/chain/<history>/<commit>-<env>.json)."""
    return _read(path, check_chain_link)


# -- the probes file -----------------------------------------------------------------------

Probes = dict[str, dict[str, list[dict[str, Any]]]]  # Costs class -> grid key -> records


def check_probes(value: Any) -> Probes:
    """Every Costs class's grid; its CPU checked (format 2; format 1 names none)."""
    data = grammar.obj(value, "")
    if _format(data, formats.PROBES, 1) != 1:
        field(data, "cpu", cpu_identity)
    found: Probes = {}
    for costs, points in data.items():
        if costs in (formats.KEY, "cpu"):
            continue
        grammar.identifier(costs, "Costs class")
        found[costs] = grammar.mapping(points, costs, grammar.grid_key, _records)
    return found


def probes(path: Path) -> Probes:
    """A probes file (results/probes/<machine>/<commit>-<env>-<kind>.json)."""
    return _read(path, check_probes)


def probes_beside(
    results_dir: Path, machine: str, commit: str, env_name: str, problems: list[str] | None = None
) -> Probes:
    """The probe repeats kept beside one results file of `machine` (tfbench.probes.keep); a
    file that is not of its form is left out and named in `problems`."""
    kept: Probes = {}
    pattern = f"{record_name(commit, env_name, '*')}.json"
    for found in sorted((results_dir / "probes" / machine).glob(pattern)):
        try:
            kept.update(probes(found))
        except KeptFileError as e:
            if problems is not None:
                problems.append(str(e))
    return kept


# -- the explaining run --------------------------------------------------------------------


class Explained(TypedDict):
    release: str
    points: dict[str, str]  # point -> its one-line conclusion, or why there is none
    cpu: cpu.Identity | None  # where it was read (None: kept before 2026-12-02)


def _explanation(value: Any, where: str) -> str:
    data = grammar.obj(value, where)
    conclusion = optional(grammar.text)(data.get("conclusion"), f"{where}.conclusion")
    if conclusion:
        return conclusion
    status = field(data, "status", grammar.one_of(STATUSES), where)
    error = optional(grammar.text)(data.get("error"), f"{where}.error")
    return f"{status}: {error}"


def check_explained(value: Any) -> Explained:
    data = grammar.obj(value, "")
    _format(data, formats.EXPLAINED)
    return Explained(
        release=field(data, "release", grammar.tag),
        points=field(
            data, "points", lambda v, f: grammar.mapping(v, f, grammar.point, _explanation)
        ),
        cpu=optional(cpu_identity)(data.get("cpu"), "cpu"),
    )


def explained(path: Path) -> Explained:
    """A kept explaining run (results/explain/<machine>/<tag>.json)."""
    return _read(path, check_explained)


# -- asv's machine.json and the packages record ---------------------------------------------

MACHINE_FIELDS = ("arch", "cpu", "machine", "num_cpu", "os", "ram", "version")


def check_machine(value: Any) -> dict[str, Any]:
    """asv's fields only, each plain text: asv's site shows them as HTML."""
    data = grammar.obj(value, "")
    found = {"machine": field(data, "machine", grammar.machine)}
    for name in ("arch", "cpu", "num_cpu", "os", "ram"):
        found[name] = optional(grammar.machine_text)(data.get(name), name)
    found["version"] = optional(grammar.integer)(data.get("version"), "version")
    if set(data) - set(MACHINE_FIELDS):
        raise Invalid(", ".join(sorted(set(data) - set(MACHINE_FIELDS))), "not asv's")
    return found


def machine(path: Path) -> dict[str, Any]:
    """asv's machine.json, whose name must be its folder's."""
    found = _read(path, check_machine, 1)
    if found["machine"] != path.parent.name:
        raise KeptFileError(
            path, f"machine: names {found['machine']!r}, not its folder {path.parent.name!r}"
        )
    return found


def packages(path: Path) -> list[str]:
    """What an asv environment held (results/packages/<machine>/<record>.txt): a `# ` header
    line, then name==version a line."""
    try:
        regular(path, 2)  # packages/<machine>/
        lines = path.read_bytes().decode("utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise KeptFileError(path, f"unreadable ({e})") from None
    if not lines or not lines[0].startswith("# "):
        raise KeptFileError(path, "line 1: not a packages record's `# ` header")
    try:
        return [grammar.package(line, f"line {k}") for k, line in enumerate(lines[1:], 2) if line]
    except Invalid as e:
        raise KeptFileError(path, str(e)) from None
