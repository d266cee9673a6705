"""Benchmark versions on purpose (tfbench.versions): tidying the measuring code keeps every
family's version, a change to what is measured changes it, and what is committed is
recorded."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tfbench import versions
from tfbench.cli import main

ROOT = versions.ROOT
FAMILIES = sorted(versions.read())


def test_every_familys_measuring_code_is_recorded():
    """Code changed without `tfbench versions --same/--new` would measure under a version of
    its own, away from the committed history."""
    unrecorded = [f.key for f in versions.families() if f.code != f.recorded]
    assert not unrecorded, "run `tfbench versions` and record the change (--same or --new)"


def copy_project(tmp: Path) -> Path:
    for part in ("tfbench", "benchmarks"):
        shutil.copytree(ROOT / part, tmp / part, ignore=shutil.ignore_patterns("__pycache__"))
    return tmp


def edit(root: Path, file: str, old: str, new: str) -> None:
    path = root / file
    text = path.read_text()
    assert text.count(old) == 1, f"{file}: the edit's anchor is gone: {old!r}"
    path.write_text(text.replace(old, new))


def digests(root: Path = ROOT) -> dict[str, str]:
    return {k: versions.code_digest(k, root) for k in FAMILIES}


def test_comments_docstrings_formatting_renames_and_moves_keep_every_version(tmp_path):
    root = copy_project(tmp_path)
    edit(root, "tfbench/targets.py", "import json\n", "import json  # a comment\n")
    edit(root, "tfbench/measure/steps.py", "    Stops early with", "    Stopped early with")
    edit(root, "tfbench/measure/steps.py", "    gc.collect()\n", "    gc.collect(\n    )\n")
    # a local renamed throughout its function
    steps = root / "tfbench/measure/steps.py"
    head, sep, body = steps.read_text().partition("def measure(")
    steps.write_text(head + sep + body.replace("durations", "seconds_each"))
    # a function moved to another module (its import goes with it)
    growth = root / "tfbench/measure/growth.py"
    start = growth.read_text().index("def theil_sen_interval(")
    end = growth.read_text().index("def leak_verdict(")
    moved = growth.read_text()[start:end]
    growth.write_text(growth.read_text().replace(moved, ""))
    edit(root, "tfbench/measure/steps.py", "    theil_sen_interval,\n", "")
    steps.write_text(f"{steps.read_text()}\n\nimport math\n\n\n{moved}")
    assert digests(root) == digests()


def test_a_change_to_the_probe_window_changes_every_version(tmp_path):
    root = copy_project(tmp_path)
    # the baseline read without trimming the heap first: a different window
    edit(
        root,
        "tfbench/measure/steps.py",
        "    trim_heap()\n    baseline, heap_baseline",
        "    baseline, heap_baseline",
    )
    changed = digests(root)
    assert all(changed[k] != d for k, d in digests().items())
    recorded = versions.read()
    for key in FAMILIES:
        family = versions.FamilyVersion(
            key, recorded[key]["version"], recorded[key]["code"], changed[key]
        )
        assert family.current != recorded[key]["version"]


def test_a_scenarios_body_changes_its_familys_version_only(tmp_path):
    root = copy_project(tmp_path)
    edit(root, "tfbench/scenarios/loops.py", "SIZES = (", "SIZES = (8, ")
    changed, before = digests(root), digests()
    assert {k for k in FAMILIES if changed[k] != before[k]} == {"loops"}


def test_recording_a_refactor_keeps_the_version_and_a_new_measurement_changes_it(
    tmp_path, monkeypatch
):
    path = tmp_path / "versions.json"
    path.write_text(versions.FILE.read_text())
    recorded = versions.read(path)
    recorded["loops"]["code"] = "0" * 16  # as if the code had changed since
    recorded["graphs"]["code"] = "1" * 16
    versions.write(recorded, path)
    assert [f.key for f in versions.families(path) if f.code != f.recorded] == ["graphs", "loops"]
    (same,) = versions.record(["loops"], new=False, path=path)
    assert same.version == recorded["loops"]["version"]
    (new,) = versions.record(["graphs"], new=True, path=path)
    assert new.version != recorded["graphs"]["version"]
    assert all(f.code == f.recorded for f in versions.families(path))
    with pytest.raises(KeyError, match="no such family: nope"):
        versions.record(["nope"], new=False, path=path)


def test_the_command_lists_versions_and_refuses_an_unknown_family(capsys):
    assert main(["versions"]) == 0
    out = capsys.readouterr().out
    assert all(f"{f.key:<10} {f.version}" in out for f in versions.families())
    assert main(["versions", "--same", "nope"]) == 2
    assert "no such family: nope" in capsys.readouterr().err


OTHER_PYTHONS = [
    p
    for p in sorted(Path.home().glob(".pyenv/versions/3.1[0-9]*/bin/python3"))
    if not p.resolve().samefile(Path(sys.executable).resolve())
]


@pytest.mark.skipif(not OTHER_PYTHONS, reason="no other CPython 3.1x here")
def test_every_python_reads_the_same_digests():
    """asv computes versions with the environment's Python: 3.12 parses f-strings apart and
    adds empty fields, which the digest does not read."""
    script = "from tfbench import versions; print(sorted(versions.code_digest(k) for k in %r))"
    for python in OTHER_PYTHONS:
        out = subprocess.run(
            [str(python), "-c", script % FAMILIES],
            cwd=ROOT,
            env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert out.strip() == str(sorted(digests().values())), python
