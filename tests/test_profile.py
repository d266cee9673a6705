"""`tfbench profile`: a release's run by phase, and the tests by test and tier."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import ROOT, run_cli

from tfbench import profile

KEPT = ROOT / "retired" / "results" / "linux-2cpu-24gb" / "d2a6c68b-virtualenv-py3.11.json"


def test_a_kept_run_reads_as_its_probes_and_samples_by_family():
    result = json.loads(KEPT.read_text())
    rows = dict(profile.release_rows(result, None))
    setup_caches = [s for n, s in result["durations"].items() if n.startswith("<setup_cache")]
    probes = sum(s for n, s in rows.items() if n.startswith("probes: "))
    assert probes == pytest.approx(sum(setup_caches))
    assert rows["probes: loops"] == result["durations"]["<setup_cache loops:25>"]
    samples = sum(s for n, s in rows.items() if n.startswith("asv "))
    assert rows["probes and samples"] == pytest.approx(probes + samples)
    assert 0 < samples < rows["probes and samples"]


def test_the_timeline_gives_each_phase_until_the_next_and_the_rest_to_asv():
    timeline = profile.Timeline()
    for at, line in [
        (0.0, "· Creating environments"),
        (2.0, "· Discovering benchmarks"),
        (3.0, "·· Installing 1234abcd into virtualenv-py3.11"),
        (10.0, "·· done"),
        (14.0, "· Running 3 total benchmarks (1 commits * 1 environments * 3 benchmarks)"),
        (15.0, "[ 0.00%] ·· Benchmarking virtualenv-py3.11"),
    ]:
        timeline.see(at, line)
    timeline.total = 40.0
    # installing the release comes while asv discovers: the environment's time, not discovery's
    assert timeline.seconds() == {"environment": 13.0, "discovery": 1.0, "benchmarks": 26.0}
    result = {
        "durations": {"<setup_cache loops:25>": 12.0},
        "result_columns": ["result", "params", "version", "started_at", "duration"],
        "results": {"loops.MatrixPower.time_step": [None, [], "v", 0, 5.0]},
    }
    rows = dict(profile.release_rows(result, timeline))
    assert rows["probes: loops"] == 12.0 and rows["asv time_: loops"] == 5.0
    assert rows["asv's own (spawns, imports, writing)"] == 26.0 - 17.0
    assert rows["total"] == 40.0
    assert profile.release_table(list(rows.items())).count("\n") == len(rows) + 1


def test_the_tests_profile_lines_come_from_a_run_and_a_bad_line_is_named(tmp_path):
    (tmp_path / "test_two.py").write_text(
        "import pytest, time\n"
        "def test_quick(): pass\n"
        "@pytest.mark.slow\n"
        "def test_waits(): time.sleep(0.3)\n"
    )
    (tmp_path / "conftest.py").write_text((ROOT / "tests" / "conftest.py").read_text())
    out = tmp_path / "profile.jsonl"
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:randomly",
            "-m",
            "slow or not slow",
            "-o",
            "markers=slow",
            str(tmp_path),
        ],
        cwd=tmp_path,
        env=dict(os.environ, TFBENCH_TEST_PROFILE=str(out), PYTHONPATH=str(ROOT)),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    lines = {x["test"].rpartition("::")[2]: x for x in profile.test_lines(out)}
    assert set(lines) == {"test_quick", "test_waits"}
    assert lines["test_waits"]["tier"] == "slow" and lines["test_quick"]["tier"] == "unit"
    assert lines["test_waits"]["wall"] >= 0.3 > lines["test_waits"]["cpu"]
    table = profile.tests_table(lines.values(), 5.0, slowest=1)
    assert "| slow | 1 |" in table and "| unit | 1 |" in table
    assert "The run's wall time: 5 s." in table and "test_quick" not in table
    out.write_text(out.read_text() + "not json\n")
    try:
        profile.test_lines(out)
    except ValueError as e:
        assert str(e) == f"{out}:3: not a test profile line"
    else:
        raise AssertionError("a bad line was read")


def test_the_command_profiles_a_kept_run_into_a_document_and_refuses_another_file(tmp_path):
    document = tmp_path / "profile.md"
    run = run_cli("profile", "release", "--result", str(KEPT), "--into", str(document))
    assert run.returncode == 0, run.stderr
    assert "| probes: loops | 121 |" in run.stdout
    text = document.read_text()
    assert text.startswith("# Where the time goes\n\n## ") and "A kept release run" in text
    assert "CPU `" in text and run.stdout.strip() in text
    bad = tmp_path / "bad.json"
    bad.write_text("[]")
    refused = run_cli("profile", "release", "--result", str(bad))
    assert refused.returncode == 2 and f"{bad}: not an asv results file" in refused.stderr


@pytest.mark.slow  # a pytest run of its own, on two workers
def test_the_command_profiles_a_test_run_by_test(tmp_path):
    document = tmp_path / "profile.md"
    run = run_cli("profile", "tests", "tests/test_chain.py", "--into", str(document))
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr
    named = {line.split("`")[1] for line in run.stdout.splitlines() if line.startswith("| `")}
    assert named and all(n.startswith("tests/test_chain.py::test_") for n in named)
    assert "| unit |" in run.stdout and "The run's wall time:" in run.stdout
    assert "The tests (`pytest -q -n 2 --dist worksteal`)" in document.read_text()


def test_a_results_file_from_elsewhere_is_refused_in_one_line_or_shown_escaped(tmp_path):
    """A results file may come from another machine: a duration that is no number of
    seconds is a one-line refusal; a name with markup is shown as text, not HTML."""
    base = {"result_columns": ["result", "duration"], "durations": {}, "results": {}}
    for bad in ({"<setup_cache loops:1>": "1e3"}, {"<setup_cache loops:1>": float("nan")}):
        path = tmp_path / "bad.json"
        path.write_text(json.dumps(dict(base, durations=bad)))
        refused = run_cli("profile", "release", "--result", str(path))
        assert refused.returncode == 2, refused.stderr
        assert refused.stderr.count("\n") == 1 and "not seconds" in refused.stderr
    marked = {"<img src=x onerror=alert(1)>|x.Y.time_step": [None, 2.0]}
    rows = profile.release_rows(dict(base, results=marked), None)
    table = profile.release_table(rows)
    assert "<img" not in table and "&lt;img" in table and "\\|x" in table
    line = {"test": "tests/t.py::a`b", "tier": "<b>unit</b>", "wall": 1.0, "cpu": 1.0}
    shown = profile.tests_table([line], None)
    assert "``tests/t.py::a`b``" in shown and "<b>" not in shown
