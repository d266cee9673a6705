"""`tfbench history`: what each machine's history holds at the current versions, and the
resumable run that measures what one lacks."""

import datetime
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tfbench.cli import history as cli
from tfbench.history import journal, releases
from tfbench.publish import coverage
from tfbench.publish.coverage import REFERENCE, ReleasePython

ROOT = Path(__file__).resolve().parent.parent


def test_the_history_covers_every_release_on_its_python_and_the_newest_on_newer_ones():
    cells = coverage.extent(releases.tracked_versions(), releases.supports)
    on = {p: [c.tag for c in cells if c.python == p] for p in ("3.11", "3.12", "3.13")}
    assert on["3.11"] == [f"v{v}" for v in releases.tracked_versions()]
    assert on["3.12"] == ["v2.19.1", "v2.20.0", "v2.21.0", "v2.22.0rc0"]
    assert on["3.13"] == ["v2.20.0", "v2.21.0", "v2.22.0rc0"]
    assert len(cells) == 18 and not any(c.python == "3.10" for c in cells)
    # the newer Pythons' span follows the locks, not a table
    few = coverage.extent(["1.0", "1.1", "1.2"], lambda v, p: p == "3.13" and v != "1.0")
    assert [str(c) for c in few if c.python != "3.11"] == ["v1.1 py3.13", "v1.2 py3.13"]


def test_a_benchmark_is_held_only_at_its_version_with_a_figure_or_a_skip():
    cells = [ReleasePython("v1", "3.11"), ReleasePython("v2", "3.11"), ReleasePython("v3", "3.11")]
    versions = {"fam.A.time_step": "new", "fam.ACosts.track_leak": "new", "other.B.time_step": "b"}
    files = {
        ReleasePython("v1", "3.11"): (
            {"fam.A.time_step": "new", "fam.ACosts.track_leak": "new", "other.B.time_step": "b"},
            {
                "fam.A.time_step": [1.0],
                "fam.ACosts.track_leak": [math.nan, 0.0],
                "other.B.time_step": [2.0],
            },
        ),
        ReleasePython("v2", "3.11"): (  # an old version, and a failure
            {"fam.A.time_step": "old", "fam.ACosts.track_leak": "new", "other.B.time_step": "b"},
            {
                "fam.A.time_step": [1.0],
                "fam.ACosts.track_leak": [0.0, None],
                "other.B.time_step": [2.0],
            },
        ),
    }
    held = coverage.holding("m", None, cells, versions, files)
    assert held.missing[ReleasePython("v1", "3.11")] == set()  # NaN: asv's skip, an answer
    assert held.missing[ReleasePython("v2", "3.11")] == {
        "fam.A.time_step",
        "fam.ACosts.track_leak",
    }
    assert held.missing[ReleasePython("v3", "3.11")] == set(versions)  # no file
    assert held.held("fam", versions) == 1 and held.held("other", versions) == 2
    assert list(held.lacking()) == [ReleasePython("v2", "3.11"), ReleasePython("v3", "3.11")]
    assert held.families_lacking() == ["fam", "other"]


def test_the_pattern_selects_exactly_the_lacking_benchmarks_by_asvs_own_filter():
    """asv searches a parameterized benchmark's name with its params: every point of each
    benchmark named, and nothing of a benchmark whose name begins as one of them does."""
    from asv.benchmarks import Benchmarks

    committed = json.loads((ROOT / "results" / "benchmarks.json").read_text())
    suite = [dict(b, name=n) for n, b in committed.items() if isinstance(b, dict)]
    conf = type("Conf", (), {"benchmark_dir": str(ROOT / "benchmarks")})()
    wanted = {
        "graphs.Eager.time_step",
        "graphs.EagerCosts.track_leak",
        "footprint.Footprint.track_heap",
    }
    wanted &= set(committed)
    assert len(wanted) >= 2
    chosen = Benchmarks(conf, suite, regex=[coverage.bench_pattern(wanted)])
    assert set(chosen) == wanted  # graphs.Eager.peakmem_step, graphs.EagerCosts.track_* not
    for name in wanted:
        points = (
            math.prod(len(p) for p in committed[name]["params"])
            if committed[name]["params"]
            else None
        )
        selected = chosen.benchmark_selection[name]
        assert selected is None or len(selected) == points


def test_the_estimate_is_each_benchmarks_median_and_its_setup_caches_once():
    suite = coverage.Suite(
        {"f.A.t": "1", "f.ACosts.x": "1", "f.ACosts.y": "1", "f.B.new": "1"},
        {"f.A.t": None, "f.ACosts.x": "f:10", "f.ACosts.y": "f:10", "f.B.new": None},
    )
    durations = {"f.A.t": [1.0, 3.0, 100.0], "f.ACosts.x": [2.0], "f.ACosts.y": [2.0]}
    durations["<setup_cache f:10>"] = [50.0, 70.0]
    assert suite.estimate({"f.A.t"}, durations) == 3.0
    assert suite.estimate({"f.ACosts.x", "f.ACosts.y"}, durations) == 2 + 2 + 60
    # one never timed counts as the median of those that were
    assert suite.estimate({"f.A.t", "f.B.new"}, durations) == 6.0
    assert suite.estimate({"f.B.new"}, {}) == 0.0
    # a grid no file timed is left out of the estimate, and said to be
    assert suite.untimed({"f.A.t", "f.ACosts.x"}, durations) == set()
    untimed = suite.untimed({"f.A.t", "f.ACosts.x"}, {"f.A.t": [3.0]})
    assert untimed == {"f:10"}
    assert cli.paced(3.0, untimed) == "more than about 3 s: 1 setup_cache(s) never timed"
    assert cli.paced(3.0) == "about 3 s by earlier runs' pace"


def test_durations_read_at_the_current_version_win_over_older_ones():
    suite = coverage.Suite(
        {"f.A.t": "2", "f.ACosts.x": "2", "f.ACosts.y": "2", "f.B.t": "1"},
        {"f.A.t": None, "f.ACosts.x": "f:10", "f.ACosts.y": "f:10", "f.B.t": None},
    )
    old = (
        {"f.A.t": "1", "f.ACosts.x": "1", "f.B.t": "1"},
        {"f.A.t": 1, "<setup_cache f:10>": 180},
    )
    new = (
        {"f.A.t": "2", "f.ACosts.x": "2", "f.ACosts.y": "2"},
        {"f.A.t": 5.0, "<setup_cache f:10>": 1000.0},
    )
    mixed = (
        {"f.A.t": "2", "f.ACosts.x": "1", "f.ACosts.y": "2"},
        {"<setup_cache f:10>": 9.0, "f.B.t": 3.0},
    )
    # a file from before f.ACosts.y was added read the grid for fewer benchmarks
    fewer = ({"f.A.t": "2", "f.ACosts.x": "2"}, {"<setup_cache f:10>": 140.0})
    got = suite.durations([old, new, mixed, fewer])
    assert got == {"f.A.t": [5.0], "<setup_cache f:10>": [1000.0], "f.B.t": [3.0]}
    assert suite.durations([old]) == {"f.A.t": [1], "<setup_cache f:10>": [180]}


class Killed(Exception):
    """The run stopped."""


def test_a_journal_gives_back_what_a_stopped_run_read_and_nothing_else(tmp_path, monkeypatch):
    monkeypatch.setenv(journal.VAR, str(tmp_path))
    where = tmp_path / "abc-virtualenv-py3.11" / "Costs-v.json"
    steps = [{"target": k} for k in range(10)]
    asked: list[list[int]] = []
    kill_at = [2]  # the first run is killed in its second request

    def measure(chosen: list[int]) -> list[dict]:
        asked.append(chosen)
        if len(asked) in kill_at:
            raise Killed
        time.sleep(0.05)
        return [{"reading": k} for k in chosen]

    with pytest.raises(Killed):
        journal.measured(where, steps, measure, say=lambda s: None, setup_cache="costs:9")
    assert len(journal.readings(where)) == journal.CHUNK  # the first request kept
    first = json.loads(where.read_text())["seconds"]
    assert first >= 0.05
    assert journal.earlier("abc", "virtualenv-py3.11", "costs:9") == 0  # no run before it
    said: list[str] = []
    asked.clear()
    kill_at.clear()
    got = journal.measured(where, steps, measure, say=said.append, setup_cache="costs:9")
    assert got == [{"reading": k} for k in range(10)]
    # asv times the second run's setup_cache: the first's seconds are given back to add
    assert journal.earlier("abc", "virtualenv-py3.11", "costs:9") == first
    assert json.loads(where.read_text())["seconds"] >= first + 0.1
    assert journal.earlier("abc", "virtualenv-py3.11", "other:1") == 0
    assert asked[0][0] == journal.CHUNK  # nothing read twice
    assert sum(map(len, asked)) == 10 - journal.CHUNK
    assert said == [f"tfbench: {journal.CHUNK} of 10 readings kept by a stopped run: going on"]
    # other steps (a new version's, other limits) or a cut file: read from the start
    assert journal.done(where, journal.fingerprint(steps[:9])) == []
    where.write_text(where.read_text()[:20])
    assert journal.done(where, journal.fingerprint(steps)) == []


def test_a_journal_is_kept_only_where_a_history_run_asks_for_one(tmp_path, monkeypatch):
    monkeypatch.delenv(journal.VAR, raising=False)
    monkeypatch.setenv("ASV_COMMIT", "abc")
    assert journal.path("LoopsCosts", "v1") is None
    monkeypatch.setenv(journal.VAR, str(tmp_path))
    monkeypatch.setenv("ASV_ENV_NAME", "virtualenv-py3.11")
    assert (
        journal.path("LoopsCosts", "v1")
        == tmp_path / "abc-virtualenv-py3.11" / "LoopsCosts-v1.json"
    )
    monkeypatch.delenv("ASV_COMMIT")
    assert journal.path("LoopsCosts", "v1") is None  # not in an asv run


def test_every_result_asv_adds_is_saved_whole_at_once(tmp_path, monkeypatch):
    from asv import util
    from asv.results import Results

    from tfbench.history import resumable

    monkeypatch.setattr(Results, "add_result", Results.add_result)  # put back after
    monkeypatch.setattr(Results, "set_setup_cache_duration", Results.set_setup_cache_duration)
    monkeypatch.setattr(util, "write_json", util.write_json)
    resumable.save_each(str(tmp_path))
    params = {"machine": "m", "python": "3.11"}
    result = Results(params, {}, "a" * 40, 0, "3.11", "virtualenv-py3.11", {})
    bench = {"name": "f.A.track_x", "version": "v1", "params": [], "param_names": []}
    from asv.runner import BenchmarkResult

    done = BenchmarkResult(
        result=[1.5], samples=[[1.5]], number=[1], errcode=0, stderr="", profile=None
    )
    result.add_result(bench, done, started_at=datetime.datetime.now(datetime.UTC), duration=2.0)
    saved = next(tmp_path.glob("m/*.json"))
    loaded = Results.load(str(saved), machine_name="m")
    assert loaded.get_result_value("f.A.track_x", []) == [1.5]
    assert not list(tmp_path.rglob("*.partial"))
    # a grid a stopped run began: asv's time of its setup_cache counts that run's seconds
    monkeypatch.setenv(journal.VAR, str(tmp_path / "journal"))
    kept = tmp_path / "journal" / f"{'a' * 40}-virtualenv-py3.11" / "ACosts-v1.json"
    kept.parent.mkdir(parents=True)
    kept.write_text(json.dumps({"setup_cache": "f:7", "seconds": 140.0, "resumed": 100.0}))
    result.set_setup_cache_duration("f:7", 5.0)
    result.set_setup_cache_duration("f:9", 5.0)
    durations = {"f.A.track_x": 2.0, "<setup_cache f:7>": 105.0, "<setup_cache f:9>": 5.0}
    assert result.duration == durations


def test_a_benchmark_failing_on_a_full_disk_ends_the_run_in_one_line(
    tmp_path, monkeypatch, capsys
):
    """#79: asv went on after a probes file could not be written (7 "Setting up ...
    failed", 60 "skipped (setup_cache failed)", the cause only in its last traceback): the
    first such failure ends the run, exit 74, one line naming the file, what came before
    saved; a failure of another kind is the benchmark's own and the run goes on."""
    from asv import util
    from asv.results import Results
    from asv.runner import BenchmarkResult

    from tfbench.history import resumable

    monkeypatch.setattr(Results, "add_result", Results.add_result)  # put back after
    monkeypatch.setattr(Results, "set_setup_cache_duration", Results.set_setup_cache_duration)
    monkeypatch.setattr(util, "write_json", util.write_json)
    resumable.save_each(str(tmp_path))
    result = Results({"machine": "m"}, {}, "a" * 40, 0, "3.11", "virtualenv-py3.11", {})
    now = datetime.datetime.now(datetime.UTC)

    def add(name: str, stderr: str) -> None:
        bench = {"name": name, "version": "v1", "params": [], "param_names": []}
        failed = BenchmarkResult(
            result=[None], samples=[None], number=[None], errcode=1, stderr=stderr, profile=None
        )
        result.add_result(bench, failed, started_at=now, duration=2.0)

    add("f.A.track_own", "ValueError: [Errno 28] in its own words\nZeroDivisionError: x")
    assert capsys.readouterr().err == ""
    cut = "r/probes/m/abc-cpu.json"
    with pytest.raises(SystemExit) as ended:
        add("f.B.track_x", f"Traceback ...\nOSError: [Errno 28] No space left on device: '{cut}'")
    assert ended.value.code == 74
    (said,) = capsys.readouterr().err.splitlines()
    assert said.startswith(f"tfbench: {cut}: no space left on the device") and "74" in said
    saved = Results.load(str(next(tmp_path.glob("m/*.json"))), machine_name="m")
    assert set(saved.get_all_result_keys()) == {"f.A.track_own", "f.B.track_x"}
    assert resumable.machine_fault("PermissionError: [Errno 13] Permission denied").errno == 13
    assert resumable.machine_fault("OSError: [Errno 2] No such file: 'x'") is None


def _history(tmp_path) -> coverage.History:
    cells = [ReleasePython("v1", "3.11"), ReleasePython("v2", "3.11")]
    versions = {"fam.A.time_step": "1", "fam.ACosts.track_leak": "1", "x.B.time_step": "1"}
    full = (dict(versions), {k: [1.0] for k in versions})
    machines = [
        coverage.holding("old", "AMD EPYC (2 cores)", cells, versions, {cells[0]: full}),
        coverage.holding(
            "ref", "AMD ... cpu amd-25.17.1-2c-69f8ba", cells, versions, {cells[1]: full}
        ),
    ]
    suite = coverage.Suite(versions, dict.fromkeys(versions))
    return coverage.History(suite, cells, machines, {k: [60.0] for k in versions})


def test_the_status_table_counts_each_familys_whole_files_per_machine(tmp_path):
    text = cli.status(_history(tmp_path), "ref")
    lines = text.splitlines()
    assert lines[0].startswith("The history: 2 release x Python files (3.11: v1-v2 (2))")
    header = next(ln for ln in lines if ln.startswith("machine"))
    assert header.split()[:3] == ["machine", "fam", "x"]
    ref = next(ln for ln in lines if ln.startswith("ref "))
    assert ref.split()[1:4] == ["1/2", "1/2", "amd-25.17.1-2c-69f8ba"]  # the reference leads
    assert lines.index(ref) < lines.index(next(ln for ln in lines if ln.startswith("old ")))
    assert "old" in text and "not recorded (AMD EPYC (2 cores))" in text
    assert "ref lacks 3 benchmark results in 1 files (families fam, x), about 3 min" in text
    assert "`tfbench history measure --machine ref`" in text
    # a machine with no results at all is the whole history left
    assert "none lacks 6 benchmark results in 2 files" in cli.status(_history(tmp_path), "none")


def _measure(runner: Path, *more: str, **popen) -> subprocess.Popen:
    env = {
        **os.environ,
        "HOME": str(runner / "home"),  # asv's machine file
        "TFBENCH_SMOKE_ITERATIONS": "8",  # a point in few iterations: the run, not its figures
    }
    command = [sys.executable, "-m", "tfbench", "history", "measure", "--machine", "m"]
    command += ["--family", "graphs", "--release", "2.21.0", "--python", "3.11", *more]
    return subprocess.Popen(command, cwd=runner, env=env, text=True, **popen)


def _checkout(runner: Path) -> Path:
    """The suite's code and configuration at `runner`, with no results but benchmarks.json."""
    for part in ("tfbench", "benchmarks", "releases"):
        shutil.copytree(ROOT / part, runner / part, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "asv.conf.json", runner)
    (runner / "results").mkdir()
    (runner / "home").mkdir()
    shutil.copy(ROOT / "results" / "benchmarks.json", runner / "results")
    return runner


@pytest.mark.slow
def test_a_killed_history_run_goes_on_where_it_stopped(tmp_path):
    """SIGKILL in a Costs grid (after some results): the next call keeps every result saved
    (not read again), takes the grid's readings from the journal, reads the rest, and
    leaves the family whole at its current version."""
    pytest.importorskip("tensorflow")
    runner = _checkout(tmp_path / "runner")
    killed = _measure(
        runner, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    journals = runner / ".asv" / "journal" / "m"
    try:
        deadline = time.monotonic() + 900
        while time.monotonic() < deadline and killed.poll() is None:
            kept = [journal.readings(p) for p in journals.rglob("*.json")]
            if len(kept) >= 2 and 0 < len(kept[-1]):  # in its second grid
                break
            time.sleep(0.2)
        assert killed.poll() is None, "the run ended before it was killed"
    finally:
        os.killpg(killed.pid, signal.SIGKILL)
        killed.wait()
    (saved,) = (runner / "results" / "m").glob("*-virtualenv-py3.11.json")
    before = json.loads(saved.read_text())  # whole: written whole each time
    started = before["result_columns"].index("started_at")
    kept_readings = sum(len(journal.readings(p)) for p in journals.rglob("*.json"))
    assert before["results"] and kept_readings
    grids = [json.loads(p.read_text()) for p in journals.rglob("*.json")]
    begun = {g["setup_cache"]: g["seconds"] for g in grids if g["records"]}

    run = _measure(runner, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out, _ = run.communicate(timeout=900)
    assert run.returncode == 0, out[-4000:]
    assert f"{kept_readings} readings kept by a stopped run" in out
    after = json.loads(saved.read_text())
    for name, row in before["results"].items():  # not read again
        assert after["results"][name][started] == row[started], name
    for key, seconds in begun.items():  # asv's time of a grid counts the killed run's too
        assert after["durations"][f"<setup_cache {key}>"] > seconds, (key, after["durations"])
    graphs = {
        n
        for n in json.loads((ROOT / "results" / "benchmarks.json").read_text())
        if n.startswith("graphs.")
    }
    assert set(after["results"]) == graphs
    assert not journals.exists()  # every grid's readings are in the results
    status = subprocess.run(
        [sys.executable, "-m", "tfbench", "history", "--machine", "m"],
        cwd=runner,
        capture_output=True,
        text=True,
        env={**os.environ, "HOME": str(runner / "home")},
    )
    row = next(ln for ln in status.stdout.splitlines() if ln.startswith("m "))
    assert row.split()[4] == "1/18"  # graphs, on the one release read


# Families the reference is still reading, each with why and where it stands: their lack is
# told, not failed on, and a family the reference holds whole fails here until it leaves this
# list, so that it cannot outlive the reading it waits for.
BEING_READ = {
    "reported": "#81's reports came before the reference history; about 50 min a release x "
    "Python file (three processes a point, 19 reports), 18 files",
}


def test_the_reference_holds_every_benchmark_at_its_version_on_the_whole_history(capsys):
    """#78 item 3: README command 2 fails while the reference machine lacks a benchmark of
    results/benchmarks.json at its current version on a release and Python the history
    covers (a skip with its reason counts), but in a family still being read (BEING_READ);
    the message names the families and the command that re-measures them. A version change
    that orphans history cannot land unnoticed."""
    from tfbench.cli import main

    code = main(["history", "--config", str(ROOT / "asv.conf.json")])
    said = capsys.readouterr().out.splitlines()
    lacking = set(cli.read(ROOT / "asv.conf.json").machine(REFERENCE).families_lacking())
    assert lacking <= set(BEING_READ), said[-1]
    assert set(BEING_READ) <= lacking, f"read whole now: drop {set(BEING_READ) - lacking}"
    if lacking:
        assert code == 1 and "`tfbench history measure --machine" in said[-1]
        assert f"(families {', '.join(sorted(lacking))})" in said[-1]
    else:
        assert code == 0
        assert said[-1] == f"{REFERENCE} holds the whole history at the current versions."
