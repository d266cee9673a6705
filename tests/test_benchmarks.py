"""The asv suite itself runs under asv without failures."""

import json
import os
import subprocess
import sys

import pytest

from tfbench.releases import ROOT


def test_asv_runs_the_suite_without_failures(tmp_path):
    """In this environment (asv's `--python=same`), nothing saved: every point has a value or a skip."""
    pytest.importorskip("tensorflow")
    from asv.util import load_json

    # The project's config, with everything asv writes moved out of the working tree.
    conf = load_json(ROOT / "asv.conf.json", js_comments=True)
    conf.update(repo=str(ROOT / conf["repo"]), benchmark_dir=str(ROOT / conf["benchmark_dir"]),
                results_dir=str(tmp_path / "results"), env_dir=str(tmp_path / "env"),
                html_dir=str(tmp_path / "html"))
    (tmp_path / "asv.conf.json").write_text(json.dumps(conf))
    env = {**os.environ, "HOME": str(tmp_path)}  # asv keeps its machine file in HOME
    asv = [sys.executable, "-m", "asv", "--config", str(tmp_path / "asv.conf.json")]
    subprocess.run([*asv[:3], "machine", "--yes", "--machine", "ci"], env=env, check=True)
    run = subprocess.run(
        [*asv, "run", "--python=same", "--quick", "--dry-run", "--show-stderr",
         "--machine", "ci"],
        cwd=tmp_path, capture_output=True, text=True, timeout=1800, env=env,
    )
    output = run.stdout + run.stderr
    assert run.returncode == 0, output[-5000:]
    assert "failed" not in output.lower(), output[-5000:]
    assert "n/a" in output  # GPU and NumPy-with-tape points are skips, not failures
