"""The release axis: a deterministic history repository generated from the tracked list."""

import importlib.util
import os
import re
import subprocess
import sys

import pytest

from tfbench.history import envsync, releases, repo

VERSIONS = releases.tracked_versions()


def git(repo, *args):
    return subprocess.run(
        ["git", "--git-dir", str(repo), *args], capture_output=True, text=True, check=True
    ).stdout.strip()


def test_regenerating_gives_byte_identical_commit_hashes(tmp_path):
    rebuilt = repo.build_history(VERSIONS, repo=tmp_path / "history.git")
    assert rebuilt == repo.history_tags()
    assert git(tmp_path / "history.git", "rev-parse", "main") == git(
        repo.HISTORY_REPO, "rev-parse", "main"
    )


def test_one_commit_per_release_dated_and_tagged_newest_last():
    log = git(repo.HISTORY_REPO, "log", "--reverse", "--format=%H %cI %s", "main")
    rows = [line.split(" ", 2) for line in log.splitlines()]
    assert [subject for _, _, subject in rows] == [f"TensorFlow {v}" for v in VERSIONS]
    tags = repo.history_tags()
    for (commit, date, _), version in zip(rows, VERSIONS):
        lock = releases.read_lock(version)
        assert tags[f"v{version}"] == commit
        assert date.replace("+00:00", "Z") == lock.released
        for name, data in lock.files.items():
            shown = subprocess.run(
                ["git", "--git-dir", str(repo.HISTORY_REPO), "show", f"{commit}:{name}"],
                capture_output=True,
                check=True,
            ).stdout
            assert shown == data


def test_every_lock_pins_its_release_exactly():
    for version in VERSIONS:
        lock = releases.read_lock(version)
        cpu = lock.files["requirements-cpu.txt"].decode()
        gpu = lock.files["requirements-gpu.txt"].decode()
        assert f"\ntensorflow-cpu=={version}\n" in cpu
        assert f"\ntensorflow=={version}\n" in gpu
        for text in (cpu, gpu):
            pins = [ln for ln in text.splitlines() if not ln.startswith("#")]
            assert all(re.fullmatch(r"[a-z0-9-]+==\S+", p) for p in pins), pins
            assert any(p.startswith("psutil==") for p in pins)


def test_tf_extra_pins_the_newest_tracked_release():
    text = (releases.ROOT / "pyproject.toml").read_text()
    assert f'tf = ["tensorflow-cpu=={VERSIONS[-1]}"]' in text


def test_bad_line_in_the_release_list_names_the_line(tmp_path):
    listing = tmp_path / "releases.txt"
    listing.write_text("# comment\n2.20.0\n2.21\n")
    with pytest.raises(ValueError, match=r"releases.txt:3: '2.21' is not a version"):
        releases.tracked_versions(listing)


def test_missing_lock_says_how_to_make_it(tmp_path):
    with pytest.raises(FileNotFoundError, match="tfbench releases update"):
        repo.build_history(["9.9.9"], repo=tmp_path / "h.git", locks_dir=tmp_path)


def test_envsync_removes_only_what_the_lock_does_not_name():
    lock = "# header\nnumpy==1.26.4\ntensorflow-cpu==2.16.2\ntyping-extensions==4.5.0\n"
    installed = ["numpy", "tensorflow_cpu", "Typing_Extensions", "jax", "pip", "asv_runner", "uv"]
    assert envsync.not_in_lock(lock, installed) == ["jax"]


@pytest.mark.slow
def test_envsync_reports_a_failed_install_and_exits_nonzero(tmp_path):
    """asv then reports the release's install as failed, skips it and goes on."""
    subprocess.run([sys.executable, "-m", "venv", str(tmp_path / "env")], check=True)
    build = tmp_path / "build"
    build.mkdir()
    (build / "requirements-cpu.txt").write_text("tfbench-no-such-distribution==1.0\n")
    run = subprocess.run(
        [
            str(tmp_path / "env" / "bin" / "python"),
            envsync.__file__,
            str(build),
            str(tmp_path / "record"),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
        timeout=300,
    )
    assert run.returncode == 1
    assert "tfbench-no-such-distribution" in run.stderr and "could not install" in run.stderr
    assert not (tmp_path / "record").exists()  # nothing recorded for a release that is not there


def test_environments_are_compiled_to_bytecode(tmp_path):
    """Every module gets its .pyc, so no process compiles from source where none can be
    written at import (envsync.compile_bytecode: that fragmented the probes' heap)."""
    env = tmp_path / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    python = str(env / "bin" / "python")
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    module = os.path.join(purelib, "tfbench_probe_module", "__init__.py")
    os.makedirs(os.path.dirname(module))
    with open(module, "w") as f:
        f.write("VALUE = 1\n")
    cached = importlib.util.cache_from_source(module)
    assert not os.path.exists(cached)
    envsync.compile_bytecode(python)
    assert os.path.exists(cached)
