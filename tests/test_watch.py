"""The nightly watch's policy and run, on fake builds: which builds a run reads, a planted
step placed between sampled builds, confirmed by reading its two builds again and named
with their commits; the same build read on many days calls nothing; broken builds are
skipped; time is called only when it read different twice."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest

from tfbench import figures, keptfiles
from tfbench.nightly import sentinels, series, watch
from tfbench.nightly.policy import Broken, Build
from tfbench.nightly.series import Entry

pytestmark = pytest.mark.filterwarnings("error")

KiB = 1024
ENVIRONMENT = {"os": "Linux 6.1 (x86_64)", "python": "3.11.9", "cpu": "test CPU"}


def index(days: int) -> list[Build]:
    return [
        Build(f"2.23.0.dev202610{d:02d}", f"2026-10-{d:02d}T20:00:00Z") for d in range(1, days + 1)
    ]


def git(build: Build) -> str:
    return f"v1.12.1-{148000 + int(build.version[-2:])}-g{int(build.version[-2:]):07x}abcdef"


class FakeBuilds:
    """Readings as a build's processes give them: each figure a level by build (`levels`:
    sentinel -> figure field -> function of the day), a process's noise on top."""

    def __init__(self, levels=None, broken=(), seed: int = 1) -> None:
        self.levels, self.broken = levels or {}, set(broken)
        self.read: list[str] = []
        self.rng = random.Random(seed)

    def __call__(self, build: Build) -> tuple[Build, dict[str, dict]]:
        self.read.append(build.version)
        if build.version in self.broken:
            raise Broken("does not import: ImportError")
        day = int(build.version[-2:])
        reading = {}
        for sentinel in sentinels.SENTINELS:
            at = self.levels.get(sentinel, {})
            if sentinel == sentinels.FOOTPRINT:
                heap = at.get("heap_bytes", lambda d: 209_000_000)(day)
                record = {"status": "ok", "heap_bytes": heap + self.rng.randint(0, 4096)}
            else:
                kept = at.get("retained_bytes_per_iteration", lambda d: 700.0)(day)
                peak = at.get("heap_peak_increase_bytes", lambda d: 320_000)(day)
                record = {
                    "status": "ok",
                    "retained_bytes_per_iteration": kept + self.rng.uniform(-40, 40),
                    "heap_peak_increase_bytes": peak + self.rng.randint(0, 2048),
                }
            reading[sentinel] = record
        return Build(build.version, build.uploaded, git(build)), reading


def run(fake, days: int, read=(), compare=None, every=1, since="2.23.0.dev20261001", tmp=None):
    saved: list[Entry] = []
    todo = watch.window(list(read), index(days), since, None, every)
    w = watch.Watch(
        list(read), index(days), fake, compare, saved.append, ENVIRONMENT, lambda s: None
    )
    return todo, w.run(todo), w


def test_the_window_is_the_builds_after_the_newest_read_or_the_newest_alone():
    builds = index(10)
    assert watch.window([], builds) == builds[-1:]
    read = [Entry(builds[5])]
    assert watch.window(read, builds) == builds[6:]
    sampled = watch.window([], builds, since=builds[0].version, every=4)
    assert [b.version[-2:] for b in sampled] == ["01", "05", "09", "10"]  # the last always
    sampled = watch.window([Entry(builds[4])], builds, builds[0].version, builds[6].version, 2)
    assert [b.version[-2:] for b in sampled] == ["01", "03", "07"]  # 05 is read


def test_the_same_build_read_on_many_days_calls_nothing():
    _, calls, w = run(FakeBuilds(), 12)
    assert calls == []
    assert all(
        len(e.readings[s]) == watch.READINGS for e in w.entries for s in sentinels.SENTINELS
    )


def test_a_step_between_sampled_builds_is_placed_confirmed_and_named_with_its_commits():
    levels = {"loop": {"retained_bytes_per_iteration": lambda d: 700.0 + 2048 * (d >= 7)}}
    fake = FakeBuilds(levels)
    todo, calls, w = run(fake, 13, every=4)
    assert [b.version[-2:] for b in todo] == ["01", "05", "09", "13"]
    (call,) = calls
    assert (call.sentinel, call.metric, call.kind) == ("loop", "retained", watch.STEP)
    assert (call.before.version[-2:], call.after.version[-2:]) == ("06", "07")
    assert call.adjacent and call.confirmed
    assert call.values[1] - call.values[0] == pytest.approx(2048, abs=100)
    assert call.compare_url == (
        "https://github.com/tensorflow/tensorflow/compare/0000006abcdef...0000007abcdef"
    )
    by_version = {e.version[-2:]: e for e in w.entries}
    assert len(by_version["06"].readings["loop"]) == len(by_version["07"].readings["loop"]) == 3
    assert "08" not in by_version  # placed by halving: 05-09, 05-07, 05-06 / 06-07


def test_a_step_that_does_not_read_again_is_not_called():
    levels = {"eager": {"retained_bytes_per_iteration": lambda d: 700.0}}
    fake = FakeBuilds(levels)
    first = iter([700.0, 700.0, 700.0 + 4096, 700.0 + 4096])  # day 2's first two read high

    def reading(build: Build):
        built, found = fake(build)
        if build.version.endswith("02"):
            found["eager"]["retained_bytes_per_iteration"] = next(first, 700.0)
        return built, found

    _, calls, w = run(reading, 3)
    assert calls == []  # day 1 read 700, 700; day 2 its third reading 700: apart no more


def test_a_slow_drift_is_a_drift_and_no_step():
    levels = {"footprint": {"heap_bytes": lambda d: 209_000_000 + d * 200 * KiB}}
    _, calls, _ = run(FakeBuilds(levels), 12)
    (call,) = calls
    assert (call.sentinel, call.metric, call.kind) == ("footprint", "footprint-heap", "drift")
    assert not call.confirmed


def test_broken_builds_are_kept_skipped_and_passed_by():
    levels = {"graph": {"heap_peak_increase_bytes": lambda d: 26_000_000 + 8_000_000 * (d >= 4)}}
    fake = FakeBuilds(levels, broken={"2.23.0.dev20261003"})
    _, calls, w = run(fake, 6, every=2)
    (call,) = calls
    assert (call.before.version[-2:], call.after.version[-2:]) == ("02", "04")
    assert call.adjacent and call.confirmed  # 03, between them, is broken
    broken = {e.version[-2:]: e.broken for e in w.entries if e.broken}
    assert broken == {"03": "does not import: ImportError"}


def compare_reading(answers):
    told = iter(answers)

    def compare(old: Build, new: Build) -> dict:
        answer, ratio = next(told)
        return {"old": old.version, "new": new.version, "answer": answer, "ratio": ratio,
                "low": ratio * 0.97, "high": ratio * 1.03, "pairs": 8, "margin": 0.02,
                "skipped": None}  # fmt: skip

    return compare


def test_time_is_called_only_when_it_reads_different_twice_the_same_way():
    _, calls, w = run(
        FakeBuilds(),
        3,
        compare=compare_reading([("same", 1.0), ("different", 1.12), ("different", 1.10)]),
    )
    (call,) = calls
    assert (call.metric, call.before.version[-2:], call.after.version[-2:]) == ("time", "02", "03")
    assert call.confirmed and call.values[1] == pytest.approx((1.12 * 1.10) ** 0.5)
    _, calls, _ = run(
        FakeBuilds(),
        3,
        compare=compare_reading([("same", 1.0), ("different", 1.12), ("same", 1.01)]),
    )
    (call,) = calls
    assert not call.confirmed
    # the first build has nothing to be compared with
    assert [len(e.times) for e in w.entries] == [0, 1, 2]


def test_a_history_is_kept_read_back_and_checked(tmp_path: Path):
    levels = {"loop": {"retained_bytes_per_iteration": lambda d: 700.0 + 2048 * (d >= 3)}}
    _, calls, w = run(FakeBuilds(levels), 4, every=2)
    for e in w.entries:
        series.save(e, tmp_path, "m1")
    back = series.load(tmp_path, "m1")
    assert [e.readings for e in back] == [e.readings for e in w.entries]
    assert [(e.build, e.before) for e in back] == [(e.build, e.before) for e in w.entries]
    assert watch.calls(back) == calls  # what a step's call rests on is kept
    path = tmp_path / "nightly" / "m1" / "2.23.0.dev20261001.json"
    path.rename(path.with_name("2.23.0.dev20261009.json"))
    with pytest.raises(keptfiles.KeptFileError, match="holds build 2.23.0.dev20261001"):
        series.load(tmp_path, "m1")


@pytest.mark.parametrize(
    "change, field",
    [
        (lambda d: d["readings"]["loop"][0].update(status="<b>"), "readings['loop'][0].status"),
        (lambda d: d["build"].update(version="2.23.0; rm -rf /"), "build.version"),
        (lambda d: d["build"].update(git_version="x`id`"), "build.git_version"),
        (lambda d: d.update(times=[{"old": "2.23.0.dev20261001", "new": "2.23.0.dev20261009",
                                    "answer": "same", "pairs": 8, "margin": 0.02}]), "times"),
        (lambda d: d["readings"].update({"a-b": []}), "readings"),
    ],
)  # fmt: skip
def test_a_kept_build_not_of_its_form_is_refused_naming_the_field(tmp_path: Path, change, field):
    _, _, w = run(FakeBuilds(), 1)
    path = series.save(w.entries[0], tmp_path, "m1")
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))
    with pytest.raises(keptfiles.KeptFileError, match=re.escape(field)):
        series.load(tmp_path, "m1")


def test_the_site_page_shows_the_calls_escapes_what_it_was_given_and_names_bad_files(tmp_path):
    from tfbench.publish import nightly

    levels = {"loop": {"retained_bytes_per_iteration": lambda d: 700.0 + 2048 * (d >= 3)}}
    _, calls, w = run(FakeBuilds(levels, broken={"2.23.0.dev20261004"}), 5)
    w.entries[0].readings["eager"][0].update(status="error", error="<script>alert(1)</script>")
    for e in w.entries:
        series.save(e, tmp_path, "m1")
    (tmp_path / "nightly" / "m1" / "2.23.0.dev20261009.json").write_text('{"format": 1}')
    assert nightly.render(tmp_path / "elsewhere") is None
    page = nightly.render(tmp_path)
    assert "<script>" not in page
    assert "5 builds read, 2.23.0.dev20261001 to 2.23.0.dev20261005" in page
    assert "<strong>step</strong>: loop retained" in page and "(confirmed)" in page
    assert (
        'href="https://github.com/tensorflow/tensorflow/compare/0000002abcdef...0000003abcdef"'
        in page
    )
    assert "2.23.0.dev20261004: does not import: ImportError" in page
    assert "2.23.0.dev20261009.json: build: missing: skipped" in page
    assert page.count("<svg") == sum(map(len, sentinels.FIGURES.values()))


@pytest.mark.parametrize(
    "argv",
    [
        ["--since", "2.23.0"],
        ["--until", "latest"],
        ["--every", "0"],
        ["--machine", "a b"],
        ["--iterations", "0"],
    ],
)
def test_bad_input_is_one_line_and_exit_2_before_anything_is_read(argv, capsys):
    from tfbench import cli

    assert cli.main(["watch", *argv]) == cli.EXIT_BAD_INPUT
    assert capsys.readouterr().err.count("\n") == 1


def test_a_kept_build_not_of_its_form_stops_the_watch_naming_it(tmp_path, capsys):
    from tfbench import cli

    where = tmp_path / "nightly" / "m1"
    where.mkdir(parents=True)
    (where / "2.23.0.dev20261001.json").write_text('{"format": 1, "build": 3}')
    assert cli.main(["watch", "--machine", "m1", "--results", str(tmp_path)]) == 2
    assert "2.23.0.dev20261001.json: build: " in capsys.readouterr().err


def test_the_command_prints_each_call_with_its_commits_and_exits_1_on_a_step(
    tmp_path, monkeypatch, capsys
):
    from tfbench import cli
    from tfbench.nightly import run as nightly

    levels = {"session": {"heap_peak_increase_bytes": lambda d: 34_000_000 + 9_000_000 * (d >= 2)}}
    todo, calls, _ = run(FakeBuilds(levels), 3)
    monkeypatch.setattr(nightly, "watching", lambda *a, **k: (todo, calls))
    assert cli.main(["watch", "--machine", "m1"]) == 1
    out = capsys.readouterr().out
    assert "read: 2.23.0.dev20261001, 2.23.0.dev20261002, 2.23.0.dev20261003" in out
    assert (
        "step: session heap-peak 32.43 MiB -> 41.01 MiB" in out
        and "2.23.0.dev20261001 -> 2.23.0.dev20261002" in out
    )
    assert "compare/0000001abcdef...0000002abcdef" in out
    monkeypatch.setattr(nightly, "watching", lambda *a, **k: (todo, []))
    assert cli.main(["watch", "--machine", "m1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"read": [b.version for b in todo], "calls": []}


@pytest.mark.slow
def test_a_build_is_read_on_every_sentinel_and_kept(tmp_path):
    """The watch's path at its smallest: a published build's environment stood in for by
    this one (a real build read from PyPI: tests/validation/test_full_watch.py), every
    sentinel measured twice, the file kept of its form with the build's GIT_VERSION."""
    import os
    import subprocess
    import sys

    from tfbench.nightly import builds

    version = "2.23.0.dev20261026"
    where = tmp_path / "envs" / f"{builds.PREFIX}{version}"
    (where / "bin").mkdir(parents=True)
    python = where / "bin" / "python"
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    python.chmod(0o755)
    git = "v1.12.1-12345-g0123abc"  # of a GIT_VERSION's form, not this TensorFlow's
    mark = {"version": version, "uploaded": "", "git_version": git}
    (where / builds.MARK).write_text(json.dumps(mark))
    tfbench = Path(sys.executable).parent / "tfbench"
    argv = ["watch", "--since", version, "--until", version, "--no-time", "--machine", "t"]
    argv += ["--iterations", "6", "--warmup", "2"]  # what it asserts holds at any size
    run = subprocess.run(
        [str(tfbench), *argv, "--results", str(tmp_path / "results")],
        capture_output=True, text=True, timeout=600,
        env={**os.environ, "TFBENCH_ENV_DIR": str(tmp_path / "envs")},
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.startswith(f"read: {version}\n")
    (entry,) = series.load(tmp_path / "results", "t")
    assert entry.build.git_version == git and entry.broken is None
    assert entry.before
    for sentinel in sentinels.SENTINELS:
        assert [r["status"] for r in entry.readings[sentinel]] == ["ok", "ok"], sentinel
    heap = [r["heap_bytes"] for r in entry.readings["footprint"]]
    assert 100 << 20 < heap[0] < 400 << 20 and abs(heap[0] - heap[1]) < 512 << 10


AA = Path(__file__).parent / "data" / "nightly" / "aa-2.23.0.dev20261026.json"


def test_a_build_read_as_eight_days_calls_nothing_and_a_planted_step_is_named():
    """The A/A kept from tests/validation/watch_aa.py (one build read 3 times on each of 8
    "days", in fresh processes): no call; each figure moved by twice its floor from the
    fifth day on is called at the fourth and fifth days, confirmed."""
    from validation import watch_aa

    days = json.loads(AA.read_text())["days"]
    assert watch.calls(watch_aa.history(days)) == []
    for sentinel, metrics in sentinels.FIGURES.items():
        for metric in metrics:
            values = [figures.named(metric).of(r) for d in days for r in d[sentinel]]
            floor = figures.floor(metric, [v for v in values if v is not None])
            moved = watch_aa.history(watch_aa.planted(days, sentinel, metric, 2 * floor))
            (call,) = watch.calls(moved)
            assert (call.sentinel, call.metric, call.kind) == (sentinel, metric, watch.STEP)
            assert (call.before, call.after) == (moved[3].build, moved[4].build)
            assert call.confirmed


def test_merge_copies_a_runners_builds_of_their_form_and_skips_the_rest(tmp_path):
    from tfbench.publish import merge

    _, _, w = run(FakeBuilds(), 2)
    source = tmp_path / "artifact"
    for e in w.entries:
        series.save(e, source, "gha")
    bad = source / "nightly" / "gha" / "2.23.0.dev20261009.json"
    bad.write_text((source / "nightly" / "gha" / "2.23.0.dev20261001.json").read_text())
    merged = merge.merge([source], tmp_path / "results")
    assert sorted(p.name for p in merged.added) == [
        "2.23.0.dev20261001.json", "2.23.0.dev20261002.json"
    ]  # fmt: skip
    assert [s for s in merged.skipped if "not the one it is named by" in s]
    assert [e.readings for e in series.load(tmp_path / "results", "gha")] == [
        e.readings for e in w.entries
    ]


def test_asvs_site_of_the_nightlies_has_a_commit_a_build_and_finds_the_step(tmp_path):
    """The nightly history as asv's own site: one commit per build (dated by its upload,
    its GIT_VERSION in the message), each sentinel's figure a graph, and asv's regressions
    page naming the planted step's build."""
    from tfbench.history.repo import _git
    from tfbench.publish import nightly_graphs

    levels = {"footprint": {"heap_bytes": lambda d: 209_000_000 + 16_000_000 * (d >= 4)}}
    _, _, w = run(FakeBuilds(levels), 6)
    html = nightly_graphs.build({"m1": w.entries}, {}, tmp_path)
    index = json.loads((html / "index.json").read_text())
    assert set(index["benchmarks"]) == {b["name"] for b in nightly_graphs.BENCHMARKS.values()}
    assert list(index["tags"]) == [e.version for e in w.entries]
    log = _git(tmp_path / "nightly.git", "log", "--format=%ad|%B", "--date=iso-strict", "main")
    assert "2026-10-04T20:00:00+00:00|tf-nightly 2.23.0.dev20261004\n\nv1.12.1-148004-g" in log
    (regression,) = json.loads((html / "regressions.json").read_text())["regressions"]
    assert regression[0] == "nightly.Footprint.track_footprint_heap"
    assert regression[-1][0][1] == 3  # the revision of the fourth build: the first bad
    assert regression[-1][0][3] - regression[-1][0][2] == pytest.approx(16e6, rel=0.01)


def test_a_build_whose_sentinel_fails_is_passed_by_and_read_no_more():
    levels = {"loop": {"retained_bytes_per_iteration": lambda d: 700.0 + 4096 * (d >= 4)}}
    fake = FakeBuilds(levels)

    def reading(build: Build):
        built, found = fake(build)
        if build.version.endswith("03"):
            found["loop"] = {"status": "error", "error": "ValueError: on this build"}
        return built, found

    _, calls, _ = run(reading, 5)
    (call,) = calls
    assert (call.before.version[-2:], call.after.version[-2:]) == ("02", "04")
    assert not call.adjacent and not call.confirmed  # the step is on 03's one side or other
    assert fake.read.count("2.23.0.dev20261003") == watch.READINGS


def test_an_environment_made_or_removed_by_another_process_does_not_stop_the_listing(
    tmp_path, monkeypatch
):
    """Two processes share the environments' root (the watch, a bisection): one's partial
    environment is not listed, and a folder renamed away while the other walks it is
    passed by (it crashed the first backfill's prune)."""
    import os

    from tfbench.history import envs

    made = tmp_path / "nightly-2.23.0.dev20261001" / "lib"
    made.mkdir(parents=True)
    (made / "a.so").write_bytes(b"x" * 8192)
    (tmp_path / ".nightly-2.23.0.dev20261002.partial" / "lib").mkdir(parents=True)
    gone = tmp_path / "nightly-2.23.0.dev20261003"
    (gone / "lib" / "deep").mkdir(parents=True)
    walk = os.walk

    def renaming(top, *args, **kwargs):  # the other process renames it mid-walk
        for found in walk(top, *args, **kwargs):
            if Path(top) == gone and gone.exists():
                gone.rename(tmp_path / "elsewhere")
            yield found

    monkeypatch.setattr(envs.os, "walk", renaming)
    listed = {e.name: e.bytes_own for e in envs.listing(tmp_path)}
    assert set(listed) == {"nightly-2.23.0.dev20261001", "nightly-2.23.0.dev20261003"}
    assert listed["nightly-2.23.0.dev20261001"] >= 8192


def test_a_second_run_on_one_history_is_refused_while_the_first_reads(tmp_path, capsys):
    """Two runs on one machine's history would each keep their own readings over the
    other's (it happened: a backfill started twice): the second is refused, exit 2."""
    from tfbench import cli

    with series.reading(tmp_path, "m1"):
        with pytest.raises(series.HistoryBusy), series.reading(tmp_path, "m1"):
            pass
        assert cli.main(["watch", "--machine", "m1", "--results", str(tmp_path)]) == 2
        assert "another tfbench watch is reading into" in capsys.readouterr().err
    with series.reading(tmp_path, "m1"), series.reading(tmp_path, "m2"):
        pass  # released; another machine's history is its own
