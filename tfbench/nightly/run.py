"""A nightly bisection run for real: each build in its own environment (builds.ensure), the
target measured there in fresh processes (targets.measure), kept as JSON."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from tfbench import figures, keptfiles, sweep, targets
from tfbench.history import envs, releases
from tfbench.history.envsync import lock_file_name
from tfbench.measure.record import measured
from tfbench.nightly import builds, policy, repro, sentinels, series, upstream, watch
from tfbench.nightly.policy import Broken, Build, Found
from tfbench.pairs import timing


def reader(
    target: targets.Target,
    limits: targets.Limits,
    root: Path | None = None,
    say: Callable[[str], None] = print,
) -> tuple[policy.Measure, dict[str, str]]:
    """Measure one reading of a build (its environment made first); and the GIT_VERSION of
    every build installed, filled as builds are read."""
    root = root or envs.default_root()
    commits: dict[str, str] = {}

    def measure(build: Build) -> dict[str, Any]:
        python, known = builds.ensure(build, root, say)
        commits[build.version] = known.git_version or ""
        began = time.monotonic()
        record = targets.measure(target, replace(limits, python=str(python), quiet=True))
        if not measured(record):
            raise Broken(f"the step did not run there: {record['status']}: {record.get('error')}")
        say(f"{build.version}: read in {time.monotonic() - began:.0f} s")
        return dict(record, release=build.version)

    return measure, commits


def paired(
    target: targets.Target, root: Path | None = None, say: Callable[[str], None] = print
) -> policy.Pair:
    """Two builds' times compared as the gate compares a point's (their environments made
    first): the bisection's test of time."""
    root = root or envs.default_root()

    def compare(old: Build, new: Build) -> dict[str, Any]:
        made = [str(builds.ensure(b, root, say)[0]) for b in (old, new)]
        return timing.compared(target, (made[0], made[1]), (old.version, new.version), say=say)

    return compare


def bisect_between(
    target: targets.Target,
    limits: targets.Limits,
    old: str,
    new: str,
    metric: str,
    root: Path | None = None,
    say: Callable[[str], None] = print,
) -> dict:
    """Bisect the nightlies between two tracked releases (builds.between) for the change in
    `metric`; the kept form, with the dependencies whose locked versions differ between the
    releases (where no nightly shows the change, they are suspects)."""
    began = time.monotonic()
    found_builds = builds.between(old, new, releases.read_lock(new).released)
    if found_builds:
        say(f"{len(found_builds)} nightly builds between {old} and {new}")
    else:
        say(builds.none_between(old, new))
    measure, commits = reader(target, limits, root, say)
    timed = paired(target, root, say) if figures.named(metric).kind == figures.TIME else None
    found = policy.bisect(found_builds, metric, measure, say, timed)
    data = kept(found, target, commits, time.monotonic() - began)
    named = [b for b in (found.last_good, found.first_bad) if b]
    read = [b for b in found.builds if b.version in found.readings]
    pair = named or read[:1] + read[-1:]
    data.update(
        old=old,
        new=new,
        dependencies=lock_changes(old, new),
        packages={b.version: builds.packages(b, root or envs.default_root()) for b in pair},
    )
    return data


def lock_changes(old: str, new: str) -> list[str]:
    """name old -> new, for each distribution whose pin differs between the releases' CPU
    locks (TensorFlow itself left out)."""
    pins = [
        [
            line
            for line in releases.read_lock(v).files[lock_file_name("cpu")].decode().splitlines()
            if "==" in line and not line.startswith("#")
        ]
        for v in (old, new)
    ]
    return builds.pin_changes(*pins)


def kept(found: Found, target: targets.Target, commits: dict[str, str], seconds: float) -> dict:
    """The bisection as kept: every build with its readings, and what it concluded."""
    good, bad = found.last_good, found.first_bad
    return {
        "target": keptfiles.fields.target(targets.to_json(target)),  # a file by its name alone
        "metric": found.metric,
        "kind": found.kind,
        "builds": [
            dict(asdict(b), git_version=commits.get(b.version) or b.git_version)
            for b in found.builds
        ],
        "readings": found.readings,
        "broken": found.broken,
        "last_good": good and good.version,
        "first_bad": bad and bad.version,
        "steps": [[a.version, b.version] for a, b in found.steps],
        "undecided": found.undecided,
        "times": found.times,
        "compare_url": good
        and bad
        and builds.compare_url(commits.get(good.version), commits.get(bad.version)),
        "seconds": seconds,
    }


def reproduce(
    data: dict,
    target: targets.Target,
    limits: targets.Limits,
    root: Path | None = None,
    say: Callable[[str], None] = print,
) -> dict[str, str]:
    """What repro.py of `target` prints in the environments of the two builds the bisection
    names (or the ends it read: those whose packages are kept), where they still are."""
    root = root or envs.default_root()
    code, printed = repro.of(data, target), {}
    for version in data.get("packages") or {}:
        python = builds.made(Build(version, ""), root)
        if python:
            say(f"{version}: running repro.py there ...")
            printed[version] = repro.run(code, python, limits)
    return printed


READINGS = 3  # of each release's figure: fresh processes, as the suite's probe


def file_upstream(
    target: targets.Target,
    metric: str,
    old: str,
    new: str,
    folder: Path,
    runner: sweep.Runner,
    again: bool = False,
    say: Callable[[str], None] = print,
    elsewhere: list[dict] | None = None,
) -> tuple[keptfiles.bisection.Bisection, dict[str, Path | str]]:
    """The report to file with TensorFlow, in `folder`: the nightly bisection between two
    releases (kept as bisect.json; the kept one unless `again`), each release read
    READINGS times, repro.py run in the named builds' environments, then issue.md,
    repro.py and plot.png rendered from the kept file as read back, checked. `elsewhere`:
    a time point's verdicts as kept gate runs read it, each on its CPU."""
    kept = folder / "bisect.json"
    if again or not kept.exists():
        limits = runner.limits
        found = bisect_between(target, limits, old, new, metric, runner.root, say)
        found["releases"] = {v: sweep.measure_releases(runner, [v] * READINGS) for v in (old, new)}
        found["limits"] = limits.to_json()
        found["environment"] = upstream.environment()
        found["elsewhere"] = elsewhere or []  # the point's time as the kept gates read it
        found["repro"] = reproduce(found, target, limits, runner.root, say)
        keptfiles.bisection.write(kept, found)
        data = keptfiles.bisection.read(kept)
    else:
        data = keptfiles.bisection.read(kept)
        say(f"the kept bisection: {kept}")
    return data, upstream.write(data, target, folder)


def watching(
    results_dir: Path,
    machine: str,
    limits: targets.Limits,
    since: str | None = None,
    until: str | None = None,
    every: int = 1,
    timed: bool = True,
    root: Path | None = None,
    say: Callable[[str], None] = print,
) -> tuple[list[Build], list[watch.Call]]:
    """The nightly watch for real (tfbench.nightly.watch): the builds of the window read on
    the sentinels, each in its own environment, kept in the machine's nightly history as
    soon as read (one run at a time: series.HistoryBusy); the builds read, and every call over the
    history."""
    root = root or envs.default_root()
    timer = paired(sentinels.STEPS[sentinels.TIMED], root, say) if timed else None

    def read_build(build: Build) -> tuple[Build, dict[str, dict]]:
        python, known = builds.ensure(build, root, say)
        began = time.monotonic()
        reading = sentinels.read(str(python), limits)
        say(f"{build.version}: sentinels read in {time.monotonic() - began:.0f} s")
        return known, reading

    with series.reading(results_dir, machine):
        entries = series.load(results_dir, machine)
        index = builds.published()
        todo = watch.window(entries, index, since, until, every)
        say(f"{len(todo)} build(s) to read; {len(entries)} read before on {machine}")
        run = watch.Watch(
            entries,
            index,
            read_build,
            timer,
            lambda e: series.save(e, results_dir, machine),
            upstream.environment(),
            say,
        )
        return todo, run.run(todo)
