"""The reports filed upstream on a machine (`tfbench upstream`: results/upstream/<machine>/
<slug>/bisect.json, beside issue.md, repro.py and plot.png), as the release report lists
and links them. Untrusted input like any result: a file that cannot be read is a problem
named in the report."""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from tfbench import formats
from tfbench.publish.results import Data

FOLDER = "upstream"
SLUG = re.compile(r"[a-z0-9-]+")


@dataclass(frozen=True)
class Filed:
    slug: str
    target: str
    metric: str
    line: str  # what the bisection concluded, one line

    def link(self, machine: str, name: str) -> str:
        """A file of the report, relative to the published site."""
        return f"{FOLDER}/{machine}/{self.slug}/{name}"


FILES = ("issue.md", "repro.py", "plot.png", "bisect.json")


def copy(results_dir: Path, machine: str, site: Path) -> None:
    """The reports' files into the site, regular files of the known names only (the
    results are untrusted: a link is not followed)."""
    for report in folder(results_dir, machine).glob("*"):
        if not SLUG.fullmatch(report.name) or report.is_symlink() or not report.is_dir():
            continue
        for name in FILES:
            source = report / name
            if source.is_file() and not source.is_symlink():
                target = site / FOLDER / machine / report.name / name
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, target)


def folder(results_dir: Path, machine: str) -> Path:
    return results_dir / FOLDER / machine


def read(data: Data, machine: str) -> list[Filed]:
    if data.results_dir is None:
        return []
    found = []
    for kept in sorted(folder(data.results_dir, machine).glob("*/bisect.json")):
        if not SLUG.fullmatch(kept.parent.name):
            data.problems.append(f"{kept}: not a report's folder name: skipped")
            continue
        try:
            run = json.loads(kept.read_text())
            formats.check(run, formats.BISECTION, str(kept))
            found.append(Filed(kept.parent.name, _target(run), str(run["metric"]), _line(run)))
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
            data.problems.append(f"{kept}: {e}")
    return found


def _target(run: dict) -> str:
    target = run["target"]
    if "scenario" in target:
        params = " ".join(f"{k}={v}" for k, v in target.get("params", {}).items())
        return f"{target['scenario']} {params}".strip()
    return f"{Path(str(target['file'])).name}::{target['function']}"


def _line(run: dict) -> str:
    kind = run["kind"]
    if kind == "step":
        return (
            f"first bad nightly {run['first_bad']} (last good {run['last_good']}): "
            f"{run.get('compare_url') or 'commits unknown'}"
        )
    return {
        "drift": "a drift over the nightlies, no single build",
        "none": "no nightly shows it: the release branch or a dependency",
    }.get(kind, "undecided")
