"""The GitHub workflows, proven here without GitHub: their steps call project commands
(checked against the YAML), and the sequence the tracking workflow runs (two runners
measure a release each, their results are merged and published) runs locally."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import keep_probes

from tfbench import cpu
from tfbench.publish import merge

ROOT = Path(__file__).resolve().parents[1]
WORKFLOWS = ROOT / ".github" / "workflows"


def _workflow(name: str) -> dict:
    return yaml.safe_load((WORKFLOWS / name).read_text())


def _runs(job: dict) -> str:
    return "\n".join(step.get("run", "") for step in job["steps"])


def test_every_action_is_pinned_to_a_commit_with_its_release_named():
    for path in WORKFLOWS.glob("*.yml"):
        for line in path.read_text().splitlines():
            if "uses:" in line:
                assert re.search(r"uses: [\w.-]+/[\w.-]+@[0-9a-f]{40} # v\d+\.\d+\.\d+$", line), (
                    f"{path.name}: {line.strip()}"
                )


def test_ci_runs_what_the_readme_says():
    (job,) = _workflow("ci.yml")["jobs"].values()
    assert _runs(job).strip() == "bash .ci/run"
    readme = (ROOT / "README.md").read_text()
    command = (ROOT / ".ci" / "run").read_text().strip().splitlines()[-1]
    assert command in readme


def _collected(*args: str) -> list[str]:
    """The test ids pytest selects with these arguments (collection only)."""
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert run.returncode in (0, 5), run.stdout[-3000:] + run.stderr[-3000:]  # 5: none
    return [line for line in run.stdout.splitlines() if "::" in line]


def test_the_validation_job_runs_the_validation_tier_and_command_2_does_not():
    (job,) = _workflow("validation.yml")["jobs"].values()
    assert _runs(job).strip() == "bash .ci/validate"
    assert "bash .ci/validate" in (ROOT / "README.md").read_text()
    command = (ROOT / ".ci" / "validate").read_text().strip().splitlines()[-1]
    args = command.partition(".venv/bin/python -m pytest")[2].split()
    defined = {
        f"{path.relative_to(ROOT)}::{name}"
        for path in (ROOT / "tests" / "validation").glob("test_*.py")
        for name in re.findall(r"^def (test_\w+)", path.read_text(), re.M)
    }
    collected = _collected("-m", args[args.index("-m") + 1], *args[-1:])
    assert defined and {t.partition("[")[0] for t in collected} == defined
    assert _collected("tests/validation") == []  # README command 2's selection


def test_the_tracking_jobs_are_project_commands():
    jobs = _workflow("track.yml")["jobs"]
    plan = _runs(jobs["plan"])
    for command in (
        "tfbench releases check --pre --json",
        "tfbench releases add",
        "tfbench releases list --json",
        "tfbench releases list --newest-pair",
        "tfbench releases list --pythons",
    ):
        assert command in plan
    assert ".ci/measure" in _runs(jobs["measure"])
    # the gate in four shards on four runners, joined by one job (docs/gate.md#shards)
    assert 'tfbench gate $PAIR --shard "$SHARD/4"' in _runs(jobs["gate"])
    assert jobs["gate"]["strategy"]["matrix"]["shard"] == [1, 2, 3, 4]
    merged = _runs(jobs["gate-merge"])
    assert 'tfbench gate merge $PAIR --machine "$CPU_MACHINE" --markdown' in merged
    assert "gate" in jobs["gate-merge"]["needs"] and "gate-merge" in jobs["upstream"]["needs"]
    assert ".ci/publish artifacts" in _runs(jobs["publish"])
    assert '.ci/upstream "$PAIR" "$CPU_MACHINE"' in _runs(jobs["upstream"])  # the merged gate
    # one machine name, one CPU: every runner that measures names its machine by its CPU id
    for job in ("measure", "pythons", "gate"):
        assert '-$(.venv/bin/tfbench cpu --id)"' in _runs(jobs[job]), job
    # the gated release joins the history chained by the gate's pairs (docs/history.md)
    assert 'export CHAIN=${PAIR#* } HISTORY="$HISTORY_MACHINE"' in _runs(jobs["publish"])
    # the newest release on each other Python it has a wheel for, one job each
    assert ".ci/measure" in _runs(jobs["pythons"])
    assert "matrix.python" in json.dumps(jobs["pythons"]["steps"])
    assert "upstream" in jobs["publish"]["needs"]  # its reports are merged and published
    # every day, the nightly watch; its history merged and published
    assert '.ci/watch "$CPU_MACHINE"' in _runs(jobs["watch"])
    assert "watch" in jobs["publish"]["needs"]
    assert "results/nightly/" in json.dumps(jobs["watch"]["steps"])
    # the GPU jobs run on a self-hosted runner labelled gpu, with the GPU lock
    assert "self-hosted" in jobs["measure"]["runs-on"] and "gpu" in jobs["measure"]["runs-on"]
    assert "TFBENCH_WHEELS=$KIND" in _runs(jobs["measure"])
    # every job asks for no more than it needs; the workflow itself for nothing
    assert _workflow("track.yml")["permissions"] == {}
    assert jobs["deploy"]["permissions"] == {"pages": "write", "id-token": "write"}


@pytest.mark.parametrize("exit_code, passes", [(0, True), (1, True), (2, False), (70, False)])
def test_the_watch_step_fails_on_an_error_but_not_on_a_step_called(tmp_path, exit_code, passes):
    stub = tmp_path / "tfbench"
    stub.write_text(f'#!/bin/sh\necho "called with $*"\nexit {exit_code}\n')
    stub.chmod(0o755)
    run = subprocess.run(
        ["bash", str(ROOT / ".ci" / "watch"), "gha-test", "--no-time"],
        cwd=tmp_path,
        env={**os.environ, "TFBENCH": str(stub)},
        capture_output=True,
        text=True,
    )
    assert (run.returncode == 0) == passes
    assert "called with watch --machine gha-test --no-time" in run.stdout
    assert (tmp_path / "watch.txt").read_text() == run.stdout  # what the summary shows


def _runner(base: Path, name: str) -> Path:
    """A checkout of the project on a fresh runner: its code, its history, no results."""
    runner = base / name
    for part in ("tfbench", "benchmarks", "releases", ".ci"):
        shutil.copytree(ROOT / part, runner / part, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "asv.conf.json", runner)
    (runner / "home").mkdir()
    return runner


def _measure(runner: Path, release: str) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "HOME": str(runner / "home"),  # asv keeps its machine file there
        "PYTHON": sys.executable,
        "TFBENCH_BENCH": r"^graphs\.Eager(Costs\.track_leak|\.peakmem_step)",
        "TFBENCH_REPEATS": "1",  # a probe point in one process: its spread is not read here
    }
    return subprocess.run(
        ["bash", ".ci/measure", release, "gha-test"],
        cwd=runner,
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
    )


def _artifact(runner: Path, artifacts: Path, name: str) -> None:
    """What upload-artifact keeps of the measuring job (its paths, under results/)."""
    results, out = runner / "results", artifacts / name
    out.mkdir(parents=True)
    shutil.copy(results / "benchmarks.json", out)
    for part in ("gha-test", "packages", "probes"):
        shutil.copytree(results / part, out / part)


@pytest.mark.parametrize("chain", ["v2.22.0", ""])
def test_the_publish_step_chains_the_gated_release_between_merge_and_publish(tmp_path, chain):
    """The publish job's command: merge, then (a gated release) chain it onto the history,
    then publish; a failed chain fails the job before anything is published."""
    stub = tmp_path / "tfbench"
    stub.write_text('#!/bin/sh\necho "called with $*" >> calls.txt\n')
    stub.chmod(0o755)
    (tmp_path / "artifacts" / "results-x").mkdir(parents=True)
    env = {**os.environ, "TFBENCH": str(stub), "CHAIN": chain, "HISTORY": "lab"}
    run = subprocess.run(
        ["bash", str(ROOT / ".ci" / "publish"), "artifacts"], cwd=tmp_path, env=env
    )
    assert run.returncode == 0
    calls = (tmp_path / "calls.txt").read_text().splitlines()
    chained = [f"called with results chain {chain} --onto lab --config asv.conf.json"]
    assert [c.split(" artifacts/")[0] for c in calls] == [
        "called with results merge",
        *(chained if chain else []),
        "called with publish --config asv.conf.json",
    ]


def test_measure_refuses_a_machine_read_on_another_cpu_before_it_runs(tmp_path):
    """One machine name, one CPU: a runner whose machine's kept record names another CPU
    (or none) stops with the name to measure into, and asv never starts."""
    runner = _runner(tmp_path, "runner")
    kept = runner / "results" / "gha-test" / "machine.json"
    kept.parent.mkdir(parents=True)
    kept.write_text(json.dumps({"machine": "gha-test", "cpu": "AMD EPYC (2 cores)"}))
    run = _measure(runner, "2.21.0")
    assert run.returncode == 2, run.stdout + run.stderr
    assert f"--machine gha-test-{cpu.identity()['id']}" in run.stderr
    assert not (runner / ".asv").exists() and not (runner / "home" / ".asv-machine.json").exists()


@pytest.mark.slow
def test_two_runners_measure_merge_and_publish(tmp_path):
    """Two runners measure a release each (the candidate among them), as the tracking
    workflow's matrix does; the publish job merges their artifacts and builds the site,
    which has both releases."""
    artifacts = tmp_path / "artifacts"
    for name, release in (("runner-a", "2.21.0"), ("runner-b", "2.22.0rc0")):
        runner = _runner(tmp_path, name)
        run = _measure(runner, release)
        assert run.returncode == 0, (run.stdout + run.stderr)[-4000:]
        _artifact(runner, artifacts, f"results-{release}-cpu")
    machines = [
        json.loads((a / "gha-test" / "machine.json").read_text()) for a in artifacts.iterdir()
    ]
    assert machines[0] == machines[1]  # one machine, described alike by both runners
    assert cpu.id_in(machines[0]["cpu"]) == cpu.identity()["id"]  # the runners' CPU

    publisher = _runner(tmp_path, "publisher")
    env = {**os.environ, "TFBENCH": str(Path(sys.executable).parent / "tfbench")}
    run = subprocess.run(
        ["bash", ".ci/publish", str(artifacts)],
        cwd=publisher,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert run.returncode == 0, (run.stdout + run.stderr)[-4000:]
    assert "0 skipped" in run.stdout
    results = sorted(p.name for p in (publisher / "results" / "gha-test").glob("*.json"))
    assert len(results) == 3  # machine.json and one results file a release
    index = json.loads((publisher / ".asv" / "html" / "index.json").read_text())
    assert index["params"]["machine"] == ["gha-test"]
    assert {"v2.21.0", "v2.22.0rc0"} <= set(index["tags"])
    report = (publisher / ".asv" / "html" / "report.md").read_text()
    assert "v2.21.0, v2.22.0rc0 (candidate)" in report


def _shard(base: Path, name: str, cpu: str) -> Path:
    """A results directory holding machine `m` as described by `cpu`."""
    shard = base / name / "m"
    shard.mkdir(parents=True)
    (shard / "machine.json").write_text(json.dumps({"machine": "m", "cpu": cpu, "version": 1}))
    return shard.parent


def test_a_machine_described_differently_by_two_shards_is_an_error(tmp_path):
    a, b = _shard(tmp_path, "a", "one"), _shard(tmp_path, "b", "another")
    with pytest.raises(merge.MergeError, match=r"machine m is described differently in .*a/m/"):
        merge.merge([a, b], tmp_path / "results")
    assert not (tmp_path / "results").exists()  # nothing merged


def test_merge_skips_what_it_cannot_read_and_loses_nothing(tmp_path):
    target = tmp_path / "results"
    (target / "packages" / "m").mkdir(parents=True)
    (target / "packages" / "m" / "00000000-env-cpu.txt").write_text("# kept\n")
    shard = _shard(tmp_path, "a", "one")
    (shard / "m" / "deadbeef-env.json").write_bytes(b"\xff")  # not UTF-8
    (shard / "packages" / "m").mkdir(parents=True)
    (shard / "packages" / "m" / "abcdef01-env-cpu.txt").write_text("# lock\nnumpy==2.0\n")
    (shard / "packages" / "m" / "notes.md").write_text("x")
    (shard / "packages" / "abcdef02-env-cpu.txt").write_text("# lock\n")  # no machine
    (shard / "probes" / "m").mkdir(parents=True)
    (shard / "probes" / "m" / "abcdef0c-env-cpu.json").write_text("[1, 2]")
    keep_probes(shard / "probes" / "m" / "abcdef0d-env-cpu.json")
    (shard / "probes" / "m" / "abcdef0e-env-cpu.json").write_text(
        '{"C": {"k": [{}]}, "format": 3}'
    )
    (shard / "probes" / "m" / "abcdef0f-env-cpu.json").write_text(  # format 2 names its CPU
        '{"C": {"k": [{"status": "ok"}]}, "format": 2}'
    )
    done = merge.merge([shard], target)
    assert sorted(map(str, done.added)) == [
        "m/machine.json",
        "packages/m/abcdef01-env-cpu.txt",
        "probes/m/abcdef0d-env-cpu.json",
    ]
    assert any("abcdef0e-env-cpu.json: format: 3; this tfbench reads" in s for s in done.skipped)
    assert any("abcdef0f-env-cpu.json: cpu: missing" in s for s in done.skipped)
    assert any("deadbeef-env.json" in s for s in done.skipped)
    assert any("abcdef0c-env-cpu.json: list where an object" in s for s in done.skipped)
    assert any("notes.md: not in its place" in s for s in done.skipped)
    assert any("abcdef02-env-cpu.txt: not in its place" in s for s in done.skipped)
    assert (target / "packages" / "m" / "00000000-env-cpu.txt").read_text() == "# kept\n"


def test_the_upstream_step_writes_up_the_gates_worse_row_from_its_kept_bisection(tmp_path):
    """.ci/upstream as the upstream job runs it, on a kept gate run whose worse row has a
    kept bisection: the report is rendered again (no nightly installed), and merged."""
    from test_nightly import kept_bisection

    from tfbench.nightly import upstream
    from tfbench.targets import ScenarioTarget

    runner = _runner(tmp_path, "runner")
    results = runner / "results"
    results.mkdir()
    shutil.copy(ROOT / "results" / "benchmarks.json", results)
    params = {"variant": "python_matmul", "gradient": "none", "size": 256}
    params |= {"loop_iterations": 100, "device": "CPU"}
    row = {
        "benchmark": "loops.MatrixPowerCosts.track_retained_per_iteration",
        "params": params,
        "metric": "track_retained_per_iteration",
        "direction": "worse",
        "old": 20400.0,
        "new": 46000.0,
        "unit": "bytes/iteration",
        "evidence": {
            "rule": "apart",
            "figure": "retained",
            "old": [20400.0, 20400.0],
            "new": [46000.0, 46000.0],
            "floor": 1024,
            "readings": [5, 5],
        },
    }
    gate = results / "gate" / "gha-test" / "v2.21.0-v2.22.0rc0.json"
    gate.parent.mkdir(parents=True)
    time = {"design": "interleaved", "margin": 0.02, "pairs": [8, 14], "seconds": 0.2}
    time |= {"skipped": 0, "different": 0, "same": 81, "unknown": []}
    gate.write_text(json.dumps({"format": 3, "time": time, "rows": [row], "shifts": []}))
    target = ScenarioTarget(
        "loop.python_matmul", {k: v for k, v in params.items() if k != "variant"}
    )
    slug = upstream.slug(target, "retained")
    kept = results / "upstream" / "gha-test" / slug / "bisect.json"
    kept.parent.mkdir(parents=True)
    kept.write_text(
        json.dumps(
            dict(kept_bisection(), target={"scenario": target.scenario, "params": target.params})
        )
    )
    run = subprocess.run(
        ["bash", ".ci/upstream", "2.21.0 2.22.0rc0", "gha-test", "1"],
        cwd=runner,
        env={**os.environ, "TFBENCH": str(Path(sys.executable).parent / "tfbench")},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr
    issue = (kept.parent / "issue.md").read_text()
    assert "compare/abc0001...abc0003" in issue and (kept.parent / "repro.py").is_file()
    merged = merge.merge([results], tmp_path / "merged")
    assert Path("upstream") / "gha-test" / slug / "bisect.json" in merged.added
    assert any(f"{slug}/issue.md: rendered again from bisect.json" in s for s in merged.rendered)
    assert not merged.skipped
