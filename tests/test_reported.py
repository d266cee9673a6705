"""TensorFlow's reported leaks (tfbench/scenarios/reported.py) and their answers
(tfbench/answers.py)."""

from __future__ import annotations

import re

import pytest

from tfbench import answers, floors, scenarios, targets
from tfbench.measure import record
from tfbench.scenarios import reported
from tfbench.units import KiB

STEPS = sorted(reported.BY_STEP)


def test_fifteen_reports_each_a_step_of_the_catalog():
    numbers = [r.number for r in reported.REPORTS]
    assert len(set(numbers)) == len(numbers) >= 15
    assert set(STEPS) == {s for s in scenarios.CATALOG if s.startswith("reported.")}
    for report in reported.REPORTS:
        assert report.state in ("open", "closed"), report.number
        assert report.title and report.claim and report.adapted, report.number
        assert report.release == "" or re.fullmatch(r"\d+\.\d+(\.\d+)?", report.release)
        assert report.url.endswith(f"/issues/{report.number}")
        for step in report.steps:
            # a step's id and the catalog's description name its report
            assert step.startswith(f"reported.tf{report.number}_"), step
            assert scenarios.get(step).description.startswith(f"tensorflow#{report.number}:")


def _record(**figures) -> record.Record:
    found = record.blank("reported.tf1_x", {}, "cpu", "2.22.0")
    found.update(status="ok", iterations=40)
    found.update(figures)
    return found


def test_each_answer_from_the_record_that_gives_it():
    kept = _record(leak=True, retained_bytes_per_iteration=4 * KiB, garbage_bytes_per_iteration=0)
    assert answers.answer(kept) == answers.Answer(answers.REPRODUCES, 4 * KiB, 0)
    cycles = _record(
        leak=False,
        retained_bytes_per_iteration=3,
        garbage_bytes_per_iteration=64 * KiB,
        garbage_interval=[63 * KiB, 65 * KiB],
    )
    assert answers.answer(cycles).text == answers.GARBAGE
    # garbage under its floor, or an interval that reaches zero, is no garbage to answer
    small = dict(cycles, garbage_bytes_per_iteration=floors.GARBAGE_FLOOR - 1)
    assert answers.answer(small).text == answers.FLAT
    unsure = dict(cycles, garbage_interval=[0, 128 * KiB])
    assert answers.answer(unsure).text == answers.FLAT
    failed = dict(record.blank("reported.tf1_x", {}, "cpu", "2.22.0"), status="error")
    failed["error"] = "AttributeError: module 'tensorflow' has no attribute 'distributions'"
    assert answers.answer(failed) == answers.Answer(answers.FAILS, None, None, failed["error"])
    assert answers.answer(_record(leak=None)).text == answers.NO_VERDICT


# The reports whose TF1 code builds its graph once, and those that add to it every call:
# counted exactly, on any release the step runs on.
BUILT_ONCE = ("reported.tf10822_py_func_string", "reported.tf46735_ragged")
GROWING = ("reported.tf14185_encode_jpeg", "reported.tf25473_normal_sample")


@pytest.mark.slow
def test_each_reported_step_runs_and_its_graph_counts_read_exactly():
    """Every report's step measured a few iterations in a child of its own, the children
    forked from one fresh process (as the probe does): each has an answer, and the graphs
    of the TF1 reproducers grow by their operations a call exactly where the reporter's
    loop builds them. A reproducer that raises on the installed release is its answer
    there (the error kept), never a failure of the suite."""
    found = targets.measure_spawned(
        [targets.ScenarioTarget(s) for s in STEPS],
        targets.Limits(iterations=6, warmup=2, timeout_s=300),
    )
    assert [r["scenario"] for r in found] == STEPS
    by_step = dict(zip(STEPS, found, strict=True))
    for step, r in by_step.items():
        given = answers.answer(r)
        assert given.text in answers.ANSWERS, (step, given)
        if given.text == answers.FAILS:
            assert r["status"] == "error" and r["error"], (step, r)
    for step in BUILT_ONCE:
        assert by_step[step]["counters"]["graph_ops_per_call"] == 0, step
    for step in GROWING:
        assert by_step[step]["counters"]["graph_ops_per_call"] > 0, step
