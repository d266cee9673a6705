"""The reports filed upstream on a machine (`tfbench upstream`: results/upstream/<machine>/
<slug>/bisect.json), as the release report lists and links them. Untrusted input like any
result: each bisect.json is read with every field checked (tfbench.keptfiles), a file that
is not of its form is a problem named in the report, and what the site shows of a report
(issue.md, repro.py, plot.png, bisect.json) is rendered again from the checked fields, not
copied: no byte of a kept write-up is published."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from tfbench import grammar, keptfiles
from tfbench.nightly import upstream
from tfbench.publish.results import Data

FOLDER = keptfiles.bisection.FOLDER  # the site holds them where the results do
WHERE_MEASURED = (
    "a user's step: its issue and reproducer are written where its code is "
    "(tfbench upstream FILE::FUNCTION)"
)


@dataclass(frozen=True)
class Filed:
    slug: str
    target: str
    metric: str
    line: str  # what the bisection concluded, one line
    rendered: bool  # its write-up can be rendered here: a catalog scenario's
    machine: str  # where it was bisected (its folder)

    def link(self, name: str) -> str:
        """A file of the report, relative to the published site."""
        return f"{FOLDER}/{self.machine}/{self.slug}/{name}"


def machines(results_dir: Path) -> list[str]:
    """The machines whose bisections are kept: a nightly bisection reads the heap, the same
    on any CPU, so the report lists every machine's, whether or not it holds a history (a
    folder named as no machine is, or a link, is not read)."""
    root = results_dir / FOLDER
    found = sorted(root.iterdir()) if root.is_dir() and not root.is_symlink() else []
    return [
        p.name
        for p in found
        if p.is_dir() and not p.is_symlink() and grammar.MACHINE.fullmatch(p.name)
    ]


def render(results_dir: Path, machine: str, site: Path) -> None:
    """Each report's write-up into the site, rendered from its checked bisect.json (a
    catalog scenario's; a user's step has its code where it was measured): the same files
    `tfbench upstream` writes, and the checked record as bisect.json."""
    for kept in sorted(folder(results_dir, machine).glob("*/bisect.json")):
        if not grammar.SLUG.fullmatch(kept.parent.name) or kept.parent.is_symlink():
            continue
        try:
            data = keptfiles.bisection.read(kept)
        except keptfiles.KeptFileError:
            continue  # named by `read`
        target = site / FOLDER / machine / kept.parent.name
        if upstream.render_again(data, target) is not None:
            (target / "bisect.json").write_text(json.dumps(data, indent=1, sort_keys=True))


def folder(results_dir: Path, machine: str) -> Path:
    return results_dir / FOLDER / machine


def read(data: Data) -> list[Filed]:
    """Every machine's bisections, each checked; a file not of its form named in `data`'s
    problems."""
    if data.results_dir is None:
        return []
    return [f for m in machines(data.results_dir) for f in _read(data, m)]


def _read(data: Data, machine: str) -> list[Filed]:
    found = []
    assert data.results_dir is not None
    for kept in sorted(folder(data.results_dir, machine).glob("*/bisect.json")):
        if not grammar.SLUG.fullmatch(kept.parent.name):
            data.problems.append(f"{kept}: not a report's folder name: skipped")
            continue
        try:
            run = keptfiles.bisection.read(kept)
        except keptfiles.KeptFileError as e:
            data.problems.append(str(e))
            continue
        rendered = "scenario" in run["target"]
        line = _line(run)
        found.append(Filed(kept.parent.name, _target(run), run["metric"], line, rendered, machine))
    return found


def _target(run: keptfiles.bisection.Bisection) -> str:
    target = run["target"]
    if "scenario" in target:
        params = " ".join(f"{k}={v}" for k, v in target["params"].items())
        return f"{target['scenario']} {params}".strip()
    return f"{target['file']}::{target['function']}"


def _line(run: keptfiles.bisection.Bisection) -> str:
    kind = run["kind"]
    if kind == "step":
        return (
            f"first bad nightly {run['first_bad']} (last good {run['last_good']}): "
            f"{run['compare_url'] or 'commits unknown'}"
        )
    return {
        "drift": "a drift over the nightlies, no single build",
        "none": "no nightly shows it: the release branch or a dependency",
    }.get(kind, "undecided")
