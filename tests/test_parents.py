"""A run's shared measuring parent (tfbench.measure.parents): one process serves every
request, reads as a fresh parent does, and ends with its run. No TensorFlow."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest
from test_spawn import alive

from tfbench import targets
from tfbench.measure import parents
from tfbench.units import KiB, MiB

SYNTHETIC = str(Path(__file__).with_name("synthetic.py"))
LIMITS = targets.Limits(iterations=20, warmup=5, quiet=True)


def served_folders(shared: dict[str, str]) -> list[Path]:
    """The parents' folders: one an interpreter and environment."""
    return [p for p in Path(shared[parents.VAR]).parent.iterdir() if p.is_dir()]


def _parents() -> list[psutil.Process]:
    return [p for p in psutil.Process().children() if "tfbench.targets" in " ".join(p.cmdline())]


def _retained(records: list) -> list[tuple[str, float]]:
    return [(r["status"], r["retained_bytes_per_iteration"]) for r in records]


def test_one_parent_serves_a_run_and_reads_as_a_fresh_one(monkeypatch):
    steps = [targets.FunctionTarget(SYNTHETIC, f) for f in ("leak_1mib", "flat")]
    fresh = targets.measure_spawned(steps, LIMITS, workers=2)
    with parents.shared() as shared:
        monkeypatch.setenv(parents.VAR, shared[parents.VAR])
        runs = [targets.measure_spawned(steps, LIMITS, workers=2) for _ in range(3)]
        (serving,) = _parents()
        assert len(served_folders(shared)) == 1
        monkeypatch.delenv(parents.VAR)
    assert not alive(serving.pid) and not Path(shared[parents.VAR]).parent.exists()
    for found in [fresh, *runs]:
        (leak, kept), (flat, none) = _retained(found)
        assert leak == flat == "ok"
        assert kept == pytest.approx(MiB, rel=0.02) and abs(none) < 4 * KiB


def test_a_parent_that_dies_is_a_died_record_and_the_next_request_starts_another(
    tmp_path, monkeypatch
):
    killer = tmp_path / "killer.py"
    killer.write_text("import os, signal\n\ndef step():\n    os.kill(os.getppid(), 9)\n")
    with parents.shared() as shared:
        monkeypatch.setenv(parents.VAR, shared[parents.VAR])
        (died,) = targets.measure_spawned([targets.FunctionTarget(str(killer), "step")], LIMITS)
        (after,) = targets.measure_spawned([targets.FunctionTarget(SYNTHETIC, "flat")], LIMITS)
        monkeypatch.delenv(parents.VAR)
    assert died["status"] == "error"
    assert died["error"].startswith("the measuring process exited with code -9")
    assert after["status"] == "ok"


def test_without_its_broker_a_fresh_parent_measures(tmp_path, monkeypatch):
    """The variable outlived its run (no socket answers): measured as outside one."""
    monkeypatch.setenv(parents.VAR, str(tmp_path / "socket"))
    (found,) = targets.measure_spawned([targets.FunctionTarget(SYNTHETIC, "flat")], LIMITS)
    assert found["status"] == "ok"
    assert not [p for p in tmp_path.iterdir() if p.is_dir() and any(p.iterdir())]


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT])
def test_a_killed_run_leaves_no_parent_and_no_measurement(sig):
    """SIGKILL to the process holding the broker, mid-measurement: the parent ends with it
    (the kernel's parent-death signal), and its child with the parent. Ctrl-C: the run
    ends at once, not when the measurement would have."""
    owner = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(f"""
                import os, signal
                signal.signal(signal.SIGINT, signal.default_int_handler)  # even if ignored
                from tfbench import targets
                from tfbench.measure import parents
                with parents.shared() as shared:
                    os.environ.update(shared)
                    step = targets.FunctionTarget({SYNTHETIC!r}, "hold_512mib")
                    targets.measure_spawned([step], targets.Limits(iterations=1, warmup=0))
            """),
        ],
        stderr=subprocess.DEVNULL,
    )
    folder = Path("/nonexistent")
    try:
        deadline, measuring = time.monotonic() + 60, []
        while time.monotonic() < deadline and not measuring:
            time.sleep(0.2)
            served = [
                p
                for p in psutil.Process(owner.pid).children(recursive=True)
                if "tfbench.targets" in " ".join(p.cmdline())
            ]
            measuring = [c for p in served for c in p.children()]
        assert measuring, "no measurement started"
        folder = Path(served[0].environ()["TMPDIR"]).parent  # the broker's
        os.kill(owner.pid, sig)
        owner.wait(timeout=10)  # the step holds on for 30 s
        gone = [*served, *measuring]
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(alive(p.pid) for p in gone):
            time.sleep(0.1)
        assert not any(alive(p.pid) for p in gone)
        # interrupted, the broker removes its folder; killed, nothing can
        assert folder.exists() == (sig == signal.SIGKILL)
    finally:
        owner.kill()
        owner.wait()
        shutil.rmtree(folder, ignore_errors=True)


def test_the_command_runs_a_command_with_a_broker_and_passes_its_exit_code():
    """.ci/measure's asv run goes through it: the command sees the broker, exit 2 (asv's
    "some benchmark failed") comes back as 2, and what it leaves in its TMPDIR (asv's
    processes exit without the handlers that remove TensorFlow's autograph files) goes with
    it; no command is a usage line and 2."""
    module = [sys.executable, "-m", "tfbench.measure.parents"]
    script = f'test -S "${parents.VAR}" && touch "$TMPDIR/left" && echo "$TMPDIR" && exit 2'
    seen = subprocess.run([*module, "sh", "-c", script], capture_output=True, text=True)
    assert seen.returncode == 2, seen.stderr
    assert seen.stdout.strip() and not Path(seen.stdout.strip()).exists()
    bare = subprocess.run(module, capture_output=True, text=True)
    assert bare.returncode == 2 and bare.stderr.startswith("usage:")


def test_an_asker_gone_before_its_answer_leaves_no_traceback(tmp_path, monkeypatch):
    """An interrupted run's request: the asker closes before the broker answers. Writing the
    answer fails (EPIPE), and so does closing the stream; neither may escape the broker's
    thread as a traceback (a BrokenPipeError's, after "tfbench: interrupted")."""
    import json
    import socket
    import threading

    escaped: list[BaseException | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: escaped.append(args.exc_value))
    gone, real = threading.Event(), json.loads

    def loads(text):
        gone.wait(5)  # the answer is made once the asker has closed
        return real(text)

    monkeypatch.setattr(parents.json, "loads", loads)
    broker = parents._Broker(tmp_path)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as asker:
        asker.connect(str(tmp_path / "socket"))
        asker.sendall(b"not json\n")
    gone.set()
    time.sleep(0.3)  # the answer written to nobody
    broker.close(interrupted=False)
    assert escaped == []
