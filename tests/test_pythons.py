"""The Pythons users run (tfbench.history.pythons, `tfbench run`): which interpreter serves a
CPython version here, which tracked releases each Python runs, and the one-line refusal
README command 1 gives where the machine's Python runs none."""

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tfbench.cli import main
from tfbench.cli.run import closing, refusal, runnable
from tfbench.history import envsync, pythons

TRACKED = ["2.12.1", "2.20.0", "2.21.0", "2.22.0rc0"]
# as the locks would say: 3.12 from 2.20.0 on, 3.13 from 2.21.0 on, 3.10 up to 2.20.0
SUPPORT = {
    "3.10": {"2.12.1", "2.20.0"},
    "3.11": set(TRACKED),
    "3.12": {"2.20.0", "2.21.0", "2.22.0rc0"},
    "3.13": {"2.21.0", "2.22.0rc0"},
}


def supports(version, python):
    return version in SUPPORT.get(python, set())


def test_a_python_runs_the_releases_its_locks_name_and_the_newest_is_chosen():
    assert runnable("3.13", TRACKED, supports) == ["2.21.0", "2.22.0rc0"]
    assert runnable("3.10", TRACKED, supports)[-1] == "2.20.0"


def test_a_python_that_runs_no_release_is_refused_in_one_line_naming_those_that_do():
    text = refusal("3.14", TRACKED, supports)
    assert "\n" not in text
    assert text.startswith("Python 3.14 runs no tracked TensorFlow release")
    assert "3.12 (2.20.0-2.22.0rc0)" in text and "3.13 (2.21.0-2.22.0rc0)" in text
    assert "`uv python install 3.13`" in text  # the newest that runs the newest release


def _fake(folder: Path, name: str, prints: str, code: int = 0) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(f"#!/bin/sh\necho {prints}\nexit {code}\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


def test_an_interpreter_is_found_on_path_or_in_pyenv_and_must_run(tmp_path, monkeypatch):
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path / "pyenv"))
    monkeypatch.setenv("UV_PYTHON_INSTALL_DIR", str(tmp_path / "uv"))
    shim = _fake(tmp_path / "bin", "python3.12", "no such version", code=127)  # a pyenv shim
    real = _fake(tmp_path / "pyenv" / "versions" / "3.12.1" / "bin", "python3.12", "3.12")
    monkeypatch.setenv("PATH", f"{shim.parent}{os.pathsep}{os.environ['PATH']}")
    assert pythons.find("3.12") == real
    assert pythons.find("3.9") is None  # none anywhere


def test_an_environment_of_another_python_installs_that_pythons_lock(tmp_path, monkeypatch):
    build = tmp_path / "build"
    build.mkdir()
    (build / "requirements-cpu.txt").write_text(
        "# tfbench lock: tensorflow-cpu==2.21.0 and the harness (psutil) for CPython 3.11\n"
    )
    assert envsync.python_lock(build, "cpu", "3.11") == build / "requirements-cpu.txt"
    found = envsync.python_lock(build, "cpu", "3.12")
    assert found.parent.name == "py3.12" and found.parent.parent.name == "2.21.0"
    with pytest.raises(SystemExit, match="no lock for Python 3.9: not locked"):
        envsync.python_lock(build, "cpu", "3.9")


@pytest.mark.slow  # makes a release's environment from PyPI (about 18 s of CPU)
@pytest.mark.skipif(
    not (
        pythons.find("3.12")
        and (
            envsync.Path(envsync.__file__).parents[2] / "releases" / "locks" / "2.21.0" / "py3.12"
        ).is_dir()
    ),
    reason="no Python 3.12 here, or 2.21.0 not locked for it",
)
def test_a_release_environment_of_python_3_12_runs_that_python(tmp_path):
    from tfbench.history import envs

    env = envs.ReleaseEnv("2.21.0", "cpu", tmp_path, "3.12")
    python, _ = envs.ensure(env)
    assert pythons.version_of(python) == "3.12" and env.path.name == "2.21.0-cpu-py3.12"


def test_readme_command_1_refuses_a_python_no_release_runs(capsys):
    assert main(["run", "--python", "3.14"]) == 2
    err = capsys.readouterr().err
    assert "Python 3.14 runs no tracked TensorFlow release" in err
    assert "No environments selected" not in err


def test_readme_command_1_ends_saying_what_it_measured_and_what_to_run_next(tmp_path):
    """Its closing lines: the results file written, its points measured, skipped and
    failed (counted from the file), and the next commands."""
    import json
    import shutil

    from tfbench.history.repo import history_tags
    from tfbench.paths import ROOT

    commit = history_tags()["v2.22.0rc0"][:8]
    kept = ROOT / "retired" / "results" / "linux-2cpu-24gb" / f"{commit}-virtualenv-py3.11.json"
    path = shutil.copy2(kept, tmp_path / kept.name)
    values = [v for r in json.loads(kept.read_text())["results"].values() for v in r[0] or []]
    said = closing([Path(path)], "linux-2cpu-24gb")
    first, then = said.splitlines()
    measured = sum(1 for v in values if v is not None and v == v)
    assert f": {measured} measured, " in first and kept.name in first
    assert first.endswith("each probe point read in 1 process")
    assert closing([Path(path)], "linux-2cpu-24gb", 3).splitlines()[0].endswith("3 processes")
    assert "tfbench report" in then and "tfbench publish" in then
    assert closing([], "m") == "tfbench: no results file written in m/"  # and no next:


def test_this_interpreters_version_is_read():
    this = "{}.{}".format(*sys.version_info[:2])
    assert pythons.version_of(sys.executable) == this
    out = subprocess.run(
        [sys.executable, "-m", "tfbench", "run", "--help"], capture_output=True, text=True
    )
    assert f"default: this one, {this}" in out.stdout


def test_run_keeps_the_named_machines_record(tmp_path, monkeypatch):
    """`asv machine --yes --machine NAME` would rewrite NAME's record with its name alone;
    `tfbench run --machine NAME` keeps it, its `cpu` this CPU's identity, and passes the
    name to asv run."""
    import json

    from tfbench import cpu
    from tfbench.measure import spawn

    record = {"arch": "x86_64", "cpu": "AMD EPYC (2 cores)", "machine": "box", "num_cpu": "2"}
    record |= {"os": "Linux", "ram": "1024"}
    home = tmp_path / "home"
    home.mkdir()
    (home / ".asv-machine.json").write_text(json.dumps({"box": record, "version": 1}))
    monkeypatch.setenv("HOME", str(home))
    calls = []

    class Fake:  # asv run, started as tfbench starts every process (tfbench.measure.spawn)
        def __init__(self, cmd, **kw):
            calls.append(cmd)

        def wait(self):
            return 0

    monkeypatch.setattr(spawn, "Spawned", Fake)
    this = "{}.{}".format(*sys.version_info[:2])
    assert main(["run", "--python", this, "--machine", "box"]) == 0
    (command,) = calls
    assert command[4] == "run" and command[command.index("--machine") + 1] == "box"
    assert json.loads((home / ".asv-machine.json").read_text())["box"] == dict(
        record, cpu=cpu.asv_cpu()
    )


def test_the_docs_table_of_pythons_is_the_resolvers():
    """docs/history.md says which releases each Python runs: what the locks say."""
    import re

    from tfbench.history import releases

    tracked = releases.tracked_versions()
    text = (releases.ROOT / "docs" / "history.md").read_text()
    for python in pythons.CANDIDATES:
        runs = [v for v in tracked if releases.supports(v, python)]
        span = f"{runs[0]}-{runs[-1]}"
        (row,) = re.findall(rf"^\| {re.escape(python)} \| (.*) \|$", text, re.MULTILINE)
        assert span in row and (f"({len(runs)})" in row or f"all {len(runs)}" in row), row


def _without_tensorflow(monkeypatch, tmp_path):
    """This environment as README command 1 leaves it: TensorFlow not importable; what a
    release's environment would measure, recorded instead of made."""
    import importlib.util

    from tfbench import sweep, targets

    find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda n, *a: None if n == "tensorflow" else find_spec(n, *a)
    )
    ran: list[tuple[str, str]] = []

    def call(self, version, label=""):
        ran.append((version, self.measure.__name__))
        record = targets.describe(self.target)
        return dict(record, status="error", error="not made in a test", release=version)

    monkeypatch.setattr(sweep.Runner, "__call__", call)
    monkeypatch.setenv("TFBENCH_ENV_DIR", str(tmp_path))
    return ran


@pytest.mark.parametrize("command", ["measure", "explain"])
def test_without_tensorflow_a_step_runs_on_the_newest_release_said_in_one_line(
    command, monkeypatch, tmp_path, capsys
):
    """README command 1 installs tfbench without TensorFlow: `measure` and `explain` then
    use the newest tracked release's environment, as `--releases` would (issue 66)."""
    from tfbench.history import releases

    ran = _without_tensorflow(monkeypatch, tmp_path)
    assert main([command, "loop.numpy", "--param", "size=64"]) == 1  # the record's error
    newest = releases.tracked_versions()[-1]
    wanted = "explain_isolated" if command == "explain" else "measure"
    assert ran == [(newest, wanted)]
    said = [line for line in capsys.readouterr().err.splitlines() if "not installed" in line]
    assert said == [
        f"tfbench: TensorFlow is not installed here: measuring on {newest}, the newest "
        f"tracked release, in its environment (Python 3.11; `pip install -e '.[tf]'` "
        "measures here, --releases on others)"
    ]


def test_without_tensorflow_nor_a_python_of_a_lock_the_command_says_what_to_run(
    monkeypatch, tmp_path, capsys
):
    ran = _without_tensorflow(monkeypatch, tmp_path)
    monkeypatch.setattr(pythons, "find", lambda version: None)
    assert main(["measure", "loop.numpy", "--python", "3.13"]) == 2
    err = capsys.readouterr().err.strip()
    assert ran == [] and err.startswith("tfbench: error: TensorFlow is not installed here and")
    assert "no Python 3.13 here" in err and "`pip install -e '.[tf]'`" in err
    assert len(err.splitlines()) == 1
