"""A whole-suite gate run kept for the report: results/gate/<machine>/<old>-<new>.json,
{"format": 3, "time": what the time reader did (tfbench.pairs.timing.summary: its unknown
points named, every point's estimate), "rows": [each change, its evidence as data],
"shifts": [each common-mode shift, with "rows": the points that differ from it]
(tfbench.gate.shifts), "cpus": {id: a CPU that read it (tfbench.cpu)}, "onednn": {id: {side:
the ISA its oneDNN detected}}; each time point names its CPU's id (tfbench.gate.kept makes
it). A row's and its evidence's figures of the two sides are `old` and `new`; format 2 named
them `before` and `after` (`upgraded`: `tfbench results upgrade`)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypedDict

from tfbench import cpu, grammar
from tfbench.grammar import Invalid, field, optional
from tfbench.keptfiles import fields, reading

FORMAT = 3  # 2: evidence as data, time's summary; 3: the sides old and new
UPGRADES: tuple[int, ...] = (2,)  # its sides before and after, renamed old and new (upgraded)
FOLDER = "gate"
INSIDE = 2  # gate/<machine>/
NAME = re.compile(rf"{grammar.TAG.pattern}-{grammar.TAG.pattern}" r"\.json")
DIRECTIONS = ("worse", "better", "rss only")  # of a row (tfbench.gate.rules)


def named(name: str) -> bool:
    return bool(NAME.fullmatch(name))


def path(results_dir: Path, machine: str, pair: tuple[str, str]) -> Path:
    return results_dir / FOLDER / machine / f"{pair[0]}-{pair[1]}.json"


# a row's evidence: rule -> its fields' checks (tfbench.gate.rules writes and tells them)
EVIDENCE: dict[str, dict[str, Callable[[Any, str], Any]]] = {
    "apart": {
        "figure": grammar.text,
        "old": fields.pair_of(grammar.number),
        "new": fields.pair_of(grammar.number),
        "floor": grammar.number,
        "readings": fields.pair_of(grammar.integer),
    },
    "flip": {
        "old": grammar.boolean,
        "new": grammar.boolean,
        "readings": fields.pair_of(grammar.integer),
    },
    "status": {"why": grammar.text},  # and its side (_evidence)
    "time": {
        **dict.fromkeys(("ratio", "low", "high"), fields.positive),
        **dict.fromkeys(("margin", *fields.SIDES), grammar.number),
        "pairs": grammar.integer,
    },
}
# rss only; a shift's; a time row's CPU (its id: kept before 2026-12-02 without)
EVIDENCE_EXTRA = {
    "heap": grammar.identifier,
    "less": grammar.text,
    "cpu": grammar.matching(cpu.ID),
}


def _evidence(value: Any, where: str) -> dict[str, Any]:
    data = grammar.obj(value, where)
    rule = field(data, "rule", grammar.one_of(tuple(EVIDENCE)), where)
    found: dict[str, Any] = {"rule": rule}
    for name, check in EVIDENCE[rule].items():
        found[name] = field(data, name, check, where)
    if rule == "status":  # the side with no reading
        found["side"] = field(data, "side", grammar.one_of(fields.SIDES), where)
    if rule == "time":  # a row: a change decided, its interval apart from no change
        found["level"] = fields.level(data.get("level"), f"{where}.level")
        fields.answered(found, where)
        if data["low"] <= 1 <= data["high"]:
            raise Invalid(f"{where}.ratio", "a time row whose interval holds no change")
        found["pairs"] = fields.count(1 << 20, 1)(data["pairs"], f"{where}.pairs")
    for name, check in EVIDENCE_EXTRA.items():
        if name in data:
            found[name] = check(data[name], f"{where}.{name}")
    return found


INTEGER = Annotated[int, grammar.integer]


class TimeSummary(TypedDict):
    """What the time reader did (tfbench.pairs.timing.summary)."""

    design: Annotated[str, grammar.one_of(fields.DESIGNS)]
    margin: Annotated[float, grammar.number]
    level: Annotated[float, fields.level]
    pairs: Annotated[list[int], fields.pair_of(grammar.integer)]  # first, most
    seconds: Annotated[float, grammar.number]
    skipped: INTEGER
    different: INTEGER
    same: INTEGER
    unknown: Annotated[list[str], grammar.each_of(grammar.point)]  # the points named
    # absent in runs kept before them: the change the unknown points' intervals leave open
    # (at the median, at the widest), the watch, whether sides were read apart
    unseen: Annotated[list[float] | None, optional(fields.pair_of(grammar.number))]
    watch: Annotated[float | None, optional(grammar.number)]
    apart: Annotated[bool | None, optional(grammar.boolean)]
    points: Annotated[
        list[fields.TimePoint], grammar.absent([], grammar.each_of(fields.time_point))
    ]


class GateRow(TypedDict):
    benchmark: Annotated[str, grammar.dotted]
    # each value as asv's param (a plain string, a number)
    params: Annotated[dict[str, Any], grammar.mapping_of(grammar.identifier, grammar.param_value)]
    metric: Annotated[str, grammar.identifier]
    direction: Annotated[str, grammar.one_of(DIRECTIONS)]
    old: Annotated[float | None, optional(grammar.number)]
    new: Annotated[float | None, optional(grammar.number)]
    unit: Annotated[str, grammar.text]
    evidence: Annotated[dict[str, Any], _evidence]  # which rule, on what (rules.told)


_gate_row = grammar.schema(GateRow)


def _row(value: Any, where: str) -> GateRow:
    found = _gate_row(value, where)
    evidence = found["evidence"]
    if evidence["rule"] == "time" and (evidence["ratio"] > 1) != (found["direction"] == "worse"):
        raise Invalid(f"{where}.direction", f"{found['direction']} at x{evidence['ratio']:.3f}")
    return found


class GateShift(TypedDict):
    metric: Annotated[str, grammar.identifier]
    ratio: Annotated[bool, grammar.boolean]
    amount: Annotated[float, grammar.number]
    followed: INTEGER
    points: INTEGER
    scope: Annotated[str | None, optional(grammar.dotted)]
    rows: Annotated[list[GateRow], grammar.absent([], grammar.each_of(_row))]


class GateRun(TypedDict):
    time: Annotated[TimeSummary, grammar.schema(TimeSummary)]
    rows: Annotated[list[GateRow], grammar.each_of(_row)]
    shifts: Annotated[
        list[GateShift], grammar.absent([], grammar.each_of(grammar.schema(GateShift)))
    ]
    # id -> the CPU that read some of it (none: kept before)
    cpus: Annotated[dict[str, cpu.Identity], grammar.absent({}, fields.cpus)]
    onednn: fields.ONEDNN


_gate_run = grammar.schema(GateRun)


def check(value: Any) -> GateRun:
    data = grammar.obj(value, "")
    reading.format_of(data, FORMAT)
    found = _gate_run(data, "")
    known = fields.known(found["cpus"], "cpus")
    for key in found["onednn"]:
        known(key, "onednn key")
    for k, point in enumerate(found["time"]["points"]):
        if point["cpu"] is not None:  # a point kept before CPUs were names none
            known(point["cpu"], f"time.points[{k}].cpu")
    return found


def upgraded(data: dict[str, Any]) -> dict[str, Any]:
    """A gate run of format 2 in format 3's words: each row's sides, its evidence's and the
    rows of each shift named old and new (fields.renamed)."""

    def row(value: Any) -> Any:
        if not isinstance(value, dict):
            return value  # the reader names it
        evidence = fields.renamed(value.get("evidence"))
        if isinstance(evidence, dict) and evidence.get("rule") == "status":
            evidence = dict(evidence, side=fields.renamed(evidence.get("side")))
        return dict(fields.renamed(value), evidence=evidence)

    def rows(value: Any) -> Any:
        return [row(r) for r in value] if isinstance(value, list) else value

    def shift(value: Any) -> Any:
        return dict(value, rows=rows(value.get("rows", []))) if isinstance(value, dict) else value

    shifts = data.get("shifts", [])
    if isinstance(shifts, list):
        shifts = [shift(s) for s in shifts]
    return dict(data, format=FORMAT, rows=rows(data.get("rows")), shifts=shifts)


def read(path: Path) -> GateRun:
    """A kept gate run (results/gate/<machine>/<old>-<new>.json)."""
    return reading.read(path, check)


def write(where: Path, run: dict[str, Any]) -> Path:
    """A gate run's `time`, `rows`, `shifts`, `cpus` and `onednn` kept at `where`."""
    return reading.write(where, {reading.KEY: FORMAT, **run}, check)
