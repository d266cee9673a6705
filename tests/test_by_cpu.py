"""A pair's time on several CPUs (tfbench.publish.by_cpu): each CPU's verdicts side by side,
a change general only where it holds on each; the calibration kept per CPU
(tfbench.gate.calibration) and the gate's one line where a CPU has none; a time row's
readings on each CPU in the issue filed upstream."""

from __future__ import annotations

import json
import math

import pytest

from tfbench import cpu, keptfiles
from tfbench.gate import calibration, kept
from tfbench.gate.rules import Change
from tfbench.pairs import verdict
from tfbench.publish import by_cpu

PAIR = ("v2.21.0", "v2.22.0rc0")
HERE = json.loads(json.dumps(cpu.identity()))
OTHER = json.loads(json.dumps(cpu.parse("vendor_id\t: AuthenticAMD\ncpu family\t: 26\n", {}, 2)))


def _point(name: str, identity: dict, answer: str, ratio: float) -> dict:
    return {"point": name, "cpu": identity["id"], "answer": answer, "ratio": ratio,
            "low": ratio * 0.99, "high": ratio * 1.01, "pairs": 8}  # fmt: skip


def _run(results, machine: str, identity: dict | None, points: list[dict], rows=()) -> None:
    time = {"design": "turns", "margin": 0.02, "pairs": [8, 50], "seconds": 0.5,
            "skipped": 0, "different": 0, "same": 0,
            "unknown": ["m.C.time_step('c')"], "points": points}  # fmt: skip
    read_on = {"cpus": {identity["id"]: identity}, "onednn": {}} if identity else {}
    kept.write(results, machine, PAIR, time, list(rows), (), read_on)


def _row(name: str, ratio: float) -> Change:
    evidence = {"rule": "time", "ratio": ratio, "low": ratio * 0.99, "high": ratio * 1.01,
                "pairs": 8, "margin": 0.02, "level": 0.98,
                "old": 1e-3, "new": ratio * 1e-3}  # fmt: skip
    direction = "worse" if ratio > 1 else "better"
    return Change(f"m.C.time_step('{name}')", "m.C.time_step", {"variant": f"'{name}'"},
                  "time_step", direction, 1e-3, ratio * 1e-3, "seconds", evidence)  # fmt: skip


def test_each_cpus_verdicts_side_by_side_a_change_general_where_it_holds_on_each(tmp_path):
    _run(tmp_path, "runner-intel", HERE, [
        _point("m.C.time_step('a')", HERE, "different", 1.06),
        _point("m.C.time_step('b')", HERE, "different", 1.05),
        _point("m.C.time_step('c')", HERE, "same", 1.0),
    ])  # fmt: skip
    _run(tmp_path, "runner-old", None, [], [_row("a", 1.08), _row("c", 0.9)])  # before CPUs
    found = by_cpu.read(tmp_path, PAIR, [])
    assert found is not None
    assert found.cpus == ["a CPU not recorded (runner-old)", f"cpu {HERE['id']}"]
    lines = found.lines()
    assert lines[0] == "Worse on each CPU (general): m.C.time_step('a') x1.080 / x1.060."
    assert lines[1] == f"Worse on cpu {HERE['id']} only: m.C.time_step('b') - / x1.050."
    data = tmp_path / "gate" / "runner-old" / "v2.21.0-v2.22.0rc0.json"
    kept_run = json.loads(data.read_text())
    kept_run["time"]["unknown"].append("m.C.time_step('b')")  # a run before points: unknown
    data.write_text(json.dumps(kept_run))
    again = by_cpu.read(tmp_path, PAIR, [])
    assert again is not None
    assert (
        again.lines()[1] == f"Worse on cpu {HERE['id']} only: m.C.time_step('b') unknown / x1.050."
    )
    assert lines[2] == (
        "Better on a CPU not recorded (runner-old) only: m.C.time_step('c') x0.900 / x1.000."
    )
    assert len(lines) == 3
    (single,) = [tmp_path / "gate" / "runner-old"]
    for path in single.iterdir():
        path.unlink()
    assert by_cpu.read(tmp_path, PAIR, []) is None  # one CPU: nothing side by side


def test_a_time_points_readings_on_each_cpu_for_the_issue(tmp_path):
    _run(tmp_path, "runner-intel", HERE, [_point("m.C.time_step('a')", HERE, "different", 1.06)])
    _run(tmp_path, "runner-old", None, [], [_row("a", 1.02)])
    _run(tmp_path, "runner-amd", OTHER, [_point("m.C.time_step('b')", OTHER, "same", 1.0)])
    found = by_cpu.point(tmp_path, PAIR, "m.C.time_step('a')", [])
    assert [(f["cpu"], f["answer"]) for f in found] == [
        (f"cpu {HERE['id']}", "different"),
        ("a CPU not recorded (runner-old)", "different"),
    ]  # the AMD run did not read it
    unknown = by_cpu.point(tmp_path, PAIR, "m.C.time_step('c')", [])
    assert [(f["cpu"], f["answer"]) for f in unknown] == [
        ("a CPU not recorded (runner-old)", "unknown")
    ]
    for told in found:  # as bisect.json keeps them
        keptfiles.bisection.elsewhere(json.loads(json.dumps(told)), "elsewhere[0]")


def test_the_issue_says_how_each_cpus_gate_read_the_time_point():
    from tfbench.nightly import upstream

    data = {"elsewhere": [
        {"cpu": f"cpu {HERE['id']}", "answer": "different", "ratio": 1.058, "low": 1.035,
         "high": 1.093},
        {"cpu": "a CPU not recorded (linux-2cpu-24gb)", "answer": "no row", "ratio": None,
         "low": None, "high": None},
    ]}  # fmt: skip
    said = upstream._elsewhere(data)  # type: ignore[arg-type]
    assert f"cpu {HERE['id']}: different x1.058 [1.035, 1.093]" in said
    assert "a CPU not recorded (linux-2cpu-24gb): no row" in said
    assert upstream._elsewhere({"elsewhere": []}) == ""  # type: ignore[arg-type]


def _timed(ratio: float, n: int) -> dict:
    found = {}
    for k in range(n):
        point = ("m.C.time_step", (f"'{k}'",))
        found[point] = verdict.Timed(point, 0.02, logs=[math.log(ratio)] * 8)
    return found


@pytest.mark.parametrize("plant, kind", [(0.0, "aa"), (0.05, "plant")])
def test_an_aa_or_planted_gate_keeps_its_calibration_per_cpu(tmp_path, plant, kind):
    timed = _timed(1.05 if plant else 1.0, 4)
    cpu_of = {p: (HERE if k % 2 else OTHER)["id"] for k, p in enumerate(timed)}
    rows = [_row(str(k), 1.05) for k in (0, 1)] if plant else [_row("1", 1.03)]
    cpus = {HERE["id"]: HERE, OTHER["id"]: OTHER}
    pair = ("v2.21.0", "v2.21.0")
    paths = calibration.keep(tmp_path, pair, plant, rows, timed, cpu_of, cpus, 900.0)
    assert len(paths) == 2
    here = keptfiles.calibration.read(
        keptfiles.calibration.path(tmp_path, HERE["id"], pair, plant)
    )
    assert (here["kind"], here["points"], here["worse"], here["seconds"]) == (kind, 2, 1, 900.0)
    assert calibration.missing(tmp_path, HERE["id"]) == ["plant" if kind == "aa" else "aa"]
    assert calibration.keep(tmp_path, PAIR, 0.0, rows, timed, cpu_of, cpus, 1.0) == []  # no A/A


def test_a_gate_on_a_cpu_with_no_calibration_says_so_in_one_line(tmp_path):
    said = calibration.notice(tmp_path, cpu.identity())
    assert said and f"cpu {HERE['id']}" in said and "\n" not in said
    assert "an A/A gate" in said and "a planted 5%" in said
    pair = ("v2.21.0", "v2.21.0")
    timed = _timed(1.0, 2)
    cpu_of = dict.fromkeys(timed, HERE["id"])
    for plant in (0.0, 0.05):
        calibration.keep(tmp_path, pair, plant, [], timed, cpu_of, {HERE["id"]: HERE}, 1.0)
    assert calibration.notice(tmp_path, cpu.identity()) is None


@pytest.mark.parametrize(
    "edit, where",
    [
        (lambda d: d.update(kind="plant", plant=0.0), "plant"),
        (lambda d: d.update(date="2026-02-30"), "date"),
        (lambda d: d.update(points=-1), "points"),
        (lambda d: d["cpu"].update(cpus=64), "cpu.id"),
    ],
)
def test_a_calibration_not_of_its_form_is_refused(tmp_path, edit, where):
    body = {"format": keptfiles.calibration.FORMAT, "kind": "aa", "plant": 0.0, "pair": list(PAIR),
            "date": "2026-12-02", "cpu": HERE, "points": 3, "worse": 0, "better": 0,
            "memory_rows": 0, "seconds": 1.0}  # fmt: skip
    keptfiles.calibration.check(json.loads(json.dumps(body)))
    data = json.loads(json.dumps(body))
    edit(data)
    with pytest.raises(keptfiles.Invalid) as refused:
        keptfiles.calibration.check(data)
    assert refused.value.field.startswith(where)
    kept_file = tmp_path / "calibration" / "another-cpu" / "x.json"
    kept_file.parent.mkdir(parents=True)
    kept_file.write_text(json.dumps(body))
    with pytest.raises(keptfiles.KeptFileError, match="not its folder"):
        keptfiles.calibration.read(kept_file)
