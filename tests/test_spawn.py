"""Every process tfbench starts (tfbench.measure.spawn): it ends with its parent, and the
watchdog holds it to its budget and timeout, whatever it started beside it. No
TensorFlow."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tfbench import whole
from tfbench.measure.spawn import Spawned
from tfbench.units import MiB

SLEEPER = [sys.executable, "-c", "import time; time.sleep(60)"]


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state != "Z"


def group(pgid: int) -> list[int]:
    """The live (not zombie) processes of a process group."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:
            continue
        if fields[0] != "Z" and int(fields[2]) == pgid:
            found.append(int(stat.parent.name))
    return found


def emptied_within(pgid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while group(pgid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return group(pgid) == []


def gone_within(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.05)
    return False


def test_a_started_process_ends_when_its_parent_is_killed(tmp_path):
    """SIGKILL to the parent (nothing of it runs after): its measurement ends too."""
    pid_file = tmp_path / "pid"
    parent = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\n"
            "from tfbench.measure.spawn import Spawned\n"
            f"s = Spawned({SLEEPER!r})\n"
            f"open({str(pid_file)!r}, 'w').write(str(s.pid))\n"
            "time.sleep(60)\n",
        ],
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
    )
    deadline = time.monotonic() + 30
    while not pid_file.exists() or not pid_file.read_text():
        assert time.monotonic() < deadline and parent.poll() is None
        time.sleep(0.05)
    child = int(pid_file.read_text())
    assert alive(child)
    parent.kill()
    parent.wait()
    assert gone_within(child, 5)


def test_the_watchdog_stops_a_group_past_its_budget_with_its_helpers():
    """The budget counts the whole group: a helper the process starts is counted and
    killed with it."""
    hog = (
        "import subprocess, sys, time\n"
        "subprocess.Popen([sys.executable, '-c', 'x = bytearray(300 << 20); import time; "
        "time.sleep(60)'])\n"
        "time.sleep(60)\n"
    )
    process = Spawned([sys.executable, "-c", hog], budget_bytes=200 * MiB, timeout_s=30)
    began = time.monotonic()
    assert process.wait() == -signal.SIGKILL
    assert process.stopped == "stopped: RSS passed the budget of 200 MiB"
    assert time.monotonic() - began < 20
    assert emptied_within(process.pid, 5)  # nothing of the group is left


def test_the_watchdog_stops_a_process_past_its_timeout():
    process = Spawned(SLEEPER, timeout_s=0.5)
    assert process.wait() == -signal.SIGKILL and process.stopped == "stopped after 0 s"


def test_an_interrupted_wait_ends_the_group_before_the_interrupt_goes_on():
    process = Spawned(SLEEPER)

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, 0.3)
    try:
        with pytest.raises(KeyboardInterrupt):
            process.wait()
    finally:
        signal.signal(signal.SIGALRM, previous)
    assert gone_within(process.pid, 5)


def test_a_process_that_ends_leaves_nothing_it_started():
    helper = "import time; time.sleep(60)"
    starter = f"import subprocess, sys\nsubprocess.Popen([sys.executable, '-c', {helper!r}])\n"
    process = Spawned([sys.executable, "-c", starter])
    assert process.wait() == 0
    assert emptied_within(process.pid, 5)


@pytest.mark.parametrize("end", ["wait", "kill"])
def test_a_process_own_temporary_folder_goes_when_it_ends(tmp_path, end):
    # as an asv benchmark process leaves autograph's modules: it exits without exit handlers
    leaver = "import os, tempfile, time; open(tempfile.mktemp(), 'w'); os._exit(0)"
    said = tmp_path / "tmpdir"
    script = f"import os; open({str(said)!r}, 'w').write(os.environ['TMPDIR']); {leaver}"
    if end == "kill":
        script = script.replace("os._exit(0)", "time.sleep(60)")
    process = Spawned([sys.executable, "-c", script], own_tmp=True)
    assert process.tmp is not None
    if end == "kill":
        left = lambda: [p for p in process.tmp.iterdir() if p.name != whole.OWNER]  # noqa: E731
        for _ in range(100):
            if left():
                break
            time.sleep(0.05)
        assert left()  # the file is there while it runs
        process.kill()
    else:
        assert process.wait() == 0
    assert said.read_text() == str(process.tmp) and not process.tmp.exists()


def test_a_process_that_cannot_start_leaves_no_temporary_folder(monkeypatch):
    made = []
    mkdtemp = tempfile.mkdtemp
    monkeypatch.setattr(tempfile, "mkdtemp", lambda **kw: made.append(mkdtemp(**kw)) or made[-1])
    with pytest.raises(FileNotFoundError):
        Spawned(["/nonexistent/tfbench-no-such-program"], own_tmp=True)
    assert len(made) == 1 and not Path(made[0]).exists()
