import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SYNTHETIC = Path(__file__).with_name("synthetic.py")


LONG = ("validation", "slow", "browser")  # the tiers of tests that take minutes


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The validation tier (full-size calibrations, tests/validation) only where `-m` names
    it: README command 2 runs every other tier. The long tiers first (a stable sort keeps
    their order): on two workers (pytest-xdist, worksteal) the minutes-long tests start
    early and the unit tier's seconds fill the end, so that neither worker waits on the
    other's last test."""
    if "validation" not in config.getoption("markexpr", ""):
        left = [item for item in items if item.get_closest_marker("validation")]
        if left:
            config.hook.pytest_deselected(items=left)
            items[:] = [item for item in items if not item.get_closest_marker("validation")]
    items.sort(key=lambda item: not any(item.get_closest_marker(m) for m in LONG))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    """Where TFBENCH_TEST_PROFILE names a file, one line per test joins it: its tier, wall
    and CPU seconds (this worker's and its finished children's), read by `tfbench profile`."""
    out = os.environ.get("TFBENCH_TEST_PROFILE")
    if not out:
        return (yield)
    wall, cpu = time.monotonic(), _cpu_seconds()
    try:
        return (yield)
    finally:
        tier = next((m for m in LONG if item.get_closest_marker(m)), "unit")
        line = {
            "test": item.nodeid,
            "tier": tier,
            "wall": round(time.monotonic() - wall, 3),
            "cpu": round(_cpu_seconds() - cpu, 3),
        }
        with open(out, "a") as f:  # one short write a line: workers do not interleave
            f.write(json.dumps(line) + "\n")


def _cpu_seconds() -> float:
    return sum(
        u.ru_utime + u.ru_stime
        for u in map(resource.getrusage, (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    )


def run_cli(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tfbench", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def measure_json(target: str, *args: str) -> dict:
    run = run_cli("measure", target, "--json", *args)
    assert run.returncode in (0, 1), run.stderr
    return json.loads(run.stdout)


@pytest.fixture(scope="module")
def planted_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """tests/planted's asv project, made once a module."""
    import planted

    return planted.make_project(tmp_path_factory.mktemp("planted"))


def planted_gate(
    project: Path,
    old: str,
    new: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture,
) -> tuple[int, list[dict]]:
    """`tfbench gate old new --json` run on the planted project: its exit code and rows. Its
    processes' temporary files go with them (a process of asv's or the time reader's exits
    without Python's exit handlers)."""
    import planted

    from tfbench import cli

    monkeypatch.setenv("TFBENCH_PLANTED_REPO", str(project / "repo"))

    def left() -> set[Path]:
        return set(Path(tempfile.gettempdir()).glob(f"{planted.LEFT}*"))

    before = left()
    code = cli.main(
        ["gate", old, new, "--config", str(project / "asv.conf.json"), "--machine", "planted",
         "--interpreter", sys.executable, "--reading", "0.2", "--json"]
    )  # fmt: skip
    assert left() <= before
    return code, json.loads(capsys.readouterr().out)


@pytest.fixture
def synthetic():
    return lambda name: f"{SYNTHETIC}::{name}"


def keep_probes(path: Path, status: str = "ok") -> str:
    """A probes file kept at `path` as a run here keeps it (tfbench.keptfiles.probes.add:
    its format, this machine's CPU), one grid of one point of `status`; its text."""
    from tfbench import cpu
    from tfbench.keptfiles import probes

    return probes.add(path, "C", {"k": [{"status": status}]}, cpu.identity()).read_text()


def scratch_asv_conf(tmp: Path, results: Path) -> Path:
    """The project's asv config with everything asv writes moved out of the working tree."""
    from tfbench.history.asvconf import derived_config

    return derived_config(
        ROOT / "asv.conf.json",
        tmp,
        results_dir=results,
        env_dir=tmp / "env",
        html_dir=tmp / "html",
    )


@pytest.fixture(scope="session")
def npm_cache() -> Path:
    """The site's npm tarballs in tfbench's cache (~/.cache/tfbench/npm): fetched from the
    registry on the first run only. Without the registry and with no cache, the tests that
    publish fail here, naming the URL they could not fetch."""
    from tfbench.publish import assets

    try:
        for package in assets.PACKAGES:
            assets.fetch(package)
    except assets.AssetError as e:
        pytest.fail(f"the site's assets are neither cached nor reachable: {e}")
    return assets.cache_dir()
