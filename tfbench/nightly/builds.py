"""tf-nightly builds: which the index has between two releases, an environment for each
(that day's dependencies), and its commit.

A build is master as it stood that day, built with GPU support (tf-nightly is not
tensorflow-cpu: its footprint differs by tens of MiB), so builds are compared with builds
only. Its environment is resolved by uv as PyPI stood an hour after the build's upload
(`--exclude-newer`), so keras-nightly and the rest are that day's; it lives under the
release environments' root as `nightly-VERSION`, made once (built aside, renamed in), and
holds the build's `tf.version.GIT_VERSION` (which also proves it imports). Its files are its
own (uv's cache is not used), so that the environments' disk budget is what they take:
past it, the oldest are removed (`prune`).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from packaging.version import Version

from tfbench.history import envs
from tfbench.history.envsync import compile_bytecode
from tfbench.history.releases import available, index_files
from tfbench.nightly.policy import Broken, Build

PROJECT = "tf-nightly"
PREFIX = "nightly-"
MARK = ".tfbench-nightly.json"  # {"version", "uploaded", "git_version"}: the env is whole
GIT_VERSION = re.compile(r"-g([0-9a-f]{7,40})$")
REPOSITORY = "https://github.com/tensorflow/tensorflow"
CUT_MARGIN = dt.timedelta(days=3)  # a release's branch cut can follow its upload's date


def between(old: Build | str, new_version: str, new_uploaded: str) -> list[Build]:
    """The builds of NEW's version line (2.22.0.devYYYYMMDD for 2.22.0rc0) uploaded before
    NEW (a margin for its branch cut), oldest first: master between the two releases."""
    base = Version(new_version).base_version
    limit = parse_time(new_uploaded) + CUT_MARGIN
    found = [
        Build(v, t)
        for v, t in available(index_files(PROJECT)).items()
        if Version(v).is_devrelease and Version(v).base_version == base and parse_time(t) <= limit
    ]
    return sorted(found, key=lambda b: Version(b.version))


def none_between(old: str, new: str) -> str:
    """Why no build lies between two releases: the index holds the newest builds only."""
    held = published()
    since = f"its oldest is {held[0].version} of {held[0].uploaded[:10]}" if held else "none"
    return f"no nightly build between {old} and {new} on the index ({since})"


def published() -> list[Build]:
    """Every tf-nightly build on the index, oldest upload first."""
    found = available(index_files(PROJECT)).items()
    return sorted((Build(v, t) for v, t in found), key=lambda b: parse_time(b.uploaded))


def parse_time(stamp: str) -> dt.datetime:
    """An upload time as the index gives it (ISO 8601, Z)."""
    return dt.datetime.fromisoformat(stamp.replace("Z", "+00:00"))


def commit(git_version: str | None) -> str | None:
    """The commit a GIT_VERSION names (v1.12.1-145377-g9edd58f895c -> 9edd58f895c)."""
    match = GIT_VERSION.search(git_version or "")
    return match.group(1) if match else None


def compare_url(good: str | None, bad: str | None) -> str | None:
    """The GitHub compare view of the commits between two builds."""
    a, b = commit(good), commit(bad)
    return f"{REPOSITORY}/compare/{a}...{b}" if a and b else None


def path(build: Build, root: Path) -> Path:
    return root / f"{PREFIX}{build.version}"


def made(build: Build, root: Path) -> Path | None:
    """The Python of the build's environment where it is whole (made, not pruned)."""
    where = path(build, root)
    return where / "bin" / "python" if (where / MARK).is_file() else None


def ensure(build: Build, root: Path, say=print) -> tuple[Path, Build]:
    """The build's environment's Python, made now if needed, and the build with its
    GIT_VERSION; Broken when it cannot be installed or does not import."""
    where = path(build, root)
    with envs.building(where):
        python = made(build, root)
        if python:
            known = json.loads((where / MARK).read_text())
            return python, Build(build.version, build.uploaded, known["git_version"])
        found = _make(build, root, where, say)
    prune(root, budget_bytes(), keep=where.name)
    return where / "bin" / "python", found


def _make(build: Build, root: Path, where: Path, say) -> Build:
    say(f"{build.version}: creating its environment (uv, as PyPI stood at its upload) ...")
    partial = root / f".{where.name}.partial"
    shutil.rmtree(partial, ignore_errors=True)
    python = partial / "bin" / "python"
    as_of = (parse_time(build.uploaded) + dt.timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    try:
        envs.run_uv("venv", "--quiet", "--python", sys.executable, str(partial))
        envs.run_uv(
            "pip", "install", "--quiet", "--no-cache", "--python", str(python),
            "--exclude-newer", as_of, f"{PROJECT}=={build.version}", "psutil",
        )  # fmt: skip
        compile_bytecode(str(python))
        git = _git_version(python)
    except (envs.EnvError, subprocess.CalledProcessError) as e:
        shutil.rmtree(partial, ignore_errors=True)
        raise Broken(f"cannot be installed: {e}") from e
    except Broken:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    found = Build(build.version, build.uploaded, git)
    mark = partial / MARK
    mark.write_text(
        json.dumps({"version": build.version, "uploaded": build.uploaded, "git_version": git})
    )
    shutil.rmtree(where, ignore_errors=True)
    partial.rename(where)
    return found


def budget_bytes() -> int:
    """The disk nightly environments may take: TFBENCH_NIGHTLY_GIB, default 40 (a build's
    environment is about 2 GiB)."""
    return int(float(os.environ.get("TFBENCH_NIGHTLY_GIB", "40")) * (1 << 30))


def prune(root: Path, budget: int, keep: str | None = None) -> list[str]:
    """Remove nightly environments, the oldest made first, until they take at most `budget`
    bytes (`keep` stays); the names removed."""
    made = sorted(
        (e for e in envs.listing(root) if e.name.startswith(PREFIX)),
        key=lambda e: (root / e.name).stat().st_mtime,
    )
    total, gone = sum(e.bytes_own for e in made), []
    for e in made:
        if total <= budget:
            break
        if e.name != keep:
            shutil.rmtree(root / e.name)
            total -= e.bytes_own
            gone.append(e.name)
    return gone


def packages(build: Build, root: Path) -> list[str] | None:
    """The distributions in the build's environment (name==version, sorted); None when the
    environment is gone (pruned) or cannot say."""
    python = made(build, root)
    if python is None:
        return None
    listed = subprocess.run(
        [str(python), "-c", LIST_PACKAGES],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin"},
    )
    return sorted(listed.stdout.split(), key=str.lower) if listed.returncode == 0 else None


LIST_PACKAGES = (
    "from importlib.metadata import distributions as d\n"
    "print(*{f\"{x.metadata['Name']}=={x.version}\" for x in d()})"
)


def _git_version(python: Path) -> str:
    """The build's GIT_VERSION, read by importing it; Broken when it does not import."""
    run = subprocess.run(
        [str(python), "-c", "import tensorflow as tf; print(tf.version.GIT_VERSION)"],
        capture_output=True,
        text=True,
        env={"TF_CPP_MIN_LOG_LEVEL": "3", "PATH": "/usr/bin:/bin"},
    )
    if run.returncode:
        tail = (run.stderr or run.stdout).strip().splitlines()[-1:]
        raise Broken(f"does not import: {' '.join(tail)}")
    return run.stdout.strip().splitlines()[-1]


def pin_changes(old: list[str], new: list[str]) -> list[str]:
    """name old -> new, for each distribution whose name==version differs between the two
    lists (TensorFlow and tf-nightly left out)."""
    a, b = (dict(line.split("==", 1) for line in pins) for pins in (old, new))
    names = sorted(set(a) | set(b), key=str.lower)
    return [
        f"{n} {a.get(n, 'none')} -> {b.get(n, 'none')}"
        for n in names
        if a.get(n) != b.get(n)
        and not n.lower().startswith(("tensorflow", "tf-nightly", "tf_nightly"))
    ]
