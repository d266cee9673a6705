"""Budgets, timeouts and the end of a run bound every process a step starts, and a run
stopped before its measured iterations says so (it is never read as flat)."""

import time
from pathlib import Path

import pytest
from conftest import measure_json, run_cli

pytestmark = pytest.mark.slow  # subprocesses


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "\nState:\tZ" not in state  # a zombie has ended


@pytest.fixture
def pids(tmp_path, monkeypatch):
    path = tmp_path / "pids"
    path.touch()
    monkeypatch.setenv("TFBENCH_TEST_PIDS", str(path))
    return lambda: [int(p) for p in path.read_text().split()]


def test_a_hungry_helper_counts_against_the_budget_and_is_killed(synthetic, pids):
    r = measure_json(synthetic("hungry_helper"), "--iterations", "200", "--budget-mib", "1000")
    assert r["status"] == "over_budget", r
    assert "processes it started" in r["error"]
    (helper,) = pids()
    assert not alive(helper)


def test_a_timeout_kills_the_helpers_too_and_returns_promptly(synthetic, pids):
    start = time.monotonic()
    run = run_cli(
        "measure",
        synthetic("sleeping_helper"),
        "--iterations",
        "100000",
        "--timeout",
        "5",
        timeout=40,
    )  # output captured: a live helper would hold it
    assert time.monotonic() - start < 20
    assert run.returncode == 1 and "timeout" in run.stdout
    assert not any(alive(p) for p in pids())


def test_helpers_left_running_are_ended_with_the_run(synthetic, pids):
    start = time.monotonic()
    r = measure_json(synthetic("sleeping_helper"), "--iterations", "5")
    # output captured: a helper still alive would hold the pipe for its 45 s
    assert time.monotonic() - start < 20
    assert r["status"] == "ok"
    assert not any(alive(p) for p in pids())


def test_a_budget_hit_in_warm_up_is_no_verdict(synthetic):
    r = measure_json(
        synthetic("leak_16mib"), "--iterations", "50", "--warmup", "40", "--budget-mib", "400"
    )
    assert r["status"] == "over_budget" and r["iterations"] == 0
    assert 0 < r["warmup_run"] < 40
    assert r["leak"] is None  # never "flat"
    assert r["growth_bytes_per_iteration"] == pytest.approx(16 << 20, rel=0.05)
    assert "in warm-up" in r["error"]
    text = run_cli(
        "measure",
        synthetic("leak_16mib"),
        "--iterations",
        "50",
        "--warmup",
        "40",
        "--budget-mib",
        "400",
    ).stdout
    assert "stopped in warm-up" in text and "no verdict" in text and "flat" not in text


def test_bad_counts_are_refused_before_anything_runs():
    run = run_cli("measure", "loop.numpy", "--iterations", "1000000000000")
    assert run.returncode == 2 and "at most 10000000" in run.stderr
    run = run_cli("measure", "loop.numpy", "--warmup", "-1")
    assert run.returncode == 2 and "--warmup must be at least 0, got -1" in run.stderr


@pytest.mark.parametrize(
    "target,message",
    [
        ("::step", "no file before '::step'"),
        ("tests::step", "tests is a directory"),
        ("tests/synthetic.py", "tests/synthetic.py::function"),
    ],
)
def test_file_targets_that_are_not_one_say_how(target, message):
    run = run_cli("measure", target)
    assert run.returncode == 2 and message in run.stderr, run.stderr


def test_too_few_measured_iterations_give_no_verdict(synthetic):
    """A big leak stopped after 3 measured iterations is not 'flat'."""
    r = measure_json(synthetic("leak_16mib"), "--iterations", "3", "--warmup", "1")
    assert r["status"] == "ok" and r["leak"] is None
    text = run_cli("measure", synthetic("leak_16mib"), "--iterations", "3", "--warmup", "1").stdout
    assert "no verdict: 3 measured iterations, a verdict needs at least 9" in text
