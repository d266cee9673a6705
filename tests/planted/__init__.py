"""A test-only asv suite with planted changes, for calibrating `tfbench gate` through the
path a user takes (asv results -> gate). Its commits name what each side plants; nothing
here is in the catalog."""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LEFT = "tfbench-planted-"  # a file each process preparing a step writes, as autograph does
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]  # tfbench; the glue, common.py


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def make_project(base: Path) -> Path:
    """An asv project in `base` over a two-commit repository: v1.0.0 plants nothing, v1.0.1
    plants a 25% slower step, a 64 KiB/iteration leak, a +16 MiB transient peak and a leak
    of 64 KiB/iteration made 66. Its asv.conf.json is `base`/asv.conf.json; the gate reads
    the plants through TFBENCH_PLANTED_REPO=`base`/repo."""
    repo = base / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    for tag, plant in (("v1.0.0", ""), ("v1.0.1", "slow leak peak kept")):
        (repo / "plant").write_text(plant + "\n")
        _git(repo, "add", "plant")
        _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", tag)
        _git(repo, "tag", tag)
    conf = {
        "version": 1,
        "project": "planted",
        "repo": str(repo),
        "branches": ["main"],
        "dvcs": "git",
        "environment_type": "virtualenv",
        "benchmark_dir": str(ROOT / "tests" / "planted"),
        "results_dir": "results",
        "env_dir": "env",
        "html_dir": "html",
        "launch_method": "forkserver",
        "build_command": [],
        "install_command": [],
        "uninstall_command": [],
    }
    (base / "asv.conf.json").write_text(json.dumps(conf))
    return base
