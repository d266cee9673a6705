"""One release pair's time read on several CPUs, side by side: a time change holds for the
CPU its pairs were read on, and is general only where it holds on each.

Every kept gate run of the pair (each machine's, whole or joined from shards) gives each
time point's verdict on the CPU that read it (a point names its CPU's id; a run kept before
CPUs were named counts as one CPU of its own, named by its machine). Where two or more CPUs
read the pair, the report groups the points that read worse or better on some CPU: on each
(general), or on which CPUs only.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tfbench import keptfiles, naming

WAYS = ("worse", "better")


@dataclass(frozen=True)
class Group:
    way: str  # worse, better
    cpus: tuple[str, ...]  # the CPUs it holds on (all of them: general)
    points: list[tuple[str, list[str]]]  # point, how each CPU read it (its ratio, or why none)


@dataclass(frozen=True)
class ByCpu:
    cpus: list[str]  # each CPU that read the pair, as the report names it
    groups: list[Group]

    def lines(self) -> list[str]:
        """A sentence a group, each point with its ratio on every CPU."""
        out = []
        for g in self.groups:
            where = (
                "on each CPU (general)"
                if len(g.cpus) == len(self.cpus)
                else ("on " + " and ".join(g.cpus) + " only")
            )
            told = "; ".join(f"{point} {' / '.join(cells)}" for point, cells in g.points)
            out.append(f"{g.way.capitalize()} {where}: {told}.")
        return out


Verdicts = dict[str, dict[str, tuple[str, str]]]  # CPU -> point -> (way, its ratio or answer)


def _cell(answer: str, ratio: float | None) -> str:
    return answer if ratio is None else f"x{ratio:.3f}"


def _verdicts(run: keptfiles.gate_run.GateRun, machine: str) -> Verdicts:
    """CPU -> point -> (its way: worse, better or not different; its ratio, or its answer
    where it has none: a run kept before points were names its unknown ones)."""
    found: Verdicts = {}
    unnamed = f"a CPU not recorded ({machine})"
    for p in run["time"]["points"]:
        named = f"cpu {p['cpu']}" if p["cpu"] else unnamed
        ratio = p["ratio"]  # a different point has one (fields.answered)
        way = "" if p["answer"] != "different" or ratio is None else WAYS[0 if ratio > 1 else 1]
        found.setdefault(named, {})[p["point"]] = (way, _cell(p["answer"], p["ratio"]))
    if not run["time"]["points"]:  # kept before points were: its rows and unknown alone
        told = found.setdefault(unnamed, {})
        told.update((p, ("", "unknown")) for p in run["time"]["unknown"])
        for r in run["rows"]:
            if naming.timed(r["metric"]) and r["direction"] in WAYS:
                values = ", ".join(repr(v) for v in r["params"].values())
                point = f"{r['benchmark']}({values})"
                told[point] = (r["direction"], _cell("", r["evidence"]["ratio"]))
    return found


def _runs(
    results_dir: Path, pair: tuple[str, str], problems: list[str]
) -> list[tuple[Path, keptfiles.gate_run.GateRun]]:
    """The pair's kept gate runs of every machine; those not of their form named."""
    found = []
    for path in sorted(
        (results_dir / keptfiles.gate_run.FOLDER).glob(f"*/{pair[0]}-{pair[1]}.json")
    ):
        try:
            found.append((path, keptfiles.gate_run.read(path)))
        except keptfiles.KeptFileError as e:
            problems.append(str(e))
    return found


def read(results_dir: Path, pair: tuple[str, str], problems: list[str]) -> ByCpu | None:
    """The pair's time on each CPU that read it, or None where fewer than two did."""
    by: Verdicts = {}
    for path, run in _runs(results_dir, pair, problems):
        for named, points in _verdicts(run, path.parent.name).items():
            by.setdefault(named, {}).update(points)
    if len(by) < 2:
        return None
    cpus = sorted(by)
    groups = []
    for way in WAYS:
        held: dict[tuple[str, ...], list[str]] = {}
        for point in sorted({p for points in by.values() for p in points}):
            on = tuple(c for c in cpus if by[c].get(point, ("", ""))[0] == way)
            if on:
                held.setdefault(on, []).append(point)
        for on, named_points in sorted(held.items(), key=lambda h: (-len(h[0]), h[0])):
            cells = [(p, [by[c].get(p, ("", "-"))[1] for c in cpus]) for p in named_points]
            groups.append(Group(way, on, cells))
    return ByCpu(cpus, groups)


def point(
    results_dir: Path, pair: tuple[str, str], name: str, problems: list[str]
) -> list[dict[str, Any]]:
    """One time point of the pair on each CPU a kept gate run read it on: its answer, ratio
    and interval (a run kept before points were: `different` from its rows, `unknown` where
    it names the point, else `no row`)."""
    found: list[dict[str, Any]] = []
    for path, run in _runs(results_dir, pair, problems):
        unnamed = f"a CPU not recorded ({path.parent.name})"
        for p in run["time"]["points"]:
            if p["point"] == name:
                named = f"cpu {p['cpu']}" if p["cpu"] else unnamed
                found.append(
                    {"cpu": named} | {k: p[k] for k in ("answer", "ratio", "low", "high")}
                )
        if run["time"]["points"]:
            continue
        told: dict[str, Any] = {"cpu": unnamed, "answer": "no row"}
        told |= {"ratio": None, "low": None, "high": None}
        if name in run["time"]["unknown"]:
            told["answer"] = "unknown"
        for r in run["rows"]:
            values = ", ".join(repr(v) for v in r["params"].values())
            if naming.timed(r["metric"]) and f"{r['benchmark']}({values})" == name:
                told |= {"answer": "different"} | {
                    k: r["evidence"][k] for k in ("ratio", "low", "high")
                }
        found.append(told)
    return found
