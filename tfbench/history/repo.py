"""asv's history axis: `releases/history.git`, one commit per tracked release.

A bare repository built from the locks: one commit per release holding its lock files, in
PEP 440's order (a candidate before its release), commit date = the release's upload date,
tag vVERSION, fixed author and message. Everything that enters a commit is fixed (author,
dates, message, file bytes), so the hashes are the same on every machine and results from
several machines line up. A release added after the newest changes no earlier commit.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from packaging.version import Version

from tfbench.history import releases
from tfbench.history.envsync import lock_file_name
from tfbench.history.pythons import CANDIDATES
from tfbench.history.releases import (
    FLAVOURS,
    LOCKS_DIR,
    RELEASES_DIR,
    RELEASES_FILE,
    ROOT,
    parse,
    read_lock,
    tracked_versions,
)

HISTORY_REPO = RELEASES_DIR / "history.git"
IDENTITY = ("tfbench", "tfbench@users.noreply.github.com")


def _git(repo: Path, *args: str, stdin: bytes | None = None, env: dict | None = None) -> str:
    # No user or system configuration: signing, hooks or templates must not change hashes.
    base = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    base.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, **(env or {}))
    run = subprocess.run(["git", *args], cwd=repo, input=stdin, capture_output=True, env=base)
    if run.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed: {run.stderr.decode()}")
    return run.stdout.decode().strip()


@dataclass(frozen=True)
class Commit:
    """One commit of a generated history: its files, date (ISO 8601), message, tag."""

    files: dict[str, bytes]
    date: str
    message: str
    tag: str


def chain(repo: Path, commits: list[Commit]) -> dict[str, str]:
    """(Re)create a bare repository holding `commits` in order on `main`, every byte fixed
    (author, dates, message, files): the same hashes on every machine; tag -> hash."""
    if repo.exists():
        subprocess.run(["rm", "-rf", str(repo)], check=True)
    repo.mkdir(parents=True)
    _git(repo, "init", "--quiet", "--bare", "--template=", "--initial-branch=main")
    parent: str | None = None
    tags = {}
    for commit in commits:
        entries = []
        for name, data in sorted(commit.files.items()):
            blob = _git(repo, "hash-object", "-w", "--stdin", stdin=data)
            entries.append(f"100644 blob {blob}\t{name}\n")
        tree = _git(repo, "mktree", stdin="".join(entries).encode())
        when = int(dt.datetime.fromisoformat(commit.date.replace("Z", "+00:00")).timestamp())
        date = f"{when} +0000"
        env = {
            "GIT_AUTHOR_NAME": IDENTITY[0],
            "GIT_AUTHOR_EMAIL": IDENTITY[1],
            "GIT_COMMITTER_NAME": IDENTITY[0],
            "GIT_COMMITTER_EMAIL": IDENTITY[1],
            "GIT_AUTHOR_DATE": date,
            "GIT_COMMITTER_DATE": date,
        }
        args = ["commit-tree", tree, "-m", commit.message]
        if parent:
            args += ["-p", parent]
        parent = _git(repo, *args, env=env)
        tags[commit.tag] = parent
        _git(repo, "update-ref", f"refs/tags/{commit.tag}", parent)
    if parent:
        _git(repo, "update-ref", "refs/heads/main", parent)
    return tags


def build_history(
    versions: list[str], repo: Path = HISTORY_REPO, locks_dir: Path = LOCKS_DIR
) -> dict[str, str]:
    """(Re)create the bare history repository; returns tag -> commit hash."""
    locks = sorted(
        (read_lock(v, locks_dir) for v in versions), key=lambda lock: Version(lock.version)
    )
    commits = [
        Commit(dict(lock.files), lock.released, f"TensorFlow {lock.version}", f"v{lock.version}")
        for lock in locks
    ]
    return chain(repo, commits)


def history_tags(repo: Path = HISTORY_REPO) -> dict[str, str]:
    """tag -> commit hash of an existing history repository."""
    out = _git(repo, "for-each-ref", "--format=%(refname:short) %(objectname)", "refs/tags")
    return dict(line.split() for line in out.splitlines())


def _locked(version: str, locks_dir: Path) -> bool:
    return all((locks_dir / version / lock_file_name(f)).exists() for f in FLAVOURS)


def update(
    versions: list[str] | None = None,
    say: Callable[[str], None] = print,
    locks_dir: Path = LOCKS_DIR,
    repo: Path = HISTORY_REPO,
) -> dict[str, str]:
    """Lock every tracked release that has no lock yet (or none for a candidate Python: its
    lock, or why it has none), then rebuild the history."""
    versions = tracked_versions() if versions is None else versions
    for version in versions:
        began = time.monotonic()
        if not _locked(version, locks_dir):
            say(f"locking tensorflow {version} (cpu, gpu; Pythons {', '.join(CANDIDATES)}) ...")
            releases.lock_release(version, locks_dir)
            say(f"locked {version} in {time.monotonic() - began:.0f} s")
            continue
        for python in CANDIDATES:
            if releases.supports(version, python, locks_dir) is None:
                say(f"locking tensorflow {version} for Python {python} ...")
                done = releases.lock_python(version, python, locks_dir=locks_dir)
                say(f"{version} on Python {python}: {'locked' if done else 'no wheel'}")
    say(f"building {repo.name} ({len(versions)} releases) ...")
    return build_history(versions, repo, locks_dir)


TF_EXTRA = re.compile(r'^tf = \["tensorflow-cpu==[^"]*"\]$', re.M)


def add(
    versions: list[str],
    say: Callable[[str], None] = print,
    listing: Path = RELEASES_FILE,
    locks_dir: Path = LOCKS_DIR,
    repo: Path = HISTORY_REPO,
    pyproject: Path = ROOT / "pyproject.toml",
) -> dict[str, str]:
    """Track new releases: append them to the list, lock them, rebuild the history, and pin
    the `tf` extra (the default environment's TensorFlow) to the newest. Only releases
    newer than every tracked one: one inserted before would change the hashes of the
    commits after it, and orphan their results; and only ones the index has a TARGET wheel
    of. ValueError says why a version is refused; a failed lock leaves the list as it was."""
    tracked = tracked_versions(listing)
    wanted = sorted({str(parse(v.removeprefix("v"))) for v in versions}, key=Version)
    again = [v for v in wanted if v in tracked]
    if again:
        raise ValueError(f"already tracked: {', '.join(again)}")
    if tracked and Version(wanted[0]) <= Version(tracked[-1]):
        raise ValueError(
            f"{wanted[0]} is older than the newest tracked release, {tracked[-1]}: it would "
            "change the history's hashes after it (and orphan their results); only newer "
            "releases are added"
        )
    index = releases.available(releases.index_files("tensorflow-cpu"))
    missing = [v for v in wanted if v not in index]
    if missing:
        raise ValueError(
            f"{releases.INDEX} has no tensorflow-cpu {', '.join(missing)} wheel for "
            f"{releases.TARGET}; its newest: {', '.join(sorted(index, key=Version)[-3:])}"
        )
    text = listing.read_text()
    new_locks = [v for v in wanted if not (locks_dir / v).exists()]
    listing.write_text(text + ("" if text.endswith("\n") else "\n") + "\n".join(wanted) + "\n")
    try:
        tags = update(tracked_versions(listing), say, locks_dir, repo)
    except BaseException:  # nothing half-added stays tracked
        listing.write_text(text)
        for version in new_locks:
            shutil.rmtree(locks_dir / version, ignore_errors=True)
        build_history(tracked, repo, locks_dir)
        raise
    extra = f'tf = ["tensorflow-cpu=={wanted[-1]}"]'
    pyproject.write_text(TF_EXTRA.sub(extra, pyproject.read_text()))
    say(f"{pyproject.name}: {extra}")
    return tags
