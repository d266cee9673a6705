"""The leak verdict over the whole suite: what it calls each CPU grid point of a release, beside
what the rule before it (1 MiB of kept growth over the window) calls the same readings and
what the committed history calls the point; and a second reading of every point it calls a
leak that the history calls flat.

    python tests/validation/verdicts.py VERSION [--python X.Y] --out READ.json [--again N]
    python tests/validation/verdicts.py VERSION --read READ.json [--again N]

Reads every CPU grid point of every Costs class once, in the release's environment (one
fresh process a point, its default window), and keeps the records (the kept heap at each
point of the window and of its confirmation) in READ.json; `--read` takes such a file
instead. Prints a Markdown table of the points where the rules or the history disagree, then
the counts. With `--again N`, each point called a leak where the history calls it flat is
read again over N times its window, in another process: a second reading of whether it
keeps bytes (a cache that fills once stops; a leak goes on). Exits 1 where a new leak's
second reading keeps no bytes (the lower end of its slope at 0 or below).
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import itertools
import json
import pkgutil
import sys
from pathlib import Path
from typing import Any

import numpy as np

from tfbench import probes, scenarios, targets
from tfbench.history import envs, repo
from tfbench.measure import growth, record
from tfbench.units import format_bytes

ROOT = Path(__file__).resolve().parents[2]
SERIES = ("rss_bytes", "warmup_rss_bytes", "heap_bytes")  # not kept: figures are
Point = tuple[str, str, targets.ScenarioTarget, str]  # module, Costs class, target, key


def grid() -> list[Point]:
    """Every CPU grid point of the suite's Costs classes."""
    sys.path.insert(0, str(ROOT))
    found = []
    for info in pkgutil.iter_modules([str(ROOT / "benchmarks")]):
        module = importlib.import_module(f"benchmarks.{info.name}")
        for name, costs in inspect.getmembers(module, inspect.isclass):
            if costs.__module__ != module.__name__ or not name.endswith("Costs"):
                continue
            if not hasattr(costs, "family"):
                continue  # common's bases: no grid
            for values in itertools.product(*costs.params):
                point = probes.target(costs.family, costs.param_names, values)
                if point.params.get("device", "CPU") != "CPU":
                    continue
                try:
                    scenarios.get(point.scenario).bind(point.params)
                except scenarios.ParamError:
                    continue
                found.append((module.__name__, name, point, probes.key(values)))
    return found


def history(version: str, python: str) -> dict[tuple[str, str], bool | None]:
    """(Costs class, key) -> the history's verdict on the release (its repeats combined),
    from the machine whose results hold the class at its current version."""
    commit = repo.history_tags(ROOT / "releases" / "history.git")[f"v{version}"][:8]
    current = json.loads((ROOT / "results" / "benchmarks.json").read_text())
    said: dict[tuple[str, str], bool | None] = {}
    for machine in sorted((ROOT / "results" / "probes").iterdir()):
        results = ROOT / "results" / machine.name / f"{commit}-virtualenv-py{python}.json"
        probed = machine / f"{commit}-virtualenv-py{python}-cpu.json"
        if not (results.is_file() and probed.is_file()):
            continue
        asv = json.loads(results.read_text())
        at = asv["result_columns"].index("version")
        for costs, points in json.loads(probed.read_text()).items():
            name = next((b for b in asv["results"] if f".{costs}.track_leak" in b), None)
            if name is None or asv["results"][name][at] != current[name]["version"]:
                continue  # of another version: not today's history
            for key, repeats in points.items():
                said[(costs, key)] = record.combine(repeats).get("leak")
    return said


def before(r: dict[str, Any]) -> bool | None:
    """The rule before #77 on the same readings: the lower end of the kept heap's slope
    keeps 1 MiB over the window, grown throughout."""
    points = np.asarray(r.get("kept_heap_bytes") or [], dtype=np.float64)
    if len(points) < growth.MIN_READINGS:
        return None
    low = growth.theil_sen_interval(points)[0]
    slope = growth.theil_sen_slope(points)
    return low * (len(points) - 1) >= growth.LEAK_MIN_BYTES and growth._sustained(points, slope)


def read(version: str, python: str, points: list[Point], times: int = 1) -> list[dict]:
    """Each point measured once in the release's environment (`times` its window)."""
    made, _ = envs.ensure(envs.ReleaseEnv(version, "cpu", envs.default_root(), python))
    out = []
    for module in dict.fromkeys(p[0] for p in points):
        mine = [p for p in points if p[0] == module]
        for (_, costs, _, key), found in zip(mine, _measured(made, module, mine, times)):
            out.append({"costs": costs, "key": key, **_kept(found)})
            print(f"{costs} {key}: {said(found)}", file=sys.stderr, flush=True)
    return out


def _measured(made: Path, module: str, points: list[Point], times: int) -> list[dict]:
    asked = [p[2] for p in points]
    if times == 1:
        limits = targets.Limits(python=str(made), quiet=True)
        return targets.measure_spawned(asked, limits, workers=2, imports=(module,))
    return [
        targets.measure_spawned(
            [t],
            targets.Limits(
                python=str(made),
                quiet=True,
                iterations=scenarios.get(t.scenario).iterations * times,
            ),
            imports=(module,),
        )[0]
        for t in asked
    ]


def _kept(r: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in r.items() if k not in SERIES}


def said(r: dict[str, Any]) -> str:
    """A record's verdict and what it keeps, in a few words."""
    if not record.measured(r):
        return f"{r['status']}: {(r.get('error') or '').partition(chr(10))[0]}"
    low, high = r.get("retained_interval") or (None, None)
    kept = format_bytes(r["retained_bytes_per_iteration"])
    interval = f"[{format_bytes(low)}, {format_bytes(high)}]"
    text = f"{'LEAK' if r['leak'] else 'flat'}, keeps {kept} {interval}"
    confirmed = r.get("confirmation")
    if confirmed:
        rates = ", ".join(format_bytes(k["bytes_per_iteration"]) for k in confirmed["rounds"])
        text += f", then {rates} in rounds of {confirmed['calls']} calls"
    return text


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("version")
    parser.add_argument("--python", default="3.11")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--read", type=Path)
    parser.add_argument("--again", type=int, default=0, metavar="N")
    args = parser.parse_args()
    known = history(args.version, args.python)
    points = grid()
    if args.read:
        found = json.loads(args.read.read_text())
    else:
        found = read(args.version, args.python, points)
        args.out.write_text(json.dumps(found))
    measured = [r for r in found if record.measured(r)]
    print("| point | history | rule before | now |\n|---|---|---|---|")
    new = []
    for r in measured:
        was, old = known.get((r["costs"], r["key"])), before(r)
        if was == old == r["leak"]:
            continue
        print(f"| {r['costs']} {r['key']} | {was} | {old} | {said(r)} |")
        if r["leak"] and was is False:
            new.append(r)
    changed = sum(before(r) != r["leak"] for r in measured)
    print(f"\n{len(measured)} points measured; the rule before reads {changed} of them otherwise;")
    print(f"{len(new)} read LEAK where the history calls them flat.")
    if not (args.again and new):
        return 0
    by_key = {(p[1], p[3]): p for p in points}
    again = read(
        args.version, args.python, [by_key[(r["costs"], r["key"])] for r in new], args.again
    )
    print(f"\nSecond readings over {args.again} times the window:\n")
    kept_nothing = 0
    for first, second in zip(new, again):
        low = (second.get("retained_interval") or [0.0])[0]
        kept_nothing += low <= 0
        print(f"- {first['costs']} {first['key']}: {said(second)}")
    return 1 if kept_nothing else 0


if __name__ == "__main__":
    sys.exit(main())
