"""The nightly bisection's policy on a fake backend: a step, a drift, no change, broken
builds, an undecidable build (tfbench.nightly.policy)."""

import itertools
import json
import random
import sys
from pathlib import Path

import pytest

from tfbench import keptfiles, targets
from tfbench.nightly import policy
from tfbench.nightly.policy import Broken, Build
from tfbench.units import KiB, MiB

BUILDS = [Build(f"2.22.0.dev202602{d:02d}", f"2026-02-{d:02d}T08:00:00Z") for d in range(1, 29)]


def backend(value, noise=0.0, broken=(), seed=0):
    """A fake build reader: `value(index)` retained bytes a call, +-noise, counting reads."""
    rng = random.Random(seed)
    reads = []

    def measure(build):
        index = BUILDS.index(build)
        reads.append(build.version)
        if build.version in broken:
            raise Broken("uv could not install it")
        kept = value(index) * (1 + rng.uniform(-noise, noise))
        return {
            "status": "ok",
            "iterations": 100,
            "retained_bytes_per_iteration": kept,
            "heap_bytes": kept,
            "retained_interval": [kept * 0.99, kept * 1.01],
        }

    return measure, reads


def test_a_step_names_the_last_good_and_first_bad_build_in_few_reads():
    measure, reads = backend(lambda i: 20 * KiB if i < 17 else 45 * KiB, noise=0.02)
    found = policy.bisect(BUILDS, "retained", measure, say=lambda s: None)
    assert found.kind == "step"
    assert (found.last_good, found.first_bad) == (BUILDS[16], BUILDS[17])
    # the ends, a sample of policy.SAMPLE between them, log2 of the span that parts
    assert len(set(reads)) <= 2 + policy.SAMPLE + 3
    assert len(reads) <= 2 * len(set(reads)) + 8


def test_every_step_is_found_the_largest_first():
    """As TensorFlow's footprint read over the 2.22 nightlies: +16 MiB in one build, then
    moves of 1-4 MiB, each past the footprint's floor: each named, the largest first."""
    steps = {3: 16 * MiB, 15: -1 * MiB, 22: 4 * MiB}

    def value(i):
        return 180 * MiB + sum(d for at, d in steps.items() if i >= at)

    measure, reads = backend(value)
    found = policy.bisect(BUILDS, "footprint-heap", measure, say=lambda s: None)
    assert found.kind == "step"
    assert (found.last_good, found.first_bad) == (BUILDS[2], BUILDS[3])
    assert found.steps == [
        (BUILDS[2], BUILDS[3]),
        (BUILDS[21], BUILDS[22]),
        (BUILDS[14], BUILDS[15]),
    ]
    assert len(set(reads)) < len(BUILDS) // 2


def test_a_leak_that_comes_and_goes_between_alike_ends_is_two_steps():
    """The ends read alike; a build between them does not: the change that appears and
    the one that takes it back are both named."""
    measure, _ = backend(lambda i: 45 * KiB if 7 <= i < 20 else 20 * KiB)
    found = policy.bisect(BUILDS, "retained", measure, say=lambda s: None)
    assert found.kind == "step"
    assert set(found.steps) == {(BUILDS[6], BUILDS[7]), (BUILDS[19], BUILDS[20])}


def test_a_drift_names_no_build_and_draws_the_curve():
    measure, _ = backend(lambda i: 20 * KiB + i * 1 * KiB)
    found = policy.bisect(BUILDS, "retained", measure, say=lambda s: None)
    assert found.kind == "drift" and found.first_bad is None
    values = [found.value(b.version) for b in BUILDS if b.version in found.readings]
    assert len(values) >= 5 and values == sorted(values)


def test_builds_that_read_alike_say_no_nightly_shows_the_change():
    measure, reads = backend(lambda i: 20 * KiB, noise=0.01)
    found = policy.bisect(BUILDS, "retained", measure, say=lambda s: None)
    assert found.kind == "none" and found.first_bad is None and found.steps == []
    assert len(set(reads)) == 2 + policy.SAMPLE  # the ends and the sample between them


def test_broken_builds_are_skipped_and_said():
    broken = {BUILDS[0].version, BUILDS[14].version, BUILDS[16].version}
    said = []
    measure, _ = backend(lambda i: 20 * KiB if i < 16 else 45 * KiB, broken=broken)
    found = policy.bisect(BUILDS, "retained", measure, say=said.append)
    assert set(found.broken) == broken and all("uv could not" in w for w in found.broken.values())
    assert found.kind == "step"
    assert (found.last_good, found.first_bad) == (BUILDS[15], BUILDS[17])
    assert any(BUILDS[14].version in s and "skipped" in s for s in said)


def test_a_build_that_reads_both_ways_is_undecided_after_its_readings():
    flip = itertools.cycle([20 * KiB, 45 * KiB])

    def value(i):
        return 20 * KiB if i < 10 else 45 * KiB if i > 10 else next(flip)

    measure, reads = backend(value)
    found = policy.bisect(BUILDS, "retained", measure, say=lambda s: None)
    assert found.kind == "unknown" and found.undecided == BUILDS[10].version
    assert reads.count(BUILDS[10].version) == policy.MAX_READINGS
    assert (found.last_good, found.first_bad) == (BUILDS[9], BUILDS[11])


def test_a_leak_verdict_bisects_on_unanimous_readings():
    def measure(build):
        return {"status": "ok", "iterations": 100, "leak": BUILDS.index(build) >= 5}

    found = policy.bisect(BUILDS, "leak", measure, say=lambda s: None)
    assert found.kind == "step" and found.first_bad == BUILDS[5]


def pairs(new_slower, ratio=1.08, unknown=()):
    """A fake pair reader: two builds' times compared as verdict.compared keeps them, new
    slower by `ratio` where new_slower(old index, new index), the same otherwise; UNKNOWN
    where a build of `unknown` is one of the two."""

    def pair(old, new):
        i, j = BUILDS.index(old), BUILDS.index(new)
        answer = (
            "unknown" if {old.version, new.version} & set(unknown)
            else "different" if new_slower(i, j) else "same"
        )  # fmt: skip
        r = ratio if answer == "different" else 1.0
        found = {"old": old.version, "new": new.version, "answer": answer, "ratio": r}
        return found | {
            "low": r * 0.98,
            "high": r * 1.02,
            "pairs": 8,
            "margin": 0.02,
            "level": 0.95,
            "skipped": None,
        }

    return pair


def test_time_is_compared_in_pairs_and_names_the_build_the_pairs_part_at():
    """Time's test is the pair reader's verdict, not the single readings: these read the
    same at every build, the pairs part between builds 16 and 17."""
    measure, reads = backend(lambda i: 20 * KiB)
    pair = pairs(lambda i, j: i < 17 <= j)
    found = policy.bisect(BUILDS, "time", measure, say=lambda s: None, pair=pair)
    assert found.kind == "step"
    assert (found.last_good, found.first_bad) == (BUILDS[16], BUILDS[17])
    sampled = len(policy._spread(0, len(BUILDS) - 1))
    first = [(t["old"], t["new"]) for t in found.times[: sampled - 1]]
    second = policy._spread(0, len(BUILDS) - 1)[1]
    assert first[0] == (BUILDS[0].version, BUILDS[second].version)  # the sample's neighbours
    assert len(found.times) <= sampled - 1 + 2 * 3  # then two pairs a build visited
    assert len(reads) == 2 * len(set(reads))  # a build's readings: MIN_READINGS, no more


def test_time_read_the_same_at_every_build_is_no_nightly_and_unknown_is_undecided():
    measure, _ = backend(lambda i: 20 * KiB)
    same = policy.bisect(BUILDS, "time", measure, lambda s: None, pairs(lambda i, j: False))
    assert same.kind == "none" and len(same.times) == policy.SAMPLE + 1  # the sample's pairs
    middle = BUILDS[16].version  # the middle of the sampled span that parts (14, 18)
    pair = pairs(lambda i, j: i < 17 <= j, unknown=[middle])
    undecided = policy.bisect(BUILDS, "time", measure, lambda s: None, pair)
    assert undecided.kind == "unknown" and undecided.undecided == middle


def test_a_time_bisection_keeps_its_pairs_and_tells_them():
    """What the pair reader said about each two builds is kept with the bisection, checked
    as it is read back, and told: ratio, interval, pairs, answer."""
    from tfbench.cli import output
    from tfbench.nightly import upstream

    told = pairs(lambda i, j: j >= 3, ratio=1.071)
    data = dict(kept_bisection(), metric="time")
    data["times"] = [told(BUILDS[0], BUILDS[3]), told(BUILDS[0], BUILDS[1])]
    checked = keptfiles.bisection.check(json.loads(json.dumps(data)))
    assert checked["times"] == data["times"]
    text = output.nightly(checked)
    assert f"{BUILDS[0].version} -> {BUILDS[3].version}: x1.071 (95% interval" in text
    assert "8 pairs): different (margin 2%)" in text and "): same (margin 2%)" in text
    assert keptfiles.bisection.check(kept_bisection())["times"] == []  # kept before: none
    issue = upstream.issue(checked, "print(1)\n")
    assert f"- {BUILDS[0].version} -&gt; {BUILDS[3].version}: x1.071 (95% interval" in issue
    # kept before comparisons named their level: read at 99%, and told so
    data["times"] = [{k: v for k, v in t.items() if k != "level"} for t in data["times"]]
    before = keptfiles.bisection.check(json.loads(json.dumps(data)))
    assert f"{BUILDS[3].version}: x1.071 (99% interval" in output.nightly(before)
    data["times"][0]["level"] = 1.5
    with pytest.raises(keptfiles.Invalid, match=r"times\[0\]\.level"):
        keptfiles.bisection.check(data)


@pytest.mark.parametrize("metric", ["retained", "heap-peak", "growth", "peak", "time", "leak"])
def test_every_bisect_metric_reads_a_figure(metric):
    reading = {
        "leak": True,
        "seconds_per_iteration": 0.01,
        "retained_bytes_per_iteration": 1.0,
        "heap_peak_increase_bytes": 2,
        "growth_bytes_per_iteration": 3.0,
        "peak_increase_bytes": 4,
    }
    assert policy.figure(metric, reading) is not None


# ---- the report to file upstream, rendered from a kept bisection --------------------------


def kept_bisection() -> dict:
    """A kept bisection's shape (tfbench.nightly.run.kept), of a step between two builds."""

    def reading(kept):
        return {
            "status": "ok",
            "iterations": 100,
            "retained_bytes_per_iteration": kept,
            "heap_bytes": kept,
            "retained_interval": [kept - 100, kept + 100],
        }

    builds = [
        {"version": b.version, "uploaded": b.uploaded, "git_version": f"v1.12.1-{k}-gabc{k:04d}"}
        for k, b in enumerate(BUILDS[:4])
    ]
    return {
        "format": keptfiles.bisection.FORMAT,
        "target": {"scenario": "loop.python_matmul", "params": {"size": 256}},
        "metric": "retained",
        "kind": "step",
        "builds": builds,
        "readings": {
            BUILDS[0].version: [reading(20480.0)] * 2,
            BUILDS[1].version: [reading(20500.0)] * 2,
            BUILDS[3].version: [reading(46080.0)] * 2,
        },
        "broken": {BUILDS[2].version: "cannot be installed: no wheel"},
        "last_good": BUILDS[1].version,
        "first_bad": BUILDS[3].version,
        "undecided": None,
        "compare_url": "https://github.com/tensorflow/tensorflow/compare/abc0001...abc0003",
        "seconds": 1800.0,
        "old": "2.21.0",
        "new": "2.22.0rc0",
        "dependencies": ["keras 3.12.0 -> 3.13.0"],
        "packages": {
            BUILDS[1].version: ["keras-nightly==3.13.0.dev1", "numpy==2.1.3", "tf-nightly==a"],
            BUILDS[3].version: ["keras-nightly==3.13.0.dev3", "numpy==2.1.3", "tf-nightly==b"],
        },
        "releases": {"2.21.0": [reading(20400.0)] * 3, "2.22.0rc0": [reading(46000.0)] * 3},
        "repro": {BUILDS[3].version: "retained per call (heap in use): 45.00 KiB"},
        "limits": {"iterations": 100, "warmup": 10, "budget_bytes": None, "timeout_s": 600},
        "environment": {"os": "Linux 6.1 (x86_64)", "python": "3.11.7", "cpu": "AMD EPYC"},
    }


def test_the_upstream_report_follows_tensorflows_template(tmp_path):
    from tfbench.nightly import upstream

    written = upstream.render_again(keptfiles.bisection.check(kept_bisection()), tmp_path)
    issue = written["issue"].read_text()
    for heading in (
        "### Issue type\n\nPerformance",
        "### Have you reproduced the bug with TensorFlow Nightly?\n\nYes, tf-nightly "
        + BUILDS[3].version,
        "### TensorFlow version\n\n2.21.0 (as expected), 2.22.0rc0 (changed)",
        "### Standalone code to reproduce the issue",
        "### Current behavior?\n\nOn 2.22.0rc0: 44.92 KiB/call",
        "### Expected behavior?\n\nAs on 2.21.0: 19.92 KiB/call",
    ):
        assert heading in issue
    assert "compare/abc0001...abc0003" in issue and "skipped: cannot be installed" in issue
    assert "`v1.12.1-3-gabc0003`" in issue  # each build's GIT_VERSION
    assert written["repro"].read_text() in issue
    assert "environments (each resolved as PyPI stood at its upload): keras-nightly " in issue
    assert "3.13.0.dev1 -&gt; 3.13.0.dev3." in issue  # the one change: tf-nightly's own left out
    assert "\nnumpy==2.1.3\n" in issue  # the first bad build's packages in full
    assert issue.splitlines()[2] == (
        "# Bytes the step keeps per call for good: glibc's heap in use after a full collection "
        "of Python's garbage, its slope over the calls after warm-up "
        "(`loop.python_matmul(size=256)`): 19.92 KiB/call on 2.21.0, 44.92 KiB/call on "
        "2.22.0rc0"
    )
    assert "|---|---|---|\n| tensorflow-cpu 2.21.0 (release) |" in issue  # one table
    assert (
        f"`python repro.py` with tf-nightly {BUILDS[3].version}:\n\n```\n"
        "retained per call (heap in use): 45.00 KiB\n```"
    ) in issue


def test_repro_is_standalone_python_importing_only_tensorflow_psutil_and_the_stdlib(tmp_path):
    import ast

    from tfbench.nightly import repro
    from tfbench.targets import FunctionTarget, ScenarioTarget

    user = tmp_path / "mine.py"
    user.write_text(
        "from __future__ import annotations\nimport numpy as np\n\n\ndef step():\n    pass\n"
    )
    for target in (
        ScenarioTarget("loop.python_matmul", {"size": 64}),
        ScenarioTarget("threads.new_op_per_run", {}),  # builds on the graphs module
        FunctionTarget(str(user), "step"),
    ):
        tree = ast.parse(repro.source(target, 100, 10))
        imported = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                imported |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                imported.add(node.module.split(".")[0])
        allowed = set(sys.stdlib_module_names) | {"tensorflow", "psutil", "numpy"}
        assert imported <= allowed, imported - allowed


RANGE = ["2.21.0", "2.22.0rc0"]


@pytest.mark.parametrize(
    "argv",
    [
        ["upstream", "footprint", "--metric", "footprint-heap", *RANGE],
        ["bisect", "footprint", "--nightlies", "--metric", "footprint-heap", *RANGE],
        ["upstream", "footprint", *RANGE, "--metric", "footprint-heap"],
    ],
)
def test_the_range_may_follow_the_options(argv):
    """argparse alone refuses a range after the options (nargs="*" matched empty)."""
    from tfbench.cli import parse

    args = parse(argv)
    assert (args.target, args.metric, args.range) == (
        "footprint",
        "footprint-heap",
        RANGE,
    )


def fake_environment(build, root):
    """A build's environment as builds.ensure leaves it, whose Python is this one."""
    from tfbench.nightly import builds

    where = builds.path(build, root)
    (where / "bin").mkdir(parents=True)
    python = where / "bin" / "python"
    python.write_text(f'#!/bin/sh\nexec {sys.executable} "$@"\n')
    python.chmod(0o755)
    (where / builds.MARK).write_text("{}")


def test_a_builds_packages_are_read_from_its_environment_or_none_when_gone(tmp_path):
    from tfbench.nightly import builds

    build = BUILDS[0]
    assert builds.packages(build, tmp_path) is None
    fake_environment(build, tmp_path)
    listed = builds.packages(build, tmp_path)
    assert listed and listed == sorted(listed, key=str.lower)
    assert all(p.count("==") == 1 for p in listed)


def test_repro_runs_bounded_and_says_why_it_stopped():
    from tfbench.nightly import repro
    from tfbench.targets import Limits

    python = Path(sys.executable)
    assert repro.run("print('figure 1')\nprint('figure 2')", python, Limits()) == (
        "figure 1\nfigure 2"
    )
    hog = "import time\nprint('start', flush=True)\nx = bytearray(400 << 20)\ntime.sleep(30)"
    said = repro.run(hog, python, Limits(budget_bytes=200 * MiB))
    assert said == "start\n(stopped: RSS passed the budget of 200 MiB)"
    said = repro.run("import time\ntime.sleep(30)", python, Limits(timeout_s=1))
    assert said == "(stopped after 1 s)"
    failed = "import sys\nprint('log', file=sys.stderr)\nraise SystemExit(3)"
    assert repro.run(failed, python, Limits()) == "log\n(exit 3)"
    assert repro.run("import sys\nprint('log', file=sys.stderr)", python, Limits()) == ""


@pytest.mark.slow  # TensorFlow imported twice
def test_the_footprints_repro_prints_rss_and_the_heap_in_a_builds_environment(tmp_path):
    from tfbench.nightly import run
    from tfbench.targets import FootprintTarget, Limits

    data = kept_bisection()
    data["target"] = {"scenario": "footprint", "params": {"device": "CPU"}}
    data["packages"] = {BUILDS[1].version: ["a==1"], BUILDS[3].version: ["a==2"]}
    fake_environment(BUILDS[3], tmp_path)  # the first build's environment is gone
    target = FootprintTarget({"device": "CPU"})
    printed = run.reproduce(data, target, Limits(), tmp_path, say=lambda s: None)
    assert list(printed) == [BUILDS[3].version]
    lines = printed[BUILDS[3].version].splitlines()
    assert len(lines) == 2 and all("RSS" in line and "heap in use" in line for line in lines)
    assert lines[0].endswith("(PYTHONMALLOC=default)")
    assert lines[1].endswith("(PYTHONMALLOC=malloc)")


def test_a_command_of_commands_parses_as_before():
    from tfbench.cli import parse

    args = parse(["releases", "check", "--json"])
    assert (args.command, args.action, args.json) == ("releases", "check", True)


KEPT = sorted(Path(__file__).parents[1].glob("results/upstream/*/*/bisect.json"))


@pytest.mark.parametrize("kept", KEPT, ids=lambda p: p.parent.name)
def test_a_kept_bisection_replays_to_its_conclusion(kept):
    """The policy, fed the readings a real bisection took, asks for them in the same order
    and concludes the same: a change to the policy that changes a kept verdict shows here."""

    data = keptfiles.bisection.read(kept)
    builds = [Build(b["version"], b["uploaded"]) for b in data["builds"]]
    queue = {v: list(readings) for v, readings in data["readings"].items()}
    broken = data["broken"]

    def measure(build):
        if build.version in broken:
            raise Broken(broken[build.version])
        return queue[build.version].pop(0)

    found = policy.bisect(builds, data["metric"], measure, say=lambda s: None)
    named = [b and b.version for b in (found.last_good, found.first_bad)]
    assert (found.kind, *named) == (data["kind"], data["last_good"], data["first_bad"])
    assert not any(queue.values())  # every reading asked for


@pytest.mark.parametrize("kept", KEPT, ids=lambda p: p.parent.name)
def test_a_kept_report_is_what_the_code_renders(kept, tmp_path):
    from tfbench.nightly import upstream

    upstream.render_again(keptfiles.bisection.read(kept), tmp_path)
    for name in ("issue.md", "repro.py"):
        assert (tmp_path / name).read_text() == (kept.parent / name).read_text(), name


def test_releases_older_than_the_index_holds_are_told_so(monkeypatch):
    """tf-nightly's index keeps only its newer builds (from 2.21.0.dev20260202 on, read on
    2026-12-08): a bisection between two releases before them says the index holds none
    between them, and which it holds, not that too few builds could be measured."""
    from tfbench.cli import output
    from tfbench.nightly import builds, run

    wheel = "-cp311-cp311-manylinux_2_27_x86_64.whl"
    files = [
        {"filename": f"tf_nightly-{b.version}{wheel}", "upload-time": b.uploaded}
        for b in BUILDS[::-1]
    ]
    monkeypatch.setattr(builds, "index_files", lambda project: files)
    assert builds.between("2.16.2", "2.17.1", "2024-10-04T00:00:00Z") == []
    assert builds.between("2.21.0", "2.22.0rc0", "2026-03-01T00:00:00Z") == BUILDS
    assert builds.none_between("2.16.2", "2.17.1") == (
        "no nightly build between 2.16.2 and 2.17.1 on the index "
        f"(its oldest is {BUILDS[0].version} of 2026-02-01)"
    )
    found = policy.bisect([], "retained", lambda build: pytest.fail("nothing to read"))
    data = run.kept(found, targets.ScenarioTarget("loop.numpy"), {}, 0.0)
    data.update(old="2.16.2", new="2.17.1", dependencies=[], packages={})  # bisect_between's
    text = output.nightly(data)  # as `tfbench bisect --nightlies` prints it
    assert text.startswith("retained: undecided: the index holds no nightly build between them")
