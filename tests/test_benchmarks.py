"""The asv suite itself: benchmark modules import cheaply and run under asv without failures."""

import os
import subprocess
import sys

import pytest

from tfbench.releases import ROOT


def test_benchmark_modules_do_not_import_tensorflow():
    code = "import benchmarks.loops, sys; print('tensorflow' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout
    assert out.strip() == "False"


@pytest.mark.parametrize("bench", [r"loops\.MatrixPower\.", r"loops\.MatrixPowerMemory\."])
def test_asv_runs_the_loop_family_without_failures(bench, tmp_path):
    """In this environment (asv's `--python=same`), nothing saved: every point has a value or a skip."""
    pytest.importorskip("tensorflow")
    env = {**os.environ, "HOME": str(tmp_path)}  # asv keeps its machine file in HOME
    asv = [sys.executable, "-m", "asv"]
    subprocess.run([*asv, "machine", "--yes", "--machine", "ci"], cwd=ROOT, env=env, check=True)
    run = subprocess.run(
        [*asv, "run", "--python=same", "--quick", "--dry-run", "--show-stderr",
         "--machine", "ci", "--bench", bench],
        cwd=ROOT, capture_output=True, text=True, timeout=1800, env=env,
    )
    output = run.stdout + run.stderr
    assert run.returncode == 0, output[-5000:]
    assert "failed" not in output.lower(), output[-5000:]
    assert "n/a" in output  # GPU and NumPy-with-tape points are skips, not failures
