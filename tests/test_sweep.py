"""A step across releases: the change rules and the bisection on hand-made readings (unit),
then real release environments (slow: uv installs three tracked releases once, cached)."""

import json
from pathlib import Path

import pytest
from conftest import run_cli

from tfbench import sweep
from tfbench.pairs import verdict
from tfbench.units import KiB, MiB


def reading(
    release="x",
    status="ok",
    leak=False,
    growth=0.0,
    interval=(-1.0, 1.0),
    peak=10 * MiB,
    seconds=0.001,
):
    return {
        "release": release,
        "status": status,
        "iterations": 100,
        "leak": leak,
        "growth_bytes_per_iteration": growth,
        "growth_interval": list(interval),
        "peak_increase_bytes": peak,
        "seconds_per_iteration": seconds,
    }


def test_leak_changes_when_the_verdict_or_the_status_flips():
    assert sweep.differ("leak", reading(leak=False), reading(leak=True))
    assert not sweep.differ("leak", reading(leak=True), reading(leak=True))
    failed = {"release": "y", "status": "error", "iterations": None, "leak": None}
    assert sweep.differ("leak", reading(), failed)


def test_growth_changes_only_past_the_floor_with_intervals_apart():
    flat = reading(growth=0.0, interval=(-100, 100))
    assert sweep.differ("growth", flat, reading(growth=64 * KiB, interval=(60 * KiB, 68 * KiB)))
    assert not sweep.differ("growth", flat, reading(growth=2 * KiB, interval=(1 * KiB, 3 * KiB)))
    wide = reading(growth=64 * KiB, interval=(-10 * KiB, 130 * KiB))  # overlaps 0
    assert not sweep.differ("growth", flat, wide)
    leak, bigger = (
        reading(growth=g * KiB, interval=(g * KiB - 5e3, g * KiB + 5e3)) for g in (244, 300)
    )  # apart, but by less than a quarter
    assert not sweep.differ("growth", leak, bigger)


def test_retained_and_heap_peak_change_past_their_floors_and_only_where_read():
    def kept(retained, low, high, peak=10 * MiB):
        return dict(
            reading(),
            retained_bytes_per_iteration=retained,
            retained_interval=[low, high],
            heap_peak_increase_bytes=peak,
        )

    base = kept(48.6 * KiB, 48.5 * KiB, 48.7 * KiB)
    assert sweep.differ("retained", base, kept(53.5 * KiB, 53.4 * KiB, 53.6 * KiB))  # +10%
    assert not sweep.differ("retained", base, kept(49.5 * KiB, 49.4 * KiB, 49.6 * KiB))  # +2%
    small = kept(300, 250, 350)
    assert not sweep.differ("retained", small, kept(900, 850, 950))  # apart, under 1 KiB
    assert sweep.differ("heap-peak", base, kept(0, 0, 0, peak=13 * MiB))  # floor 2.5 MiB
    assert not sweep.differ("heap-peak", base, kept(0, 0, 0, peak=12 * MiB))
    assert not sweep.differ("retained", reading(), base)  # no heap on one side: no change


def test_peak_and_time_changes_need_their_floors():
    assert not sweep.differ("peak", reading(peak=10 * MiB), reading(peak=10.4 * MiB))
    assert sweep.differ("peak", reading(peak=10 * MiB), reading(peak=12 * MiB))
    assert not sweep.differ("time", reading(seconds=0.010), reading(seconds=0.012))
    assert sweep.differ("time", reading(seconds=0.010), reading(seconds=0.013))


def kept(release, retained, leak, garbage=0.0, pile=None):
    """A reading of what a step keeps (its interval tight, as the heap reads it)."""
    return dict(
        reading(release, leak=leak),
        leak_basis="heap",
        retained_bytes_per_iteration=retained,
        retained_interval=[retained - 50, retained + 50],
        garbage_bytes_per_iteration=garbage,
        collector={"pile_bytes": pile},
    )


def test_every_release_of_a_handful_is_read_and_a_leak_that_comes_and_goes_is_two_changes():
    """The common case the ends cannot see: flat, a leak from 2.14, garbage from 2.22."""
    versions = ["2.12.1", "2.13.1", "2.14.1", "2.15.1", "2.21.0", "2.22.0rc0"]
    leaking = {"2.14.1", "2.15.1", "2.21.0"}

    def run(version, label=""):
        if version in leaking:
            return kept(version, 905 * KiB, True)
        garbage = 905 * KiB if version == "2.22.0rc0" else 0.0
        return kept(version, 2 * KiB, False, garbage, pile=21 * MiB)

    found = sweep.bisect(run, versions, "leak")
    assert sorted(r["release"] for r in found.readings) == versions  # each once
    assert [(c.last_before, c.first_after, c.direction) for c in found.changes] == [
        ("2.13.1", "2.14.1", "worse"),  # +903 KiB: the largest first
        ("2.21.0", "2.22.0rc0", "better"),
    ]
    worse, better = found.changes
    assert worse.size == pytest.approx(903 * KiB) and "a leak appears" in worse.said
    assert "the leak stops" in better.said and "it becomes garbage" in better.said
    assert "21 MiB" in better.said  # how high a loop piles it
    data = found.to_json()
    assert (data["last_before"], data["first_after"]) == ("2.13.1", "2.14.1")  # the oldest
    assert [c["first_after"] for c in data["changes"]] == ["2.14.1", "2.22.0rc0"]
    retained = sweep.bisect(run, versions, "retained")
    assert [c.first_after for c in retained.changes] == ["2.14.1", "2.22.0rc0"]


def test_the_tables_say_how_high_a_flat_rows_garbage_piles():
    """A row flat beside garbage says how high a loop piles it, in `--releases` and
    `bisect` tables alike, and the note says what the column is."""
    from tfbench.cli import output

    rows = [
        dict(kept("2.21.0", 905 * KiB, True), seconds_per_iteration=0.1),
        dict(kept("2.22.0rc0", 2 * KiB, False, 905 * KiB, pile=21 * MiB)),
    ]
    for r in rows:
        r.update(scenario="mine.py::step", params={}, heap_peak_increase_bytes=MiB)
    table = output.releases(rows).splitlines()
    assert "piles to" in table[1] and table[-1] == output.PILES
    assert "21.00 MiB" in table[3] and "21.00 MiB" not in table[2]
    found = sweep.bisect(
        lambda v, label="": rows[v == "2.22.0rc0"], ["2.21.0", "2.22.0rc0"], "leak"
    )
    assert output.bisection(found).splitlines()[-1] == output.PILES


def test_a_leak_that_grows_is_a_change_and_changes_within_the_floors_are_left_out():
    sizes = {"2.12.1": 4.9 * KiB, "2.13.1": 4.85 * KiB, "2.14.1": 909 * KiB, "2.15.1": 909 * KiB}
    found = sweep.bisect(lambda v, label="": kept(v, sizes[v], True), list(sizes), "leak")
    assert [(c.first_after, c.direction) for c in found.changes] == [("2.14.1", "worse")]
    assert "the leak grows" in found.changes[0].said


def test_a_leak_that_shrinks_into_garbage_says_where_its_bytes_went():
    ends = {
        "2.21.0": kept("2.21.0", 908 * KiB, True),
        "2.22.0rc0": kept("2.22.0rc0", 2.5 * KiB, True, 905 * KiB, pile=21 * MiB),
    }
    found = sweep.bisect(lambda v, label="": ends[v], list(ends), "leak")
    (change,) = found.changes
    assert change.direction == "better" and "the leak shrinks" in change.said
    assert "it becomes garbage" in change.said and "piles to 21 MiB" in change.said


def test_many_builds_are_sampled_then_every_differing_span_split_to_neighbours():
    versions = [f"2.22.0.dev202602{d:02d}" for d in range(1, 29)]  # 28: more than SAMPLE
    bad = set(versions[9:17])  # a leak from the 10th build to the 17th
    visited = []

    def run(version, label=""):
        visited.append(version)
        return reading(version, leak=version in bad)

    found = sweep.bisect(run, versions, "leak")
    assert [(c.last_before, c.first_after) for c in found.changes] in (
        [(versions[8], versions[9]), (versions[16], versions[17])],
        [(versions[16], versions[17]), (versions[8], versions[9])],
    )
    assert len(set(visited)) == len(visited) < len(versions)  # none twice, not all
    none = sweep.bisect(lambda v, label="": reading(v), versions[:5], "leak")
    assert none.changes == [] and none.to_json()["first_after"] is None
    assert len(none.readings) == 5


def test_a_step_that_stops_running_comes_first():
    def run(version, label=""):
        if version == "2.16.2":
            return {
                "release": version,
                "status": "error",
                "iterations": None,
                "leak": None,
                "error": "AttributeError: no such API\nTraceback",
            }
        return kept(version, 64 * KiB if version == "2.17.1" else 0.0, version == "2.17.1")

    found = sweep.bisect(run, ["2.15.1", "2.16.2", "2.17.1"], "leak")
    assert [(c.first_after, c.direction, c.size) for c in found.changes] == [
        ("2.16.2", "worse", None),
        ("2.17.1", "better", None),
    ]
    assert found.changes[0].said == "stops running: error: AttributeError: no such API"


class PairedRun:
    """A fake runner whose releases from `slow_from` on are 7% slower, read in pairs
    (their single readings the same); UNKNOWN where `unknown` is one of the two."""

    def __init__(self, versions, slow_from, unknown=()):
        self.versions, self.slow_from, self.unknown, self.asked = versions, slow_from, unknown, []

    def __call__(self, version, label=""):
        return reading(version)

    def times(self, old, new):
        self.asked.append((old, new))
        slower = self.versions.index(new) >= self.slow_from > self.versions.index(old)
        log = 0.07 if slower else 0.0
        logs = [log + d for d in (-0.01, 0.01) * 4]  # 8 pairs, 1% apart
        if new in self.unknown:
            logs = [0.05, -0.05] * 4
        return verdict.compared(verdict.Timed(("target", ("x",)), 0.02, logs=logs), old, new)


def test_time_is_read_in_pairs_between_neighbours_not_by_single_readings():
    versions = [f"2.{m}.0" for m in range(10, 16)]
    run = PairedRun(versions, 3)
    found = sweep.bisect(run, versions, "time")
    assert run.asked == list(zip(versions, versions[1:]))  # every neighbouring pair
    assert [(c.last_before, c.first_after, c.direction) for c in found.changes] == [
        ("2.12.0", "2.13.0", "worse")
    ]
    assert 0.06 < found.changes[0].size < 0.08  # the log of x1.07
    slower = next(t for t in found.times if t["new"] == "2.13.0")
    assert slower["answer"] == "different" and 1.06 < slower["ratio"] < 1.08
    assert slower["pairs"] == 8


def test_a_time_pair_read_unknown_counts_as_no_change_and_is_kept():
    versions = [f"2.{m}.0" for m in range(10, 16)]
    found = sweep.bisect(PairedRun(versions, 3, unknown=["2.12.0"]), versions, "time")
    assert ("2.12.0", "unknown") in [(t["new"], t["answer"]) for t in found.times]
    assert [c.first_after for c in found.changes] == ["2.13.0"]
    silent = sweep.bisect(PairedRun(versions, 99), versions, "time")
    assert silent.changes == [] and {t["answer"] for t in silent.times} == {"same"}


def test_an_unknown_metric_is_refused():
    with pytest.raises(
        ValueError,
        match="choose from leak, retained, garbage, heap-growth, heap-peak, time, growth",
    ):
        sweep.bisect(lambda v, label="": reading(v), ["a", "b"], "speed")


# ---- real release environments ----------------------------------------------------------

THREE = ["2.14.1", "2.15.1", "2.16.2"]  # the real gate's two among them: fewer to make
BY_RELEASE = Path(__file__).with_name("by_release.py")


def tfbench(*args, timeout=900):
    return run_cli(*args, timeout=timeout)


@pytest.mark.slow
def test_bisect_names_the_release_where_a_leak_stops():
    run = tfbench(
        "bisect",
        f"{BY_RELEASE}::leak_before_2_16",
        THREE[0],
        THREE[-1],
        "--iterations",
        "30",
        "--json",
    )
    assert run.returncode == 0, run.stderr[-2000:]
    found = json.loads(run.stdout)
    assert (found["last_before"], found["first_after"]) == ("2.15.1", "2.16.2")
    assert [(c["first_after"], c["direction"]) for c in found["changes"]] == [("2.16.2", "better")]
    assert [r["release"] for r in found["readings"]] == THREE
    assert [r["leak"] for r in found["readings"]] == [True, True, False]


@pytest.mark.slow
def test_a_step_failing_on_one_release_is_reported_and_the_rest_measured():
    run = tfbench(
        "measure",
        f"{BY_RELEASE}::fails_before_2_15",
        "--releases",
        ",".join(THREE),
        "--iterations",
        "20",
        "--json",
    )
    assert run.returncode == 1  # not every release ok
    records = json.loads(run.stdout)
    assert [r["release"] for r in records] == THREE
    assert records[0]["status"] == "error" and "no such API before 2.15" in records[0]["error"]
    assert [r["status"] for r in records[1:]] == ["ok", "ok"]
    assert [r["tf_version"] for r in records[1:]] == THREE[1:]


@pytest.mark.slow
def test_cached_environments_are_reused(synthetic):
    tfbench("measure", synthetic("flat"), "--releases", THREE[0], "--iterations", "5")
    run = tfbench("measure", synthetic("flat"), "--releases", THREE[0], "--iterations", "5")
    assert run.returncode == 0, run.stderr[-2000:]
    assert "creating its environment" not in run.stderr and "ok in" in run.stderr
    listed = tfbench("envs", "list").stdout
    assert f"{THREE[0]}-cpu" in listed


@pytest.mark.parametrize(
    "args,message",
    [
        (
            ["measure", "loop.numpy", "--releases", "2.99.0"],
            "untracked release 2.99.0; choose from all",
        ),
        (["bisect", "loop.numpy", "2.21.0", "2.12.1"], "OLD must be older than NEW"),
        (["bisect", "loop.numpy", "2.12.1"], "give the range as OLD NEW"),
        (
            ["bisect", "loop.numpy", "--metric", "speed"],
            "choose from leak, retained, garbage, heap-growth, heap-peak",
        ),
        (["bisect", "nowhere.py::step"], "no such file: nowhere.py"),
        (["envs", "remove", "9.9.9-cpu"], "no environment 9.9.9-cpu"),
        (["envs", "remove"], "or --all"),
    ],
)
def test_bad_input_names_the_choices_and_exits_2(args, message, tmp_path):
    run = (
        run_cli(*args, timeout=60)
        if args[0] != "envs"
        else run_cli(*args, "--env-dir", str(tmp_path), timeout=60)
    )
    assert run.returncode == 2 and message in run.stderr, run.stderr


def test_env_dir_moves_with_the_variable(tmp_path, monkeypatch):
    from tfbench.history import envs

    monkeypatch.setenv("TFBENCH_ENV_DIR", str(tmp_path))
    assert envs.default_root() == tmp_path
    monkeypatch.delenv("TFBENCH_ENV_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert envs.default_root() == tmp_path / "tfbench" / "envs"


def test_one_process_at_a_time_makes_an_environment(tmp_path):
    """A second process wanting the environment being made waits for the first."""
    import subprocess
    import sys
    import time

    from tfbench.history import envs

    where = tmp_path / "2.21.0-cpu"
    wants = (
        "import sys; from pathlib import Path; from tfbench.history import envs\n"
        "print('asking', flush=True)\n"
        "with envs.building(Path(sys.argv[1])): print('made', flush=True)"
    )
    with envs.building(where):
        other = subprocess.Popen(
            [sys.executable, "-c", wants, str(where)], stdout=subprocess.PIPE, text=True
        )
        assert other.stdout.readline() == "asking\n"
        time.sleep(0.5)
        assert other.poll() is None  # waiting
    assert other.communicate(timeout=30)[0] == "made\n"
