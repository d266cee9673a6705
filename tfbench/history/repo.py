"""asv's history axis: `releases/history.git`, one commit per tracked release.

A bare repository built from the locks: one commit per release holding its lock files,
commit date = the release's upload date, tag vX.Y.Z, fixed author and message. Everything
that enters a commit is fixed (author, dates, message, file bytes), so the hashes are the
same on every machine and results from several machines line up.
"""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
from pathlib import Path

from tfbench.history.envsync import lock_file_name
from tfbench.history.releases import (
    FLAVOURS,
    LOCKS_DIR,
    RELEASES_DIR,
    lock_release,
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


def build_history(
    versions: list[str], repo: Path = HISTORY_REPO, locks_dir: Path = LOCKS_DIR
) -> dict[str, str]:
    """(Re)create the bare history repository; returns tag -> commit hash."""
    locks = sorted((read_lock(v, locks_dir) for v in versions), key=lambda lock: lock.released)
    if repo.exists():
        subprocess.run(["rm", "-rf", str(repo)], check=True)
    repo.mkdir(parents=True)
    _git(repo, "init", "--quiet", "--bare", "--template=", "--initial-branch=main")
    parent: str | None = None
    tags = {}
    for lock in locks:
        entries = []
        for name, data in sorted(lock.files.items()):
            blob = _git(repo, "hash-object", "-w", "--stdin", stdin=data)
            entries.append(f"100644 blob {blob}\t{name}\n")
        tree = _git(repo, "mktree", stdin="".join(entries).encode())
        when = int(dt.datetime.fromisoformat(lock.released.replace("Z", "+00:00")).timestamp())
        date = f"{when} +0000"
        env = {
            "GIT_AUTHOR_NAME": IDENTITY[0],
            "GIT_AUTHOR_EMAIL": IDENTITY[1],
            "GIT_COMMITTER_NAME": IDENTITY[0],
            "GIT_COMMITTER_EMAIL": IDENTITY[1],
            "GIT_AUTHOR_DATE": date,
            "GIT_COMMITTER_DATE": date,
        }
        args = ["commit-tree", tree, "-m", f"TensorFlow {lock.version}"]
        if parent:
            args += ["-p", parent]
        parent = _git(repo, *args, env=env)
        tags[f"v{lock.version}"] = parent
        _git(repo, "update-ref", f"refs/tags/v{lock.version}", parent)
    if parent:
        _git(repo, "update-ref", "refs/heads/main", parent)
    return tags


def history_tags(repo: Path = HISTORY_REPO) -> dict[str, str]:
    """tag -> commit hash of an existing history repository."""
    out = _git(repo, "for-each-ref", "--format=%(refname:short) %(objectname)", "refs/tags")
    return dict(line.split() for line in out.splitlines())


def update(versions: list[str] | None = None) -> dict[str, str]:
    """Lock every tracked release that has no lock yet, then rebuild the history."""
    versions = tracked_versions() if versions is None else versions
    for version in versions:
        if not all((LOCKS_DIR / version / lock_file_name(f)).exists() for f in FLAVOURS):
            print(f"locking tensorflow {version} ...", file=sys.stderr)
            lock_release(version)
    return build_history(versions)
