"""The tfbench command: listing, measuring, and clear errors with exit code 2 on bad input."""

from pathlib import Path

import pytest
from conftest import measure_json, run_cli

from tfbench.scenarios import CATALOG

pytestmark = pytest.mark.slow  # subprocesses and TensorFlow

FIELDS = {
    "scenario",
    "tf_version",
    "device",
    "iterations",
    "seconds_per_iteration",
    "peak_increase_bytes",
    "growth_bytes_per_iteration",
    "leak",
    "method",
}


def test_list_shows_every_scenario_with_its_description():
    out = run_cli("list").stdout
    for sid, scenario in CATALOG.items():
        assert sid in out and scenario.description in out


def test_measure_json_has_the_documented_fields():
    r = measure_json("loop.numpy", "--param", "size=64", "--iterations", "20")
    assert FIELDS <= set(r)
    assert r["status"] == "ok" and r["scenario"] == "loop.numpy" and r["device"] == "CPU"
    assert r["iterations"] == 20 and r["seconds_per_iteration"] > 0
    assert r["params"] == {"gradient": "none", "size": 64, "loop_iterations": 100, "device": "CPU"}


def test_measure_footprint_reads_tensorflows_own_memory():
    """The footprint is a target of its own kind: measured in fresh processes, printed as
    what TensorFlow holds after import (issue 39: `tfbench measure footprint` refused it)."""
    run = run_cli("measure", "footprint")
    assert run.returncode == 0, run.stderr
    lines = dict(line.strip().split("  ", 1) for line in run.stdout.splitlines()[2:])
    rss, heap = (float(lines[k].split()[0]) for k in ("RSS after import", "heap in use"))
    assert 100 < heap < rss < 2000  # MiB: TensorFlow holds hundreds of MiB after import
    assert "median of 3 processes" in lines["RSS after import"]


def test_measure_prints_a_readable_report(synthetic):
    run = run_cli("measure", synthetic("leak_1mib"), "--iterations", "50")
    assert run.returncode == 0
    assert "retained/iteration     1.00 MiB/iteration [1.00 MiB, 1.00 MiB]   -> LEAK" in run.stdout
    assert "RSS growth/iteration   1.00 MiB/iteration" in run.stdout


def _bad(*args):
    run = run_cli(*args)
    assert run.returncode == 2, (run.stdout, run.stderr)
    return run.stderr


def test_unknown_scenario_lists_the_choices():
    err = _bad("measure", "loop.nope")
    assert "unknown scenario 'loop.nope'" in err and "loop.python_matmul" in err


def test_bad_param_value_lists_the_choices():
    err = _bad("measure", "loop.python_matmul", "--param", "device=TPU")
    assert "device='TPU' is not one of CPU, GPU" in err


def test_unknown_param_lists_the_params():
    err = _bad("measure", "loop.numpy", "--param", "colour=red")
    assert "has no param colour" in err and "size" in err


def test_param_without_equals():
    assert "KEY=VALUE" in _bad("measure", "loop.numpy", "--param", "size")


def test_non_numeric_size():
    assert "size must be a positive integer" in _bad(
        "measure", "loop.numpy", "--param", "size=big"
    )


def test_missing_file():
    assert "no such file: nowhere.py" in _bad("measure", "nowhere.py::step")


def test_missing_function_lists_the_functions(synthetic):
    err = _bad("measure", synthetic("nope"))
    assert "has no function 'nope'" in err and "leak_1mib" in err


def test_negative_iterations():
    assert "--iterations must be at least 1, got 0" in _bad(
        "measure", "loop.numpy", "--iterations", "0"
    )


def test_failing_step_is_reported_not_hidden(synthetic):
    r = measure_json(synthetic("fails"))
    assert r["status"] == "error" and "RuntimeError: boom" in r["error"]


def before_the_handler(err: str, package: Path) -> bool:
    """Whether an interrupt's report is of a moment before tfbench's handler was set: in
    CPython's start (site.py and its .pth files, runpy finding the module) or in the first
    imports of the console script (tfbench/__init__, __main__, faults), where Python reports
    it as it does for any program."""
    import re

    if "tfbench: interrupted" in err or not re.search("Traceback|Exception ignored", err):
        return False
    ours = {"__init__.py", "__main__.py", "faults.py"}
    frames = re.findall(r'File "([^"]+)"', err)
    return all(not f.startswith(f"{package}/") or Path(f).name in ours for f in frames)


def _signalled(after: float, sig: int) -> tuple[int, str]:
    """`tfbench report` sent `sig` `after` seconds in: its exit code and what it printed."""
    import subprocess
    import sys
    import time

    child = subprocess.Popen(
        [sys.executable, "-m", "tfbench", "report"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(after)
    assert child.poll() is None, "the report ended before the signal: no moment of it"
    child.send_signal(sig)
    _, err = child.communicate(timeout=60)
    return child.returncode, err


@pytest.mark.parametrize("after", [0.05, 0.15, 0.3, 0.5, 0.7])  # report: ~1.0 s idle
def test_ctrl_c_at_any_moment_is_one_line_and_exit_130(after):
    """An interrupt during the imports too (the first 0.4 s of a command): one line, 130;
    before Python has set its handler, the process just ends by the signal, silent."""
    import signal

    from tfbench.paths import PACKAGE

    code, err = _signalled(after, signal.SIGINT)
    if before_the_handler(err, PACKAGE):
        return  # Python's own report of it (a traceback, or "Exception ignored"): not ours
    assert code in (130, -signal.SIGINT), (code, err)
    assert len(err.strip().splitlines()) <= 1 and "Traceback" not in err, err
    if code == 130:
        assert "interrupted" in err, err


@pytest.mark.parametrize("after", [0.3, 0.7])
def test_sigterm_ends_a_command_as_an_interrupt_does_in_one_line_143(after):
    """#69: SIGTERM runs an interrupt's clean-up and ends in one line, 143 (it printed
    nothing); before tfbench's handler is set (Python sets none for it), the process just
    ends by the signal, silent."""
    import signal

    code, err = _signalled(after, signal.SIGTERM)
    assert code in (143, -signal.SIGTERM), (code, err)
    assert len(err.strip().splitlines()) <= 1 and "Traceback" not in err, err
    if code == 143:
        assert err.strip() == "tfbench: terminated (SIGTERM)", err


def test_an_interrupt_swallowed_by_a_callback_still_ends_the_run():
    """An interrupt raised inside a weak reference's callback (as in an import lock's) is
    only printed by Python, and the run would go on: the console script's watch sends it
    again, so the run ends at once, in one line, 130."""
    import subprocess
    import sys

    script = (
        "import time, weakref\n"
        "from tfbench import faults, __main__\n"
        "faults.watch_interrupts()\n"
        "class A: pass\n"
        "def cb(_): raise KeyboardInterrupt\n"
        "a = A(); r = weakref.ref(a, cb); del a\n"
        "try:\n"
        "    time.sleep(30)\n"
        "except KeyboardInterrupt:\n"
        "    raise SystemExit(faults.interrupted())\n"
        "raise SystemExit(0)\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=20
    )
    assert run.returncode == 130, run.stderr
    assert run.stderr.strip() == "tfbench: interrupted", run.stderr


def test_an_error_an_interrupt_causes_is_the_interrupt():
    """An import cut short by an interrupt fails as another error (numpy's C import as an
    ImportError): after an interrupt, that is the interrupt's one line and 130, no crash."""
    import subprocess
    import sys

    script = (
        "import os, signal\n"
        "signal.signal(signal.SIGINT, signal.default_int_handler)\n"  # even if started ignored
        "from tfbench import faults\n"
        "faults.watch_interrupts()\n"
        "try:\n"
        "    try:\n"
        "        os.kill(os.getpid(), signal.SIGINT)\n"
        "    except KeyboardInterrupt:\n"
        "        raise ImportError('could not import module datetime')\n"
        "except Exception:\n"
        "    raise SystemExit(faults.crashed())\n"
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert (run.returncode, run.stderr.strip()) == (130, "tfbench: interrupted"), run.stderr
    run = subprocess.run(
        [sys.executable, "-c", script.replace("faults.watch_interrupts()", "")],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 70 and "Traceback" in run.stderr  # no interrupt counted
