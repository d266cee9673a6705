"""The asv suite itself runs under asv without failures."""

import ast
import importlib
import itertools
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import scratch_asv_conf
from test_parents import served_folders

from tfbench import probes
from tfbench.gate import rules, session
from tfbench.measure import parents
from tfbench.probes import GridPoint

pytestmark = pytest.mark.slow  # subprocesses and TensorFlow
ROOT = Path(__file__).resolve().parent.parent


def test_the_committed_history_is_not_orphaned():
    """Every benchmark's version is the one its committed results were measured at: a
    change to a family's code (its version closure, benchmarks/common.version) must come
    with a re-measured history, or asv and the report ignore every result of the family."""
    pytest.importorskip("tensorflow")
    committed = json.loads((ROOT / "results" / "benchmarks.json").read_text())
    committed.pop("version")
    sys.path.insert(0, str(ROOT))
    try:
        now = {
            name: getattr(
                importlib.import_module(f"benchmarks.{name.rsplit('.', 2)[0]}"),
                name.rsplit(".", 2)[1],
            ).version
            for name in committed
        }
    finally:
        sys.path.remove(str(ROOT))
    assert now == {name: b["version"] for name, b in committed.items()}


def _smoke_points(committed: dict) -> list[GridPoint]:
    """The grid points the smoke run selects: each step benchmark (`time_`, `peakmem_`) and
    `track_leak` at every scenario with the rest of its params at their first values,
    `track_leak` at each family's first point on every device too (a device the machine
    lacks is a skip), and every other `track_` at each family's first point. A scenario is
    its own code, the same at every point; what this runs is asv's path to it, its probe's
    and its steps' (298 benchmark x point processes of 2,270, 77 probe points of 208): every
    point of every grid is the history's to read, and tests/test_catalog and
    tests/test_articles run every pattern. The probes measure what is selected
    (probes.SELECTION, session.exactly as a gate's confirmation selects) and nothing else."""
    points = []
    for name, benchmark in committed.items():
        if not isinstance(benchmark, dict):
            continue
        first = [p[0] for p in benchmark["params"]]
        if name.endswith(("time_step", "peakmem_step", ".track_leak")):
            points += [GridPoint(name, (v, *first[1:])) for v in benchmark["params"][0]]
            if name.endswith(".track_leak") and benchmark["param_names"][-1:] == ["device"]:
                points += [GridPoint(name, (*first[:-1], d)) for d in benchmark["params"][-1]]
        elif ".track_" in name:
            points.append(GridPoint(name, tuple(first)))
    return list(dict.fromkeys(points))


def _bench(points: list[GridPoint]) -> list[str]:
    """asv --bench arguments selecting exactly `points`."""
    return [arg for p in points for arg in ("--bench", rules.point_pattern(p.name))]


def test_the_smoke_run_selects_each_scenario_once_and_every_device(monkeypatch):
    """asv's own selection (the code `asv run --bench` uses) of the smoke run's arguments:
    each step benchmark and track_leak at its scenarios, each at one point; track_leak at
    the first point on every device as well, and every other track_ benchmark at its first;
    the probes' selection (probes.selected) asks for exactly the points chosen."""
    from asv.benchmarks import Benchmarks

    committed = json.loads((ROOT / "results" / "benchmarks.json").read_text())
    suite = [dict(b, name=n) for n, b in committed.items() if isinstance(b, dict)]
    conf = type("Conf", (), {"benchmark_dir": str(ROOT / "benchmarks")})()
    points = _smoke_points(committed)
    chosen = Benchmarks(conf, suite, regex=_bench(points)[1::2]).benchmark_selection
    monkeypatch.setenv(probes.SELECTION, session.exactly(points))
    for b in suite:
        points = list(itertools.product(*b["params"]))
        picked = [points[k] for k in chosen[b["name"]]]
        if b["name"].endswith(("_step", ".track_leak")):
            scenarios = [p for p in picked if p[1:] == points[0][1:]]
            assert [p[0] for p in scenarios] == b["params"][0], b["name"]  # every one
            others = {p for p in picked if p[1:] != points[0][1:]}
            devices = b["param_names"][-1:] == ["device"] and b["name"].endswith("leak")
            expected = {(*points[0][:-1], d) for d in b["params"][-1]} if devices else set()
            assert others == expected - {points[0]}, b["name"]
        else:
            assert b["name"].rpartition(".")[2].startswith("track_"), b["name"]
            assert chosen[b["name"]] == [0], b["name"]
        if ".track_" in b["name"]:  # what the family's probes measure
            asked = probes.selected([b["name"]])
            values = [tuple(map(ast.literal_eval, p)) for p in points]
            assert [v for v in values if asked(v)] == [values[k] for k in chosen[b["name"]]]


def test_asv_runs_the_suite_without_failures(tmp_path):
    """In this environment (asv's `--python=same`), nothing saved: every point selected has
    a value or a skip. Each probe point is read in one process of a few iterations, not the
    history's three of tens to hundreds: whether a pattern runs needs neither its spread
    nor its slope (test_catalog and test_articles read those). As `tfbench run` runs it,
    one measuring parent serves every family's probes."""
    pytest.importorskip("tensorflow")
    committed = json.loads((ROOT / "results" / "benchmarks.json").read_text())
    conf = scratch_asv_conf(tmp_path, tmp_path / "results")
    # HOME: asv's machine file; TMPDIR: what asv's processes leave (TensorFlow's autograph
    # files) stays here
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {**os.environ, "HOME": str(tmp_path), "TMPDIR": str(temp)}
    points = _smoke_points(committed)
    env.update({probes.SMOKE_VAR: "8", probes.SELECTION: session.exactly(points)})
    asv = [sys.executable, "-m", "asv", "--config", str(conf)]
    subprocess.run([*asv[:3], "machine", "--yes", "--machine", "ci"], env=env, check=True)
    with parents.shared() as shared:
        run = subprocess.run(
            [*asv, "run", "--python=same", "--quick", "--dry-run", "--show-stderr"]
            + ["--machine", "ci", *_bench(points)],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=1800,
            env={**env, **shared},
        )
        served = served_folders(shared)
    output = run.stdout + run.stderr
    assert run.returncode == 0, output[-5000:]
    assert len(served) == 1, served  # one parent served every family
    assert "failed" not in output.lower(), output[-5000:]
    # a probe whose measuring process dies reads as a skip: none may
    assert "the measuring process exited" not in output, output[-5000:]
    assert "n/a" in output  # GPU points are skips, not failures
    assert not (tmp_path / "results" / "probes").exists()  # a smoke run's are never kept
    # asv's discovery writes every benchmark's code and version into benchmarks.json: the
    # committed one must be that, or README command 1 leaves a fresh clone modified
    discovered = json.loads((tmp_path / "results" / "benchmarks.json").read_text())
    differ = [
        k for k in committed.keys() | discovered.keys() if committed.get(k) != discovered.get(k)
    ]
    assert not differ, f"results/benchmarks.json is not what asv discovers: {sorted(differ)}"


def _forkservers(socket_dir: Path) -> list[int]:
    """Processes serving asv's forkserver socket under socket_dir."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            cmdline = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"run_server" in cmdline and any(str(socket_dir).encode() in a for a in cmdline):
            found.append(int(proc.name))
    return found


def _catches_sigterm(pid: int) -> bool:
    status = Path(f"/proc/{pid}/status").read_text()
    caught = int(next(ln for ln in status.splitlines() if ln.startswith("SigCgt:")).split()[1], 16)
    return bool(caught & (1 << (signal.SIGTERM - 1)))


def test_a_killed_asv_run_leaves_no_forkserver(tmp_path):
    """SIGKILL to `asv run`'s process group: the forkserver (its own group, TensorFlow
    imported) exits with it and removes its asv-forkserver-* directory."""
    pytest.importorskip("tensorflow")
    conf = scratch_asv_conf(tmp_path, tmp_path / "results")
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {**os.environ, "HOME": str(tmp_path), "TMPDIR": str(temp)}
    asv = [sys.executable, "-m", "asv", "--config", str(conf)]
    subprocess.run(
        [*asv, "machine", "--yes", "--machine", "ci"], env=env, check=True, capture_output=True
    )
    run = subprocess.Popen(
        [
            *asv,
            "run",
            "--python=same",
            "--quick",
            "--dry-run",
            "--machine",
            "ci",
            "--bench",
            r"graphs\.Eager",
        ],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        servers: list[int] = []
        while time.monotonic() < deadline:  # until the suite is imported in the forkserver
            servers = _forkservers(temp)
            if servers and all(_catches_sigterm(p) for p in servers):
                break
            time.sleep(0.2)
        assert servers, "no forkserver started"
        assert list(temp.glob("asv-forkserver-*"))
    finally:
        os.killpg(run.pid, signal.SIGKILL)
        run.wait()
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and (
        _forkservers(temp) or list(temp.glob("asv-forkserver-*"))
    ):
        time.sleep(0.2)
    assert _forkservers(temp) == []
    assert list(temp.glob("asv-forkserver-*")) == []


@pytest.mark.parametrize(
    "mode, imported", [("discover", False), ("setup_cache", False), ("run_server", True)]
)
def test_only_asvs_forkserver_imports_tensorflow_with_the_suite(mode, imported):
    """asv's forkserver imports TensorFlow once for every benchmark it forks; its discovery
    and setup_cache processes start none (a probe is measured elsewhere) and skip it."""
    pytest.importorskip("tensorflow")
    code = (
        f"import sys; sys.argv = ['benchmark.py', {mode!r}]; import benchmarks.loops; "
        "print('tensorflow' in sys.modules)"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert run.stdout.strip() == str(imported), run.stderr
