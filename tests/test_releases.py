"""The release axis: a deterministic history repository generated from the tracked list."""

import errno
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

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
    for text, message in [
        ("# comment\n2.20.0\n2.21\n", r"releases.txt:3: '2.21' is not a version"),
        ("2.21.0\n2.22.0.dev0\n", r"releases.txt:2: '2.22.0.dev0': only releases and"),
        ("2.21.0\n2.22.0-rc0\n", r"releases.txt:2: '2.22.0-rc0' is not a version"),
        ("2.22.0\n2.22.0rc0\n", r"releases.txt:2: 2.22.0rc0 is not newer than 2.22.0"),
        ("2.21.0\n2.21.0\n", r"releases.txt:2: 2.21.0 is not newer"),
    ]:
        listing.write_text(text)
        with pytest.raises(ValueError, match=message):
            releases.tracked_versions(listing)


def test_release_candidates_are_releases_in_pep440_order(tmp_path):
    listing = tmp_path / "releases.txt"
    listing.write_text("2.21.0\n2.22.0rc0\n2.22.0rc1\n2.22.0\n")
    assert releases.tracked_versions(listing) == ["2.21.0", "2.22.0rc0", "2.22.0rc1", "2.22.0"]
    assert [releases.candidate(v) for v in ("v2.22.0rc0", "2.22.0", "2.22.0b1")] == [
        True,
        False,
        True,
    ]


def _wheel(version: str, uploaded: str, tag: str = "cp311-cp311-manylinux_2_27_x86_64") -> dict:
    return {"filename": f"tensorflow_cpu-{version}-{tag}.whl", "upload-time": uploaded}


INDEX = releases.available(
    [
        _wheel("2.20.0", "2025-08-13T00:00:00Z"),
        _wheel("2.21.0rc0", "2026-02-01T00:00:00Z"),
        _wheel("2.21.0", "2026-03-06T17:00:00Z"),
        _wheel("2.21.0", "2026-03-06T16:00:00Z", "cp311-cp311-manylinux_2_17_x86_64"),
        _wheel("2.22.0rc0", "2026-09-22T18:37:45Z"),
        _wheel("2.22.0rc1", "2026-10-01T00:00:00Z", "cp312-cp312-manylinux_2_27_x86_64"),
        _wheel("2.22.0rc1", "2026-10-01T00:00:00Z", "cp311-cp311-win_amd64"),
        {"filename": "tensorflow_cpu-2.23.0.tar.gz", "upload-time": "2026-12-01T00:00:00Z"},
    ]
)


def test_the_index_offers_versions_with_a_cpython_311_linux_wheel():
    assert INDEX == {
        "2.20.0": "2025-08-13T00:00:00Z",
        "2.21.0rc0": "2026-02-01T00:00:00Z",
        "2.21.0": "2026-03-06T16:00:00Z",  # its first such wheel
        "2.22.0rc0": "2026-09-22T18:37:45Z",
    }


def test_check_lists_new_minors_and_with_pre_the_newest_candidate():
    def listed(tracked, pre=False, index=INDEX):
        return [(n.version, n.kind) for n in releases.newer(tracked, index, pre)]

    assert listed(["2.19.1", "2.20.0", "2.21.0"]) == []
    assert listed(["2.19.1", "2.20.0", "2.21.0"], pre=True) == [("2.22.0rc0", "candidate")]
    assert listed(["2.21.0", "2.22.0rc0"], pre=True) == []
    assert listed(["2.19.1"]) == [("2.20.0", "release"), ("2.21.0", "release")]
    # a candidate whose release is out is not listed; the newest of several is
    final = {**INDEX, "2.22.0": "2026-11-01T00:00:00Z", "2.22.1": "2026-11-20T00:00:00Z"}
    assert listed(["2.21.0", "2.22.0rc0"], pre=True, index=final) == [("2.22.1", "release")]
    later = {**INDEX, "2.22.0rc1": "2026-10-01T00:00:00Z"}
    assert listed(["2.21.0"], pre=True, index=later) == [("2.22.0rc1", "candidate")]


def test_check_says_when_the_index_cannot_be_reached(monkeypatch, capsys):
    from tfbench import cli

    monkeypatch.setattr(releases, "SIMPLE_INDEX", "http://127.0.0.1:9/simple/{name}/")
    assert cli.main(["releases", "check"]) == 2
    assert "http://127.0.0.1:9/simple/tensorflow-cpu/" in capsys.readouterr().err


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A release list, locks, history and pyproject.toml of its own (2.20.0 and 2.21.0, the
    committed locks), and an index offering 2.22.0rc0; locking writes a stand-in lock."""
    import shutil

    locks = tmp_path / "locks"
    for version in ("2.20.0", "2.21.0"):
        shutil.copytree(releases.LOCKS_DIR / version, locks / version)
    (tmp_path / "releases.txt").write_text("# tracked\n2.20.0\n2.21.0\n")
    (tmp_path / "pyproject.toml").write_text('[x]\ntf = ["tensorflow-cpu==2.21.0"]\n')
    repo.build_history(["2.20.0", "2.21.0"], tmp_path / "history.git", locks)
    index = [_wheel("2.22.0rc0", "2026-09-22T18:37:45Z")]
    monkeypatch.setattr(releases, "index_files", lambda project: index)

    def lock(version, locks_dir):
        folder = locks_dir / version
        folder.mkdir()
        for flavour in releases.FLAVOURS:
            text = f"# released: 2026-09-22T18:35:02Z\ntensorflow-cpu=={version}\n"
            (folder / envsync.lock_file_name(flavour)).write_text(text)

    monkeypatch.setattr(releases, "lock_release", lock)
    return tmp_path


def _add(project, versions):
    return repo.add(
        versions,
        say=lambda text: None,
        listing=project / "releases.txt",
        locks_dir=project / "locks",
        repo=project / "history.git",
        pyproject=project / "pyproject.toml",
    )


def test_add_appends_locks_and_rebuilds_leaving_earlier_hashes_alone(project):
    before = repo.history_tags(project / "history.git")
    tags = _add(project, ["v2.22.0rc0"])
    assert releases.tracked_versions(project / "releases.txt")[-1] == "2.22.0rc0"
    assert list(tags) == ["v2.20.0", "v2.21.0", "v2.22.0rc0"]
    assert {t: tags[t] for t in before} == before  # results of earlier releases stay valid
    assert 'tf = ["tensorflow-cpu==2.22.0rc0"]' in (project / "pyproject.toml").read_text()


def test_add_refuses_what_would_rewrite_the_history_or_is_not_there(project):
    for versions, message in [
        (["2.21.0"], "already tracked: 2.21.0"),
        (["2.20.5"], "older than the newest tracked release, 2.21.0"),
        (["2.22.0rc0", "2.19.0"], "2.19.0 is older"),
        (["2.22"], "is not a version"),
        (["2.22.0rc1"], "has no tensorflow-cpu 2.22.0rc1 wheel"),
    ]:
        with pytest.raises(ValueError, match=message):
            _add(project, versions)
    assert (project / "releases.txt").read_text() == "# tracked\n2.20.0\n2.21.0\n"


def test_a_failed_lock_leaves_the_project_as_it_was(project, monkeypatch):
    def fails(version, locks_dir):
        (locks_dir / version).mkdir()
        raise RuntimeError("uv could not resolve")

    before = repo.history_tags(project / "history.git")
    monkeypatch.setattr(releases, "lock_release", fails)
    with pytest.raises(RuntimeError):
        _add(project, ["2.22.0rc0"])
    assert (project / "releases.txt").read_text() == "# tracked\n2.20.0\n2.21.0\n"
    assert not (project / "locks" / "2.22.0rc0").exists()
    assert repo.history_tags(project / "history.git") == before


@pytest.mark.slow
def test_relocking_the_newest_release_reproduces_its_committed_lock(tmp_path):
    """uv, resolving as PyPI stood the day after the release, gives its committed lock byte
    for byte on any machine (every release and the history rebuilt from them:
    tests/validation/test_relocking.py)."""
    newest = VERSIONS[-1]
    assert releases.lock_release(newest, locks_dir=tmp_path) == releases.read_lock(newest)


def test_a_lock_does_not_depend_on_the_terminal_width():
    """uv wraps its error at COLUMNS; the note a GPU lock keeps reads the same either way."""
    wide = (
        "error: No solution found when resolving dependencies\n"
        "  cause: Because tensorrt==8.5.3.1 has no wheels with a matching Python ABI tag"
        " (e.g., `cp311`) and tensorflow[and-cuda]==2.14.1 depends on tensorrt==8.5.3.1,"
        " we can conclude that tensorflow[and-cuda]==2.14.1 cannot be used.\n"
    )
    narrow = (
        "error: No solution found when resolving dependencies\n"
        "  cause: Because tensorrt==8.5.3.1 has no wheels with a matching Python ABI\n"
        "         tag (e.g., `cp311`) and tensorflow[and-cuda]==2.14.1 depends on\n"
        "         tensorrt==8.5.3.1, we can conclude that tensorflow[and-cuda]==2.14.1\n"
        "         cannot be used.\n"
    )
    assert releases.uv_cause(wide) == releases.uv_cause(narrow)
    assert (
        "note: tensorflow[and-cuda]==2.14.1 does not resolve (" + releases.uv_cause(narrow)
        in releases.read_lock("2.14.1").files["requirements-gpu.txt"].decode()
    )


def test_missing_lock_says_how_to_make_it(tmp_path):
    with pytest.raises(FileNotFoundError, match="tfbench releases update"):
        repo.build_history(["9.9.9"], repo=tmp_path / "h.git", locks_dir=tmp_path)


def test_envsync_removes_only_what_the_lock_does_not_name():
    lock = "# header\nnumpy==1.26.4\ntensorflow-cpu==2.16.2\ntyping-extensions==4.5.0\n"
    installed = ["numpy", "tensorflow_cpu", "Typing_Extensions", "jax", "pip", "asv_runner", "uv"]
    assert envsync.not_in_lock(lock, installed) == ["jax"]


def _synced(tmp_path: Path, monkeypatch) -> list[list[str]]:
    """envsync.main's world faked: an environment, a lock of one package, uv's commands
    recorded (what it runs: the list returned), machine m."""
    _fake_env(tmp_path / "env")
    site = tmp_path / "env/lib/python3.11/site-packages"
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "requirements-cpu.txt").write_text("pkg==1.0\n")
    commands: list[list[str]] = []

    def run(command, **kwargs):
        commands.append([str(word) for word in command])
        return subprocess.CompletedProcess(command, 0, stdout="pkg==1.0\n")

    monkeypatch.setattr(envsync.subprocess, "run", run)
    monkeypatch.setattr(envsync, "compile_bytecode", lambda python: None)
    monkeypatch.setattr(envsync, "ends_with_parent", lambda: None)  # this is pytest's process
    monkeypatch.setattr(envsync.sysconfig, "get_paths", lambda: {"purelib": str(site)})
    monkeypatch.setenv("TFBENCH_MACHINE", "m")
    monkeypatch.setattr(envsync.sys, "version_info", (3, 11, 0))
    return commands


def test_envsyncs_packages_record_is_written_whole_or_not_at_all(tmp_path, monkeypatch):
    """#79: the record of what an environment holds was written in place: a full disk left
    it cut in results/packages/. A write that fails leaves no file and no partial one."""
    _synced(tmp_path, monkeypatch)
    write = Path.write_text

    def full(path: Path, text: str, *args, **kwargs) -> int:
        write(path, text[:10])
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(Path, "write_text", full)
    with pytest.raises(OSError):
        envsync.main(str(tmp_path / "build"), str(tmp_path / "record"))
    assert list((tmp_path / "record" / "m").iterdir()) == []
    monkeypatch.setattr(Path, "write_text", write)
    envsync.main(str(tmp_path / "build"), str(tmp_path / "record"))
    (kept,) = (tmp_path / "record" / "m").iterdir()
    assert kept.read_text().endswith("pkg==1.0\n")


def test_envsync_installs_a_damaged_distribution_again_bypassing_uvs_cache(
    tmp_path, monkeypatch, capsys
):
    """#69: asv's own environments are checked as the cached release ones are: a
    distribution with a file cut is installed again (uv's cache bypassed), said in one
    line; a whole one is left to uv's usual install."""
    commands = _synced(tmp_path, monkeypatch)
    site = tmp_path / "env/lib/python3.11/site-packages"
    envsync.main(str(tmp_path / "build"), str(tmp_path / "record"))
    install = next(c for c in commands if "install" in c and "--requirement" in c)
    assert "--reinstall-package" not in install and "--no-cache" not in install
    (site / "pkg" / "core.so").write_bytes(b"\0" * 100)
    commands.clear()
    envsync.main(str(tmp_path / "build"), str(tmp_path / "record"))
    install = next(c for c in commands if "install" in c and "--requirement" in c)
    assert install[-3:] == ["--reinstall-package", "pkg", "--no-cache"]
    err = capsys.readouterr().err
    said = "pkg is damaged (pkg/core.so holds 100 bytes where it was installed with 4,096)"
    assert f"envsync: {said}" in err


def test_envsync_and_what_it_starts_end_with_the_process_that_started_them():
    """#69: a killed run left envsync, uv and compileall running on. Each now asks the
    kernel for SIGKILL when its parent ends (PR_SET_PDEATHSIG, read back here)."""
    code = (
        "import ctypes\nfrom tfbench.history import envsync\n"
        "libc, sig = ctypes.CDLL(None), ctypes.c_int()\n"
        "libc.prctl(2, ctypes.byref(sig)); print(sig.value)\n"  # 2 = PR_GET_PDEATHSIG
        "envsync.ends_with_parent()\n"
        "libc.prctl(2, ctypes.byref(sig)); print(sig.value)\n"
    )
    read = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert read.stdout.split() == ["0", "9"], read.stderr
    source = Path(envsync.__file__).read_text()
    started = len(re.findall(r"subprocess\.(?:run|Popen)\(", source))
    assert started == source.count("preexec_fn=ends_with_parent") == 5


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
    # more modules than a machine has CPUs, in packages and folders of several depths:
    # each compiling process takes a share, and together they leave none out
    modules = [
        os.path.join(purelib, *parts)
        for k in range(9)
        for parts in (
            (f"tfbench_probe_{k}", "__init__.py"),
            (f"tfbench_probe_{k}", "sub", f"m{k}.py"),
            (f"tfbench_probe_top_{k}.py",),
        )
    ]
    for module in modules:
        os.makedirs(os.path.dirname(module), exist_ok=True)
        with open(module, "w") as f:
            f.write("VALUE = 1\n")
    cached = [importlib.util.cache_from_source(m) for m in modules]
    assert not any(map(os.path.exists, cached))
    envsync.compile_bytecode(python)
    assert all(map(os.path.exists, cached))


def test_an_environment_whose_python_fails_to_compile_is_an_error(tmp_path):
    """Every share's process is waited for; one that fails is the caller's error, as a
    failed install is (the environment is not kept)."""
    python = tmp_path / "python"
    python.write_text("#!/bin/sh\nexit 3\n")
    python.chmod(0o755)
    with pytest.raises(subprocess.CalledProcessError) as failed:
        envsync.compile_bytecode(str(python))
    assert failed.value.returncode == 3


def test_an_interrupt_while_compiling_is_the_callers_alone(tmp_path):
    """#79: Ctrl-C while an environment is compiled (the terminal's SIGINT to the whole
    process group) printed each compiling process's KeyboardInterrupt traceback before
    "tfbench: interrupted": the workers now run in sessions of their own, and end, quietly,
    with the interrupted caller."""
    python = tmp_path / "python"  # each share sleeps, as a long compile would
    python.write_text(f"#!/bin/sh\nexec {sys.executable} -c 'import time; time.sleep(60)'\n")
    python.chmod(0o755)
    code = (  # the interrupt comes once every share runs, as a long compile's would
        "import os, signal, subprocess, sys, threading\nfrom tfbench.history import envsync\n"
        # a terminal's process: its Ctrl-C a KeyboardInterrupt (a test runner's workers may
        # ignore SIGINT, and what ignores it passes that on)
        "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
        "started, shares, real = [], len(os.sched_getaffinity(0)), subprocess.Popen\n"
        "def popen(*args, **kwargs):\n"
        "    started.append(real(*args, **kwargs))\n"
        "    if len(started) == shares:\n"
        "        threading.Timer(0.5, os.killpg, (os.getpgid(0), signal.SIGINT)).start()\n"
        "    return started[-1]\n"
        "envsync.subprocess.Popen = popen\n"
        f"try:\n    envsync.compile_bytecode({str(python)!r})\n"
        "except KeyboardInterrupt:\n    print('interrupted', file=sys.stderr)\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=30,
        start_new_session=True,
    )  # fmt: skip
    assert run.stderr == "interrupted\n"


def test_the_newest_pair_is_the_newest_release_and_a_newer_candidate():
    pair = releases.newest_pair
    assert pair(["v2.20.0", "v2.21.0", "v2.22.0rc0"]) == ("v2.21.0", "v2.22.0rc0")
    # the final arrives: its candidates stay tracked, the newest pair skips them
    assert pair(["v2.21.0", "v2.22.0rc0", "v2.22.0rc1", "v2.22.0"]) == ("v2.21.0", "v2.22.0")
    assert pair(["v2.21.0", "v2.22.0"]) == ("v2.21.0", "v2.22.0")
    assert pair(["v2.22.0rc0", "v2.22.0rc1"]) == ("v2.22.0rc0", "v2.22.0rc1")
    assert pair(["v2.21.0"]) is None and pair([]) is None
    assert releases.label("v2.22.0rc0") == "v2.22.0rc0 (candidate)"


def _fake_env(where) -> None:
    """An environment as uv leaves it: one distribution, its RECORD with sizes."""
    site = where / "lib" / "python3.11" / "site-packages"
    (site / "pkg").mkdir(parents=True)
    (site / "pkg" / "core.so").write_bytes(b"\0" * 4096)
    (site / "pkg" / "__init__.py").write_text("x = 1\n")
    (site / "pkg" / "__pycache__").mkdir()
    (site / "pkg" / "__pycache__" / "__init__.cpython-311.pyc").write_bytes(b"compiled again")
    info = site / "pkg-1.0.dist-info"
    info.mkdir()
    (info / "RECORD").write_text(
        "pkg/core.so,sha256=x,4096\npkg/__init__.py,sha256=y,6\n"
        "pkg/__pycache__/__init__.cpython-311.pyc,sha256=z,3\npkg-1.0.dist-info/RECORD,,\n"
    )
    (where / "bin").mkdir()
    (where / "bin" / "python").write_text("")


def test_a_damaged_environment_is_named_and_made_again_from_pypi(tmp_path, monkeypatch, capsys):
    """#69: a cached release environment with a library cut or a module removed failed every
    run that used it. It is checked against its RECORD before use: whole, it is used as it
    is; damaged, it is made again, said in one line, bypassing uv's cache (hard-linked in,
    the damage may be there too)."""
    from tfbench.history import envs

    env = envs.ReleaseEnv("2.21.0", "cpu", tmp_path)
    installs: list[tuple[str, ...]] = []

    def uv(*args: str) -> None:
        if args[0] == "venv":
            _fake_env(Path(args[-1]))
        else:
            installs.append(args)

    monkeypatch.setattr(envs, "run_uv", uv)
    monkeypatch.setattr(envs, "compile_bytecode", lambda python: None)
    envs.ensure(env)  # made: from uv's cache
    assert envs.damaged(env.path) is None and "--no-cache" not in installs[-1]
    assert envs.ensure(env)[1] is None  # whole: used as it is
    so = env.path / "lib/python3.11/site-packages/pkg/core.so"
    so.write_bytes(b"\0" * 100)
    assert envs.damaged(env.path) == (
        "pkg/core.so holds 100 bytes where it was installed with 4,096"
    )
    assert envs.ensure(env)[1] is not None and "--no-cache" in installs[-1]
    assert f"{env.path}: pkg/core.so holds 100 bytes" in capsys.readouterr().err
    (env.path / "lib/python3.11/site-packages/pkg/__init__.py").unlink()
    assert envs.damaged(env.path) == "pkg/__init__.py is missing"
