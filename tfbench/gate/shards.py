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
(tfbench.keptfiles.gate_shard.read).
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

from tfbench import keptfiles, naming, probes
from tfbench.gate import kept, rules
from tfbench.gate.readings import Point, Side
from tfbench.measure.timer import BLOCK_S, MIN_BLOCKS
from tfbench.pairs import timing, verdict

if TYPE_CHECKING:
    from tfbench.gate.session import Measured

MEMORY, TIME = "memory", "time"
Unit = tuple[str, str, tuple[str, ...]]  # (MEMORY, family, values) or (TIME, benchmark, values)
# Seconds (docs/validation/gate.md#shards): a pair's processes beyond its two readings (a
# fork, a plan, a warm-up: 398 s over 648 pairs on 2026-11-29); the servers renewed each
# pass over a shard's points (the shards of 2026-12-02: 0.4-2.6 s a pass); what a memory point
# costs beyond its probe's own calls (the whole gates' memory phases of 2026-12-02, 690-700
# s, less their 146 s of probe calls, over 191 points: asv's processes, confirmation).
PAIR_S = 0.6
PASS_S = 1.5
POINT_S = 3.0


class ShardError(ValueError):
    """Shards that do not make one gate: missing, read twice, or read another way."""


@dataclasses.dataclass(frozen=True)
class Cost:
    seconds: float  # the unit's own reading
    passes: int = 0  # a time point's pairs: the passes over its shard it keeps going


def units(benchmarks: dict[str, dict]) -> list[Unit]:
    """Every unit of the suite: each family's grid points of memory, each CPU time point
    (the time reader reads no GPU point: tfbench.gate.session.time_points)."""
    found: set[Unit] = set()
    for name, spec in benchmarks.items():
        for combo in itertools.product(*spec.get("params") or [[]]):
            point = probes.GridPoint(name, tuple(combo))
            if naming.timed(point.benchmark):
                if not naming.on_gpu(combo):
                    found.add((TIME, name, point.combo))
            else:
                found.add((MEMORY, point.family, point.combo))
    return sorted(found)


def costs(
    found: list[Unit],
    runs: list[keptfiles.gate_run.GateRun],
    probed: list[keptfiles.probes.Probes],
) -> dict[Unit, Cost]:
    """Each unit's cost: a time point's pairs in the kept gate runs (their median; one where
    runs were kept and none read it: a point that fails ends at its first reading; the
    reader's first pairs where no run was kept), each two readings of its step (0.5 s of
    calls, MIN_BLOCKS of them at least: a step's time from the kept probes files) and
    PAIR_S; a memory point's probe calls in the kept probes files (their median) and
    POINT_S."""
    pairs: dict[str, list[int]] = {}
    for run in runs:
        for p in run["time"]["points"]:
            pairs.setdefault(p["point"], []).append(p["pairs"])
    calls: dict[tuple[str, str], list[float]] = {}
    steps: dict[tuple[str, str], list[float]] = {}
    for kept_probes in probed:
        for costs_class, grid in kept_probes.items():
            for key, repeats in grid.items():
                ok = [r for r in repeats if r.get("status") == "ok"]
                if ok:
                    calls.setdefault((costs_class, key), []).append(
                        statistics.median(map(_calls, ok))
                    )
                    each = [r.get("seconds_per_iteration") or 0.0 for r in ok]
                    steps.setdefault((costs_class, key), []).append(statistics.median(each))
    found_costs: dict[Unit, Cost] = {}
    for unit in found:
        kind, name, combo = unit
        point = probes.GridPoint(name, combo)
        family = point.family if kind == TIME else name  # a memory unit is named by its family
        at = (naming.costs_class(family.rpartition(".")[2]), point.key)
        if kind == TIME:
            unread = [1] if runs else [timing.Reader.first]
            count = round(statistics.median(pairs.get(point.name, unread)))
            step = statistics.median(steps.get(at, [0.0]))
            reading = max(timing.Reader.seconds, MIN_BLOCKS * max(BLOCK_S, step))
            found_costs[unit] = Cost(count * (2 * reading + PAIR_S), count)
        else:
            found_costs[unit] = Cost(POINT_S + statistics.median(calls.get(at, [0.0])))
    return found_costs


def _calls(record: dict) -> float:
    """A probe's seconds of calls: its warm-up and measured iterations."""
    count = (record.get("warmup_run") or 0) + (record.get("iterations") or 0)
    return count * (record.get("seconds_per_iteration") or 0.0)


def plan(unit_costs: dict[Unit, Cost], n: int) -> list[list[Unit]]:
    """N shares of the units: the costliest unit left onto the share it makes the least
    heavy, a share's weight its units' seconds and PASS_S a pass over it (its longest time
    point's pairs: the points read long gather); ties by the unit and share, so the same
    costs give every runner the same plan. Each share sorted."""
    shares: list[list[Unit]] = [[] for _ in range(n)]
    loads, passes = [0.0] * n, [0] * n

    def weight(k: int, c: Cost) -> float:
        return loads[k] + c.seconds + PASS_S * max(passes[k], c.passes)

    order = sorted(
        unit_costs, key=lambda u: (-unit_costs[u].seconds - PASS_S * unit_costs[u].passes, u)
    )
    for unit in order:
        c = unit_costs[unit]
        k = min(range(n), key=lambda i: (weight(i, c), i))
        shares[k].append(unit)
        loads[k] += c.seconds
        passes[k] = max(passes[k], c.passes)
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
            parts.append(
                rf"^{re.escape(name)}(?:{naming.COSTS})?\.(?!{naming.TIME})\w+\({values}\)$"
            )
    return "|".join(parts)


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


def write(
    results_dir: Path,
    machine: str,
    pair: tuple[str, str],
    shard: tuple[int, int],
    units: tuple[Unit, ...],
    measured: Measured,
    read_on: dict,
    plant: float,
    reader: timing.Reader,
) -> Path:
    """Shard I of N's readings (`shard`), as `merge` joins them: both sides' every reading,
    every time point's pairs, the units it was given and the CPU that read them."""
    body = {
        "pair": list(pair),
        "shard": list(shard),
        "plant": plant,
        "reader": dataclasses.asdict(reader) | {"level": verdict.LEVEL},
        "seconds": measured.seconds,
        "units": [[kind, name, list(combo)] for kind, name, combo in units],
        **read_on,
        "sides": {
            "old": _side(measured.old, set(units)),
            "new": _side(measured.new, set(units)),
        },
        "times": [
            [b, list(c), {"logs": t.logs, "old": t.old, "skipped": t.skipped}]
            for (b, c), t in sorted(measured.timed.items())
        ],
    }
    where = keptfiles.gate_shard.path(results_dir, machine, pair, plant, shard)
    return keptfiles.gate_shard.write(where, body)


@dataclasses.dataclass
class Joined:
    """Shards joined into one gate: what `kept.write` keeps, and each shard's seconds."""

    rows: list[rules.Change]
    differing: kept.Differing
    summary: dict[str, Any]
    read_on: dict[str, Any]
    plant: float
    seconds: dict[str, float]  # shard file -> its seconds
    timed: dict[Point, verdict.Timed]  # every time point's pairs
    cpu_of: dict[Point, str]  # the id of the CPU that read each


def shard_files(results_dir: Path, pair: tuple[str, str], plant: float) -> list[Path]:
    """Every kept shard of the pair (read with that plant), whichever machine read it."""
    name = f"{keptfiles.gate_shard.stem(pair, plant)}.shard-*-of-*.json"
    return sorted((results_dir / keptfiles.gate_shard.FOLDER).glob(f"*/{name}"))


def merge(
    results_dir: Path, pair: tuple[str, str], plant: float, benchmarks: dict[str, dict]
) -> Joined:
    """The pair's shards joined (ShardError unless they are every unit of the suite, each
    read once, by one reader)."""
    paths = shard_files(results_dir, pair, plant)
    if not paths:
        raise ShardError(
            f"no shard of {pair[0]} -> {pair[1]} in {results_dir / keptfiles.gate_shard.FOLDER}"
        )
    try:
        read = [keptfiles.gate_shard.read(p) for p in paths]
    except keptfiles.KeptFileError as e:
        raise ShardError(str(e)) from None
    _whole(paths, read, benchmarks)
    old, new, timed, cpu_of = Side(), Side(), {}, {}
    for shard in read:
        (cpu_id,) = shard["cpus"]
        for side, readings in ((old, shard["sides"]["old"]), (new, shard["sides"]["new"])):
            for point, runs, missing in readings:  # as Side.add keeps them: none empty
                if runs:
                    side.runs[point] = runs
                if missing:
                    side.missing[point] = missing
        for point, logs, was, skipped in shard["times"]:
            margin = shard["reader"]["margin"]
            timed[point] = verdict.Timed(point, margin, logs=logs, skipped=skipped, kept_old=was)
            cpu_of[point] = cpu_id
    rows, differing = kept.conclude(benchmarks, old, new, timed, cpu_of)
    r = read[0]["reader"]  # as it read (its level is the verdict's own)
    reader = timing.Reader(
        design=r["design"],
        margin=r["margin"],
        first=r["first"],
        most=r["most"],
        seconds=r["seconds"],
        budget_s=r["budget_s"],
        watch=r["watch"],
        apart=r["apart"],
    )
    read_on = {
        "cpus": {i: c for s in read for i, c in s["cpus"].items()},
        "onednn": {i: o for s in read for i, o in s["onednn"].items()},
    }
    seconds = {str(p): s["seconds"] for p, s in zip(paths, read)}
    summary = timing.summary(timed, reader, cpu_of)
    return Joined(rows, differing, summary, read_on, plant, seconds, timed, cpu_of)


def _whole(
    paths: list[Path], read: list[keptfiles.gate_shard.GateShard], benchmarks: dict
) -> None:
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
        outside = [p for p, _, _ in shard["sides"]["old"] + shard["sides"]["new"]]
        outside = [p for p in outside if unit_of(p) not in share]
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


def kept_costs(conf) -> dict[Unit, Cost]:
    """Every unit's cost from the kept files of the results (every gate run and probes file
    of its form; those that are not are left out, as the report leaves them)."""
    from asv.benchmarks import Benchmarks

    results = Path(conf.results_dir)
    runs, probed = [], []
    for found in sorted((results / keptfiles.gate_run.FOLDER).glob("*/v*-v*.json")):
        if keptfiles.gate_run.named(found.name):
            try:
                runs.append(keptfiles.gate_run.read(found))
            except keptfiles.KeptFileError:
                continue
    for found in sorted((results / keptfiles.probes.FOLDER).glob("*/*.json")):
        try:
            probed.append(keptfiles.probes.read(found))
        except keptfiles.KeptFileError:
            continue
    return costs(units(dict(Benchmarks.load(conf))), runs, probed)
