"""The checks of the fields several kinds of kept file share: the CPU a figure was read on,
a measured record, a target, a nightly build, a machine's environment, two builds' times
compared, and a time estimate with its interval (docs/formats.md#kept-files-are-untrusted-input).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Annotated, Any, TypedDict

from tfbench import cpu, grammar, scenarios
from tfbench.grammar import Invalid, field, optional
from tfbench.measure import record

ANSWERS = ("different", "same", "unknown", "skipped")  # two builds' times compared
DESIGNS = ("interleaved", "turns", "duet", "duet-unpinned")  # how the time reader read
SIDES = ("old", "new")  # a gate's two releases, as every kept file names them
FORMER = ("before", "after")  # as gate runs of format 2 and shards of format 1 named them

# -- the CPU a file's figures were read on (tfbench.cpu) ----------------------------------

_CACHE_LEVELS = ("L1d", "L1i", "L2", "L3", "L4")


def count(most: int, least: int = 0) -> Callable[[Any, str], int]:
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
        **{k: field(data, k, count(1 << 16, -1), where) for k in ("family", "model", "stepping")},
        "cpus": field(data, "cpus", count(1 << 16), where),
        "isa": field(data, "isa", lambda v, f: grammar.each(v, f, grammar.one_of(cpu.ISA)), where),
        "caches": field(
            data,
            "caches",
            lambda v, f: grammar.mapping(v, f, grammar.one_of(_CACHE_LEVELS), count(1 << 40)),
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


def known(named: Any, where: str) -> Callable[[Any, str], str]:
    """A CPU id that the file's `where` names."""

    def check(value: Any, field_: str) -> str:
        if not isinstance(named, dict) or value not in named:
            raise Invalid(field_, f"{value!r} is no CPU of {where}")
        return value

    return check


# CPU id -> side (old, new) -> its oneDNN's ISA, as each side's oneDNN detected it (absent
# before: none); each id one of the file's CPUs
ONEDNN = Annotated[
    dict[str, dict[str, str | None]],
    grammar.absent(
        {},
        grammar.mapping_of(
            grammar.matching(cpu.ID),
            grammar.mapping_of(grammar.one_of(SIDES), optional(grammar.machine_text)),
        ),
    ),
]


def cpu_named(value: Any, where: str = "cpu") -> cpu.Identity | str:
    """A record's CPU: an identity, or (kept before identities) the model name alone."""
    return grammar.text(value, where) if isinstance(value, str) else cpu_identity(value, where)


# -- records: what a measurement kept ------------------------------------------------------


def pair_of(check: Callable[[Any, str], Any]) -> Callable[[Any, str], list[Any]]:
    def pair(value: Any, where: str) -> list[Any]:
        found = grammar.each(value, where, check)
        if len(found) != 2:
            raise Invalid(where, f"{len(found)} values where a pair is")
        return found

    return pair


def not_negative(value: Any, where: str) -> float:
    found = grammar.number(value, where)
    if found < 0:
        raise Invalid(where, f"{found!r} is below 0")
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
        "tracked": field(data, "tracked", not_negative, where),
        "tail_calls": field(data, "tail_calls", not_negative, where),
    }
    for name in (
        *("young_every", "young_pile_bytes", "promoted_per_call", "old_garbage_per_call"),
        *("full_every", "pile_bytes"),
    ):
        found[name] = optional(not_negative)(data.get(name), f"{where}.{name}")
    return found


class KeptRound(TypedDict):
    calls: Annotated[float, not_negative]
    bytes_per_iteration: Annotated[float, grammar.number]
    interval: Annotated[list[float], pair_of(grammar.number)]


class KeptConfirmation(TypedDict):
    """The rounds read after a window that grew a little (tfbench.measure.steps.Confirmation):
    their calls in all, and each round's calls and bytes a call, with its interval."""

    calls: Annotated[float, not_negative]
    rounds: Annotated[list[KeptRound], grammar.each_of(grammar.schema(KeptRound))]


# each form of a record's field (tfbench.measure.record) and its check
FORMS: dict[str, Callable[[Any, str], Any]] = {
    record.TEXT: optional(grammar.text),
    record.NUMBER: optional(grammar.number),
    record.AMOUNT: optional(not_negative),
    record.SERIES: optional(_series),
    record.BOOLEAN: optional(grammar.boolean),
    record.INTERVAL: optional(pair_of(grammar.number)),
    record.STATUS: grammar.one_of(record.STATUSES),
    record.PARAMS: grammar.mapping_of(grammar.identifier, grammar.param_value),
    record.DEVICE: grammar.device,
    record.COUNTERS: grammar.mapping_of(grammar.identifier, grammar.number),
    record.COLLECTOR: optional(collector),
    record.CONFIRMATION: optional(grammar.schema(KeptConfirmation)),
}
_CHECKS = {f.name: FORMS[f.form] for f in record.FIELDS if f.form is not None}


def _record(value: Any, where: str) -> dict[str, Any]:
    """A measured record as kept: each field it holds of the record's declaration
    (tfbench.measure.record.FIELDS), of its form; nothing else is kept from it."""
    data = grammar.obj(value, where)
    return {k: check(data[k], f"{where}.{k}") for k, check in _CHECKS.items() if k in data}


def target(value: Any, where: str = "target") -> dict[str, Any]:
    """A target as kept: a catalog scenario and params it takes (footprint: its device), or
    a user's function by its file's name alone (never a path to read)."""
    data = grammar.obj(value, where)
    if "scenario" in data:
        sid = field(data, "scenario", grammar.scenario, where)
        params = grammar.mapping(
            data.get("params", {}), f"{where}.params", grammar.identifier, grammar.param_value
        )
        if sid == record.FOOTPRINT:
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


def records(value: Any, where: str) -> list[dict[str, Any]]:
    return grammar.each(value, where, _record)


def renamed(value: Any) -> Any:
    """A former format's sides in today's words: an object's keys (or a side's name) before
    and after, old and new; anything else as it is (the reader names what is wrong)."""
    words = dict(zip(FORMER, SIDES))
    if isinstance(value, dict):
        return {words.get(k, k): v for k, v in value.items()}
    return words.get(value, value) if isinstance(value, str) else value


def level(value: Any, where: str) -> float:
    """A time verdict's level: 99% where it was kept before the verdict named its level."""
    if value is None:
        return 0.99
    found = grammar.number(value, where)
    if not 0 < found < 1:
        raise Invalid(where, f"{found!r} is no level of an interval")
    return found


def positive(value: Any, where: str) -> float:
    found = grammar.number(value, where)
    if found <= 0:
        raise Invalid(where, f"{found!r} is no ratio (not above 0)")
    return found


RATIO = Annotated[float | None, optional(positive)]  # new over old, or an end of its interval


def answered(found: Mapping[str, Any], where: str) -> None:
    """An answer's estimate (new over old): a ratio within its interval, or none of the
    three; `different` only with an interval that holds no change (the reader's rule: beyond
    the margin on one side)."""
    ratio, low, high = (found[k] for k in ("ratio", "low", "high"))
    if None in (ratio, low, high) and (ratio, low, high) != (None, None, None):
        raise Invalid(where, "an estimate without its interval, or an interval without it")
    if ratio is not None and not low <= ratio <= high:
        raise Invalid(f"{where}.ratio", f"{ratio!r} lies outside its interval")
    if found.get("answer") == "different" and (ratio is None or low <= 1 <= high):
        raise Invalid(f"{where}.answer", "different, but no interval apart from no change")


class KeptBuild(TypedDict):
    version: Annotated[str, grammar.nightly]
    uploaded: Annotated[str, grammar.uploaded]
    git_version: Annotated[str | None, optional(grammar.git_version)]


class Environment(TypedDict):
    os: Annotated[str, grammar.text]
    python: Annotated[str, grammar.python_version]
    # the model name alone in a file kept before identities
    cpu: Annotated[cpu.Identity | str, cpu_named]


class Compared(TypedDict):
    """Two builds' times compared in pairs (tfbench.pairs.verdict.compared)."""

    old: Annotated[str, grammar.nightly]
    new: Annotated[str, grammar.nightly]
    answer: Annotated[str, grammar.one_of(ANSWERS)]
    ratio: RATIO
    low: RATIO
    high: RATIO
    pairs: Annotated[int, count(1 << 20)]
    margin: Annotated[float, grammar.number]
    level: Annotated[float, level]  # of the interval
    skipped: Annotated[str | None, optional(grammar.text)]


class TimePoint(TypedDict):
    """A gate's time point (tfbench.pairs.timing.summary)."""

    point: Annotated[str, grammar.point]  # benchmark(asv's values)
    # the id of the CPU its pairs were read on (None: kept before it)
    cpu: Annotated[str | None, optional(grammar.matching(cpu.ID))]
    answer: Annotated[str, grammar.one_of(ANSWERS[:3])]
    ratio: RATIO  # None under the pairs that give one
    low: RATIO
    high: RATIO
    pairs: Annotated[int, count(1 << 20)]


build = grammar.schema(KeptBuild)
environment = grammar.schema(Environment)
_compared, _time_point = grammar.schema(Compared), grammar.schema(TimePoint)


def compared(value: Any, where: str) -> Compared:
    found = _compared(value, where)
    answered(found, where)
    return found


def time_point(value: Any, where: str) -> TimePoint:
    found = _time_point(value, where)
    answered(found, where)
    return found
