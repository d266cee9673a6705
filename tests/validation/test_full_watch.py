"""The watch at full size: a real tf-nightly build made from PyPI and read on every
sentinel (README command 2 reads one stood in for by its own environment:
tests/test_watch.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tfbench.nightly import sentinels, series

pytestmark = pytest.mark.validation


def test_a_real_build_is_read_on_every_sentinel_and_kept(tmp_path):
    """One published build read for real, in its own environment (made from PyPI when it is
    not cached): every sentinel measured twice, the file kept of its form."""
    version = "2.23.0.dev20261026"
    tfbench = Path(sys.executable).parent / "tfbench"
    argv = ["watch", "--since", version, "--until", version, "--no-time", "--machine", "t"]
    argv += ["--iterations", "20", "--warmup", "5"]  # what it asserts holds at any size
    run = subprocess.run(
        [str(tfbench), *argv, "--results", str(tmp_path)],
        capture_output=True, text=True, timeout=1200,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.startswith(f"read: {version}\n")
    (entry,) = series.load(tmp_path, "t")
    assert entry.build.git_version and entry.broken is None and entry.before
    for sentinel in sentinels.SENTINELS:
        assert [r["status"] for r in entry.readings[sentinel]] == ["ok", "ok"], sentinel
    heap = [r["heap_bytes"] for r in entry.readings["footprint"]]
    assert 100 << 20 < heap[0] < 400 << 20 and abs(heap[0] - heap[1]) < 512 << 10
