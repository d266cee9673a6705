"""Every committed lock re-locked from PyPI, and the history rebuilt from them (the newest
release's alone is README command 2's: tests/test_releases.py)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from tfbench.history import releases, repo

pytestmark = pytest.mark.validation


def test_relocking_reproduces_every_committed_lock_and_the_history(tmp_path):
    """uv, resolving as PyPI stood the day after each release, gives the committed locks
    byte for byte on any machine, and so the committed history's hashes."""
    versions = releases.tracked_versions()
    with ThreadPoolExecutor(4) as pool:  # uv mostly waits on the index: four at once
        relocked = pool.map(lambda v: releases.lock_release(v, locks_dir=tmp_path), versions)
        for version, lock in zip(versions, relocked, strict=True):
            assert lock == releases.read_lock(version), version
    rebuilt = repo.build_history(versions, repo=tmp_path / "history.git", locks_dir=tmp_path)
    assert rebuilt == repo.history_tags()
