"""The gate in shards: `tfbench gate OLD NEW --shard I/N` reads a deterministic share of
the suite's grid points on one runner and keeps its readings; `tfbench gate merge OLD NEW`
joins every shard's readings and concludes once, by the rules of a whole gate
(tfbench.gate.kept.conclude), each time point's verdict from the pairs of the one CPU that
read it. N runners at once read a gate in about its Nth part of the time.

A unit of the share is one grid point of a family's memory benchmarks (its `peakmem_`
and the probe's `track_` figures: one probe reads them all) or one `time_` point. The
shares are balanced by what each unit cost where the kept files tell (the pairs a time
point took in the kept gate runs, the calls a probe point made in the kept probes files),
largest first onto the lightest share: the same files give every runner the same plan.
A shard keeps RESULTS/gate/<machine>/<old>-<new>[.plant-S].shard-<I>-of-<N>.json
(tfbench.keptfiles.gate_shard).
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import re
import statistics
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tfbench import formats, keptfiles, probes
from tfbench.gate import kept, rules
from tfbench.gate.readings import Point, Side
from tfbench.pairs import timing, verdict

if TYPE_CHECKING:  # asvruns imports this module
    from tfbench.gate.asvruns import Request
    from tfbench.gate.session import Measured

MEMORY, TIME = "memory", "time"
Unit = tuple[str, str, tuple[str, ...]]  # (MEMORY, family, values) or (TIME, benchmark, values)
# Seconds, from the two whole gates of 2026-12-02 (docs/gate.md#shards): a pair of readings
# (the time phases' 1890 and 2200 s over 992 and 1129 pairs), and what a memory point costs
# beyond its probe's own calls (the memory phases' 690-700 s, less their 146 s of probe
# calls, over 191 points: asv's processes of its peakmem_ and figures, confirmation rounds).
PAIR_S = 1.9
POINT_S = 3.0


class ShardError(ValueError):
    """Shards that do not make one gate: missing, read twice, or read another way."""


def units(benchmarks: dict[str, dict]) -> list[Unit]:
    """Every unit of the suite: each family's grid points of memory, each CPU time point
    (the time reader reads no GPU point: tfbench.gate.session.time_points)."""
    found: set[Unit] = set()
    for name, spec in benchmarks.items():
        for combo in itertools.product(*spec.get("params") or [[]]):
            point = probes.GridPoint(name, tuple(combo))
            if point.benchmark.rpartition(".")[2].startswith("time_"):
                if "'GPU'" not in combo:
                    found.add((TIME, name, point.combo))
            else:
                found.add((MEMORY, point.family, point.combo))
    return sorted(found)


def costs(
    found: list[Unit], runs: list[keptfiles.GateRun], probed: list[probes.Probes]
) -> dict[Unit, float]:
    """Each unit's seconds: a time point's pairs in the kept gate runs (their median; one
    where runs were kept and none read it: a point that fails ends at its first reading;
    the reader's first pairs where no run was kept) times PAIR_S; a memory point's probe
    calls in the kept probes files (their median), plus POINT_S."""
    pairs: dict[str, list[int]] = {}
    for run in runs:
        for p in run["time"]["points"]:
            pairs.setdefault(p["point"], []).append(p["pairs"])
    calls: dict[tuple[str, str], list[float]] = {}
    for kept_probes in probed:
        for costs_class, grid in kept_probes.items():
            for key, repeats in grid.items():
                seconds = [_calls(r) for r in repeats if r.get("status") == "ok"]
                if seconds:
                    calls.setdefault((costs_class, key), []).append(statistics.median(seconds))
    found_costs = {}
    for unit in found:
        kind, name, combo = unit
        if kind == TIME:
            named = rules.point_name((name, combo))
            unread = [1] if runs else [timing.Reader.first]
            found_costs[unit] = PAIR_S * statistics.median(pairs.get(named, unread))
        else:
            key = probes.GridPoint(name, combo).key
            seconds = calls.get((f"{name.rpartition('.')[2]}Costs", key), [0.0])
            found_costs[unit] = POINT_S + statistics.median(seconds)
    return found_costs


def _calls(record: dict) -> float:
    """A probe's seconds of calls: its warm-up and measured iterations."""
    count = (record.get("warmup_run") or 0) + (record.get("iterations") or 0)
    return count * (record.get("seconds_per_iteration") or 0.0)


def plan(unit_costs: dict[Unit, float], n: int) -> list[list[Unit]]:
    """N shares of the units, each the lightest so far given the costliest unit left (ties
    by the unit: the same costs give every runner the same plan), each share sorted."""
    shares: list[list[Unit]] = [[] for _ in range(n)]
    loads = [0.0] * n
    for unit in sorted(unit_costs, key=lambda u: (-unit_costs[u], u)):
        k = min(range(n), key=lambda i: (loads[i], i))
        shares[k].append(unit)
        loads[k] += unit_costs[unit]
    return [sorted(s) for s in shares]


def pattern(share: Iterable[Unit]) -> str:
    """asv's --bench for exactly the share's units: a memory point's every benchmark of its
    family (the step class's and its Costs class's) at its values, a time point itself."""
    parts = []
    for kind, name, combo in share:
        values = re.escape(", ".join(combo)).replace("\\ ", " ").replace("'", ".")
        if kind == TIME:
            parts.append(rules.point_pattern(rules.point_name((name, combo))))
        else:
            parts.append(rf"^{re.escape(name)}(?:Costs)?\.(?!time_)\w+\({values}\)$")
    return "|".join(parts)


def path(results_dir: Path, machine: str, pair: tuple[str, str], plant: float, shard) -> Path:
    planted = f".plant-{plant:g}" if plant else ""
    name = f"{pair[0]}-{pair[1]}{planted}.shard-{shard[0]}-of-{shard[1]}.json"
    return results_dir / kept.FOLDER / machine / name


def unit_of(point: Point) -> Unit:
    """The unit a reading of a memory benchmark belongs to: its family's grid point."""
    found = probes.GridPoint(*point)
    return (MEMORY, found.family, found.combo)


def _side(side: Side, share: set[Unit]) -> list[list[Any]]:
    """A side's every reading of the share's points: [benchmark, values, runs, why missing]
    a point (asv's results hold the points of the rest too, unread)."""
    points = sorted(p for p in set(side.runs) | set(side.missing) if unit_of(p) in share)
    return [
        [b, list(c), side.runs.get((b, c), []), side.missing.get((b, c), [])] for b, c in points
    ]


def write(results_dir: Path, request: Request, measured: Measured, read_on: dict) -> Path:
    """The shard's readings, as `merge` joins them: both sides' every reading, every time
    point's pairs, the units it was given and the CPU that read them."""
    assert request.shard is not None
    reader = request.reader
    body = {
        formats.KEY: formats.GATE_SHARD,
        "pair": [request.old, request.new],
        "shard": list(request.shard),
        "plant": request.plant,
        "reader": dataclasses.asdict(reader) | {"level": verdict.LEVEL},
        "seconds": measured.seconds,
        "units": [[kind, name, list(combo)] for kind, name, combo in request.units],
        **read_on,
        "sides": {
            "before": _side(measured.before, set(request.units)),
            "after": _side(measured.after, set(request.units)),
        },
        "times": [
            [b, list(c), {"logs": t.logs, "before": t.before, "skipped": t.skipped}]
            for (b, c), t in sorted(measured.timed.items())
        ],
    }
    where = path(
        results_dir, request.machine, (request.old, request.new), request.plant, request.shard
    )
    keptfiles.check_gate_shard(json.loads(json.dumps(body)))  # as merge will read it
    where.parent.mkdir(parents=True, exist_ok=True)
    where.write_text(json.dumps(body) + "\n")
    return where


@dataclasses.dataclass
class Joined:
    """Shards joined into one gate: what `kept.write` keeps, and each shard's seconds."""

    rows: list[rules.Change]
    differing: kept.Differing
    summary: dict[str, Any]
    read_on: dict[str, Any]
    plant: float
    seconds: dict[str, float]  # shard file -> its seconds


def shard_files(results_dir: Path, pair: tuple[str, str], plant: float) -> list[Path]:
    """Every kept shard of the pair (read with that plant), whichever machine read it."""
    planted = f".plant-{plant:g}" if plant else ""
    name = f"{pair[0]}-{pair[1]}{planted}.shard-*-of-*.json"
    return sorted((results_dir / kept.FOLDER).glob(f"*/{name}"))


def merge(
    results_dir: Path, pair: tuple[str, str], plant: float, benchmarks: dict[str, dict]
) -> Joined:
    """The pair's shards joined (ShardError unless they are every unit of the suite, each
    read once, by one reader)."""
    paths = shard_files(results_dir, pair, plant)
    if not paths:
        raise ShardError(f"no shard of {pair[0]} -> {pair[1]} in {results_dir / kept.FOLDER}")
    try:
        read = [keptfiles.gate_shard(p) for p in paths]
    except keptfiles.KeptFileError as e:
        raise ShardError(str(e)) from None
    _whole(paths, read, benchmarks)
    before, after, timed, cpu_of = Side(), Side(), {}, {}
    for shard in read:
        (cpu_id,) = shard["cpus"]
        for side, readings in ((before, shard["before"]), (after, shard["after"])):
            for point, runs, missing in readings:
                side.runs[point] = runs
                side.missing[point] = missing
        for point, logs, was, skipped in shard["times"]:
            margin = shard["reader"]["margin"]
            timed[point] = verdict.Timed(
                point, margin, logs=logs, skipped=skipped, kept_before=was
            )
            cpu_of[point] = cpu_id
    rows, differing = kept.conclude(benchmarks, before, after, timed, cpu_of)
    reader = timing.Reader(**{k: v for k, v in read[0]["reader"].items() if k != "level"})
    read_on = {
        "cpus": {i: c for s in read for i, c in s["cpus"].items()},
        "onednn": {i: o for s in read for i, o in s["onednn"].items()},
    }
    seconds = {str(p): s["seconds"] for p, s in zip(paths, read)}
    summary = timing.summary(timed, reader, cpu_of)
    return Joined(rows, differing, summary, read_on, plant, seconds)


def _whole(paths: list[Path], read: list[keptfiles.GateShard], benchmarks: dict) -> None:
    """ShardError unless the shards are 1..N of one N, read by one reader, and hold every
    unit of the suite once."""
    counts = {s["shard"][1] for s in read}
    indexes = sorted(s["shard"][0] for s in read)
    readers = {json.dumps(s["reader"], sort_keys=True) for s in read}
    if len(counts) != 1 or indexes != list(range(1, len(read) + 1)) or len(read) not in counts:
        shown = ", ".join(f"{p.parent.name}/{p.name}" for p in paths)
        raise ShardError(f"shards {shown}: not 1 to N of one N, each once")
    if len(readers) != 1:
        raise ShardError("the shards were read by readers set another way (their `reader`)")
    for where, shard in zip(paths, read):
        share = set(shard["units"])
        outside = [p for p, _, _ in shard["before"] + shard["after"] if unit_of(p) not in share]
        outside += [p for p, *_ in shard["times"] if (TIME, *p) not in share]
        if outside:
            name, combo = outside[0]
            raise ShardError(f"{where}: holds readings of {name}({', '.join(combo)}), not its own")
    held = [u for s in read for u in s["units"]]
    twice = sorted({u for u in held if held.count(u) > 1})
    missing = sorted(set(units(benchmarks)) - set(held))
    if twice or missing:
        named = [f"read twice: {len(twice)}", f"read by none: {len(missing)}"]
        example = (twice or missing)[0]
        raise ShardError(f"{'; '.join(named)} (e.g. {example[1]}({', '.join(example[2])}))")


def kept_costs(conf) -> dict[Unit, float]:
    """Every unit's cost from the kept files of the results (every gate run and probes file
    of its form; those that are not are left out, as the report leaves them)."""
    from asv.benchmarks import Benchmarks

    results = Path(conf.results_dir)
    runs, probed = [], []
    for found in sorted((results / kept.FOLDER).glob("*/v*-v*.json")):
        if ".shard-" not in found.name:
            try:
                runs.append(keptfiles.gate_run(found))
            except keptfiles.KeptFileError:
                continue
    for found in sorted((results / "probes").glob("*/*.json")):
        try:
            probed.append(keptfiles.probes(found))
        except keptfiles.KeptFileError:
            continue
    return costs(units(dict(Benchmarks.load(conf))), runs, probed)
