"""The asv suite itself runs under asv without failures."""

import os
import subprocess
import sys

import pytest
from conftest import scratch_asv_conf

pytestmark = pytest.mark.slow  # subprocesses and TensorFlow


def test_asv_runs_the_suite_without_failures(tmp_path):
    """In this environment (asv's `--python=same`), nothing saved: every point has a value
    or a skip."""
    pytest.importorskip("tensorflow")
    conf = scratch_asv_conf(tmp_path, tmp_path / "results")
    env = {**os.environ, "HOME": str(tmp_path)}  # asv keeps its machine file in HOME
    asv = [sys.executable, "-m", "asv", "--config", str(conf)]
    subprocess.run([*asv[:3], "machine", "--yes", "--machine", "ci"], env=env, check=True)
    run = subprocess.run(
        [*asv, "run", "--python=same", "--quick", "--dry-run", "--show-stderr", "--machine", "ci"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=1800,
        env=env,
    )
    output = run.stdout + run.stderr
    assert run.returncode == 0, output[-5000:]
    assert "failed" not in output.lower(), output[-5000:]
    assert "n/a" in output  # GPU and NumPy-with-tape points are skips, not failures
