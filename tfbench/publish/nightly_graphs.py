"""The nightly history as asv's own site (`nightly/` in the published site): a generated
repository with one commit per tf-nightly build read (dated by its upload, its GIT_VERSION
in the message, tagged by its version) as asv's history, and each machine's sentinel
figures (the median of a build's readings) as asv results of `track_` benchmarks, so that
asv's graphs and its regressions page cover the nightlies.

Everything here is made at publish time from the checked nightly history
(tfbench.nightly.series), never kept: the commits cover the builds any machine read."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from asv.results import Results
from asv.runner import BenchmarkResult

from tfbench import figures, keptfiles
from tfbench.history.repo import Commit, chain
from tfbench.nightly import builds, sentinels
from tfbench.nightly.series import Entry
from tfbench.publish import asv_publish

FOLDER = "nightly"  # of the published site
ENV = "tf-nightly"  # asv's environment name of the results
VERSION = "1"  # the benchmarks' version: the sentinels and how a build is summed up
STEPS = tuple(sentinels.STEPS)


def _benchmark(figure: str, params: bool) -> dict[str, Any]:
    found = figures.named(figure)
    cls = "Sentinels" if params else "Footprint"
    return {
        "name": f"nightly.{cls}.{found.method}",
        "code": f"# {found.what}: the median of a build's readings (tfbench watch)",
        "param_names": ["sentinel"] if params else [],
        "params": [[repr(s) for s in STEPS]] if params else [],
        "type": "track",
        "unit": found.unit,
        "version": VERSION,
        "timeout": 60,
    }


BENCHMARKS = {
    "footprint-heap": _benchmark("footprint-heap", False),
    "retained": _benchmark("retained", True),
    "heap-peak": _benchmark("heap-peak", True),
}


def commits(found: dict[str, list[Entry]]) -> list[Commit]:
    """One commit per build any machine read, in upload order."""
    known: dict[str, Entry] = {}
    for entries in found.values():
        for e in entries:
            if e.build.git_version or e.version not in known:
                known[e.version] = e
    ordered = sorted(known.values(), key=lambda e: builds.parse_time(e.build.uploaded))
    return [
        Commit(
            {"tf-nightly.txt": f"tf-nightly=={e.version}\n".encode()},
            e.build.uploaded,
            f"tf-nightly {e.version}\n\n{e.build.git_version or 'GIT_VERSION not read'}",
            e.version,
        )
        for e in ordered
    ]


def write_results(
    machine: str,
    entries: list[Entry],
    hashes: dict[str, str],
    machine_json: Mapping[str, Any],
    target: Path,
) -> None:
    """The machine's builds as asv results files in target/<machine>/, with its machine.json."""
    (target / machine).mkdir(parents=True, exist_ok=True)
    (target / machine / "machine.json").write_text(json.dumps(machine_json))
    for e in entries:
        uploaded = builds.parse_time(e.build.uploaded)
        params = {k: v for k, v in machine_json.items() if k != "version"}
        results = Results(
            {**params, "python": "3.11"}, {}, hashes[e.version],
            int(uploaded.timestamp() * 1000), "3.11", ENV, {},
        )  # fmt: skip
        for figure, bench in BENCHMARKS.items():
            values = (
                [e.median(s, figure) for s in STEPS]
                if bench["params"]
                else [e.median(sentinels.FOOTPRINT, figure)]
            )
            outcome = BenchmarkResult(
                values, [None] * len(values), [None] * len(values), 0, "", None
            )
            results.add_result(bench, outcome, started_at=uploaded.replace(tzinfo=dt.UTC))
        results.save(str(target))


def build(found: dict[str, list[Entry]], machines: dict[str, Path], scratch: Path) -> Path:
    """asv's site of the nightlies in scratch/html (asv publish, offline); its directory.
    `machines`: each machine's machine.json where its releases were measured."""
    repo, results = scratch / "nightly.git", scratch / "results"
    hashes = chain(repo, commits(found))
    results.mkdir(parents=True)
    index = {b["name"]: b for b in BENCHMARKS.values()}
    (results / "benchmarks.json").write_text(json.dumps({**index, "version": 2}))
    for machine, entries in found.items():
        where = machines.get(machine)
        described: Mapping[str, Any] = (
            keptfiles.machine.read(where) if where else {"machine": machine, "version": 1}
        )
        write_results(machine, entries, hashes, described, results)
    html = scratch / "html"
    conf = {
        "version": 1,
        "project": "tf-nightly",
        "project_url": "https://pypi.org/project/tf-nightly/",
        "repo": str(repo),
        "branches": ["main"],
        "dvcs": "git",
        "environment_type": "virtualenv",
        "results_dir": str(results),
        "html_dir": str(html),
    }
    config = scratch / "asv.conf.json"
    config.write_text(json.dumps(conf))
    run = subprocess.run(
        asv_publish.command(str(config)),
        capture_output=True,
        text=True,
    )
    if run.returncode:
        raise RuntimeError(f"asv publish of the nightlies failed: {run.stderr[-2000:]}")
    return html
