"""A release read on another CPU than a history's, joined to that history by a chain.

asv draws a machine's results as one series: a release whose time was read on another CPU
would sit beside the history at that CPU's speed, a step of x0.5 to x2 that no release
made. So a release joins a history (a machine, its series) chained: each `time_` point is
the history's figure for the release before, moved by the estimate of the pairs one runner
read of the two releases side by side (the gate's, RESULTS/gate/<machine>/<before>-<new>.json,
which names its CPU), its interval the pairs' interval on that figure; the figures of
memory are as the runner read them (they compare across CPUs: docs/tracking.md). The raw
figures stay under the runner's own machine (one CPU each), and the link is kept beside:
RESULTS/chain/<history>/<commit>-<env>.json (tfbench.keptfiles.chain_link.read), with the CPU of
its pairs and how far the chain's interval has spread since the last release the history
read itself (each link's interval factors multiplied: a bound, links being independent).
"""

from __future__ import annotations

import itertools
import json
import math
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from asv import util

from tfbench import cpu, keptfiles, whole
from tfbench.gate import kept as gate_kept
from tfbench.history import releases, repo
from tfbench.history.envsync import record_name
from tfbench.publish.results import checked_result

TIME = ".time_"  # a time benchmark's method: time_step
COPIED = ("probes", "packages")  # the runner's records of the release, beside its results
CI = ("stats_ci_99_a", "stats_ci_99_b")  # the pairs' interval on the figure before
RESET = ("stats_q_25", "stats_q_75", "stats_number", "stats_repeat", "samples")  # none read


class ChainError(ValueError):
    """A release that cannot be chained onto a history: what is missing, or ambiguous."""


@dataclass(frozen=True)
class Chained:
    path: Path  # the history's new results file
    link: Path  # the kept link
    moved: int  # time points moved by their pairs
    unmoved: list[str]  # time points with no chained figure, and why
    run: keptfiles.gate_run.GateRun
    gate: str  # the machine whose gate run read the pairs
    raw: str  # the machine that read the release
    links: int  # links since the last release the history read itself


def _results_path(results_dir: Path, machine: str, commit: str, env: str) -> Path:
    return results_dir / machine / f"{commit[:8]}-{env}.json"


def _one(found: list[str], what: str, option: str) -> str:
    """The one machine found, or ChainError naming none or each of them."""
    if not found:
        raise ChainError(f"{what}: none")
    if len(found) > 1:
        raise ChainError(f"{what}: {', '.join(found)}; name one with {option}")
    return found[0]


def before(tag: str) -> str:
    """The tracked release before `tag` (ChainError for the first or an untracked one)."""
    tags = [f"v{v}" for v in releases.tracked_versions()]
    if tag not in tags[1:]:
        raise ChainError(f"{tag} is not a tracked release after the first: {', '.join(tags)}")
    return tags[tags.index(tag) - 1]


def _load(path: Path, machine: str) -> dict[str, Any]:
    """An asv results file, checked as the report reads one (its names of their forms), as
    asv writes it (NaN: a skipped point)."""
    try:
        checked_result(path, machine)
        data = json.loads(path.read_text())
    except (util.UserError, OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        raise ChainError(f"{path}: {e}") from None
    return data


def _column(row: list[Any], columns: list[str], name: str, size: int) -> list[Any]:
    """One column of a benchmark's row, a value a point (asv leaves out trailing nulls)."""
    k = columns.index(name)
    found = row[k] if k < len(row) else None
    return list(found) if isinstance(found, list) else [None] * size


def _values(data: dict[str, Any], key: str) -> dict[tuple[str, ...], Any]:
    """A benchmark's value at each grid point (asv's param values)."""
    row = data["results"].get(key)
    if row is None:
        return {}
    combos = list(itertools.product(*row[1]))
    values = _column(row, data["result_columns"], "result", len(combos))
    return dict(zip(combos, values))


def _figure(value: Any) -> float | None:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    return float(value) if ok and value > 0 else None


def _spread(results_dir: Path, history: str, commit: str, env: str) -> tuple[int, dict]:
    """The links since the history last read a release itself, and each point's spread so
    far, from the link of the release before (none where the history read it)."""
    path = keptfiles.chain_link.path(results_dir, history, commit, env)
    if not path.exists() and not path.is_symlink():
        return 0, {}
    try:
        found = keptfiles.chain_link.read(path)
    except keptfiles.KeptFileError as e:
        raise ChainError(str(e)) from None
    return found["links"], {p["point"]: p["spread"] for p in found["points"]}


def chain(
    results_dir: Path,
    history_repo: Path,
    history: str,
    tag: str,
    env: str,
    raw: str | None = None,
    gate: str | None = None,
) -> Chained:
    """Chain release `tag` (its results read on machine `raw`, its pairs with the release
    before in the gate run kept by machine `gate`; each found where only one machine holds
    it) onto machine `history`'s series of environment `env`."""
    old = before(tag)
    commits = repo.history_tags(history_repo)
    new_commit, old_commit = commits[tag], commits[old]
    target = _results_path(results_dir, history, new_commit, env)
    if target.exists() or target.is_symlink():
        raise ChainError(f"{target} exists: {history} holds {tag} already")
    base = _results_path(results_dir, history, old_commit, env)
    if not base.is_file():
        raise ChainError(f"{base}: {history} holds no results of {old} on {env}")
    gate, run = _gate_run(results_dir, (old, tag), gate)
    name = target.name
    holders = sorted(
        p.parent.name
        for p in results_dir.glob(f"*/{name}")
        if p.parent.name != history and (raw is None or p.parent.name == raw)
    )
    raw = _one(holders, f"machines holding {tag} on {env}", "--raw")
    links, spread = _spread(results_dir, history, old_commit, env)
    pairs = {p["point"]: p for p in run["time"]["points"]}
    found = _load(results_dir / raw / name, raw)
    body, points, unmoved = _chained(found, _load(base, history), pairs, spread)
    whole.write(target, json.dumps(body, indent=1, allow_nan=True), sync=True)
    link = {
        **{"release": tag, "before": old, "env": env, "gate": gate, "raw": raw},
        "cpus": {i: run["cpus"][i] for i in sorted({p["cpu"] for p in points})},
        **{"links": links + 1, "points": points},
    }
    where = keptfiles.chain_link.path(results_dir, history, new_commit, env)
    keptfiles.chain_link.write(where, link)
    for folder in COPIED:  # what the runner recorded beside the release's results
        for record in (results_dir / folder / raw).glob(f"{record_name(new_commit, env, '*')}.*"):
            if record.is_file() and not record.is_symlink():
                (results_dir / folder / history).mkdir(parents=True, exist_ok=True)
                shutil.copyfile(record, results_dir / folder / history / record.name)
    return Chained(target, where, len(points), unmoved, run, gate, raw, links + 1)


def _gate_run(
    results_dir: Path, pair: tuple[str, str], gate: str | None
) -> tuple[str, keptfiles.gate_run.GateRun]:
    """The kept gate run of the pair (`gate`'s, or the one machine's that holds one), with
    its CPU and every time point's estimate."""
    runs = sorted(
        p.parent.name
        for p in (results_dir / keptfiles.gate_run.FOLDER).glob(f"*/{pair[0]}-{pair[1]}.json")
        if gate is None or p.parent.name == gate
    )
    gate = _one(runs, f"gate runs of {pair[0]} -> {pair[1]}", "--gate")
    try:
        run = gate_kept.read(results_dir, gate, pair)
    except keptfiles.KeptFileError as e:
        raise ChainError(str(e)) from None
    if run is None or not run["cpus"] or not run["time"]["points"]:
        raise ChainError(f"the gate run of {gate} keeps no CPU or no time points: read it again")
    return gate, run


def _chained(
    found: dict[str, Any],
    series: dict[str, Any],
    pairs: dict[str, keptfiles.fields.TimePoint],
    spread: dict[str, list[float]],
) -> tuple[dict[str, Any], list[dict[str, Any]], list[str]]:
    """The runner's results file made the history's: its machine's params the history's,
    each time point the history's figure for the release before moved by its pairs."""
    body = dict(found, params=series["params"])
    body["results"] = dict(found["results"])
    columns = found["result_columns"]
    points, unmoved = [], []
    for key, row in found["results"].items():
        if TIME not in key:
            continue
        combos = list(itertools.product(*row[1]))
        was = _values(series, key)
        new = {
            c: _column(row, columns, c, len(combos)) for c in ("stats_ci_99_a", "stats_ci_99_b")
        }
        new |= {c: [None] * len(combos) for c in RESET}
        new["result"] = []
        for k, combo in enumerate(combos):
            point = f"{key}({', '.join(combo)})"
            pair, base = pairs.get(point), _figure(was.get(combo))
            moved = pair is not None and pair["ratio"] is not None and base is not None
            values: list[float | None]
            if moved:
                assert pair is not None and base is not None  # for the type checker
                low, ratio, high = pair["low"], pair["ratio"], pair["high"]
                assert low is not None and ratio is not None and high is not None
                before_low, before_high = spread.get(point, [1.0, 1.0])
                spreads = [before_low * low / ratio, before_high * high / ratio]
                values = [base * ratio, base * low, base * high]
                points.append(dict(pair, before=base, value=values[0], spread=spreads))
            else:
                why = "no pairs" if pair is None or pair["ratio"] is None else "no figure before"
                if isinstance(row[0][k], int | float) and not math.isnan(row[0][k]):
                    unmoved.append(f"{point}: {why}")
                values = [math.nan, None, None]
            new["result"].append(values[0])
            new["stats_ci_99_a"][k], new["stats_ci_99_b"][k] = values[1], values[2]
        kept = [*row, *[None] * (len(columns) - len(row))]  # asv leaves out trailing nulls
        body["results"][key] = [new.get(c, cell) for c, cell in zip(columns, kept)]
    return body, points, unmoved


def links(
    results_dir: Path, history: str, problems: list[str]
) -> dict[str, keptfiles.chain_link.ChainLink]:
    """The releases chained onto a history (tag -> its link); a link not of its form is
    named in `problems` and left out."""
    found = {}
    for path in sorted((results_dir / keptfiles.chain_link.FOLDER / history).glob("*.json")):
        try:
            link = keptfiles.chain_link.read(path)
        except keptfiles.KeptFileError as e:
            problems.append(f"{e}: skipped")
            continue
        found[link["release"]] = link
    return found


def read_on(
    releases: list[str], named: str | None, chained: dict[str, keptfiles.chain_link.ChainLink]
) -> list[tuple[list[str], str]]:
    """Which CPU each release's time was read on: (releases, the CPU), those the machine
    read itself first, then each CPU its chained releases' pairs were read on."""
    own = [t for t in releases if t not in chained]
    found = [(own, cpu.named(named))] if own else []
    by_cpu: dict[str, list[str]] = {}
    for tag in releases:
        if tag in chained:
            on = "; ".join(map(cpu.label, chained[tag]["cpus"].values()))
            by_cpu.setdefault(on, []).append(tag)
    return found + [(tags, f"chained by pairs read on {on}") for on, tags in by_cpu.items()]


def line(done: Chained, history: str, tag: str) -> str:
    """What was chained, in a line."""
    return (
        f"{tag} chained onto {history}: {done.moved} time point(s) moved from "
        f"{before(tag)} by the pairs {done.gate}'s gate read on "
        f"{'; '.join(map(cpu.label, done.run['cpus'].values()))}; "
        f"{len(done.unmoved)} with no chained figure; memory as {done.raw} read it; link "
        f"{done.links} since {history} last read a release itself"
    )
