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


def test_every_report_a_step_of_the_catalog():
    numbers = [r.number for r in reported.REPORTS]
    assert len(set(numbers)) == len(numbers) >= 15
    assert set(STEPS) == {s for s in scenarios.CATALOG if s.startswith("reported.")}
    for report in reported.REPORTS:
        assert report.state in ("open", "closed"), report.number
        assert report.title and report.claim and report.adapted, report.number
        assert report.release == "" or re.fullmatch(r"\d+\.\d+(\.\d+)?(-\w+)?", report.release)
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
    # where the heap was not read, the verdict rests on RSS alone, and the answer says so
    rss = _record(leak=True, leak_basis="rss", growth_bytes_per_iteration=96 * KiB)
    given = answers.answer(rss)
    assert (given.text, given.kept, given.basis) == (answers.REPRODUCES, 96 * KiB, answers.RSS)
    assert given.said() == "reproduces: 96 KiB kept a step (RSS alone: the heap was not read)"


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


# ---- the report's section and the site's page (tfbench.publish.reported) ----------------

TAGS = ["v2.15.1", "v2.16.2", "v2.17.1"]
CONSTANT, NORMAL = "tf68196_constant", "tf25473_normal_sample"
HOSTILE = "AttributeError: <script>alert(1)</script> | no 'distributions'"


def _history():
    """#68196's step keeping 820 KiB a step on 2.16.2 alone; #25473's raising everywhere;
    the rest not read."""
    from tfbench import probes
    from tfbench.gate.readings import Side
    from tfbench.publish.results import Data, MachineResults

    m = MachineResults("box", list(TAGS))
    costs = "reported.ReportedCosts"
    for tag in TAGS:
        combo = (repr(CONSTANT),)
        kept = 820 * KiB if tag == "v2.16.2" else 100.0
        for method, value in (
            ("track_leak", int(tag == "v2.16.2")),
            ("track_retained_per_iteration", kept),
            ("track_garbage_per_iteration", 0.0),
        ):
            m.values[(f"{costs}.{method}", combo, tag)] = (value, None, None)
        m.values[("reported.Reported.time_step", combo, tag)] = (0.005, None, None)
        point = probes.GridPoint(costs, (repr(NORMAL),))
        m.reasons[("ReportedCosts", point.key, tag)] = HOSTILE
    newest = (repr(CONSTANT),)  # the newest release on two more Pythons: one keeps
    for python, leak in (("3.12", 1), ("3.13", 0)):
        m.pythons[python] = {
            (f"{costs}.track_leak", newest, TAGS[-1]): leak,
            (f"{costs}.track_retained_per_iteration", newest, TAGS[-1]): 400 * KiB * leak,
            (f"{costs}.track_garbage_per_iteration", newest, TAGS[-1]): 0.0,
        }
    for (key, combo, tag), (value, _, _) in m.values.items():  # one reading a release
        side = m.sides.setdefault(tag, Side())
        side.count = 1
        side.add((key, combo), value)
    variants = [[repr(s.split(".", 1)[1]) for s in STEPS]]
    benchmarks = {
        name: {"params": variants, "param_names": ["variant"], "unit": "", "version": "1"}
        for name in (
            "reported.Reported.time_step",
            f"{costs}.track_leak",
            f"{costs}.track_retained_per_iteration",
            f"{costs}.track_garbage_per_iteration",
        )
    }
    return Data(benchmarks, {"box": m}, [])


def test_each_reports_answers_and_where_they_changed_come_from_the_history():
    from tfbench.publish import report

    (machine,) = report.build(_history()).machines
    by_step = {s.variant: s for r in machine.reported for s in r.steps}
    constant = by_step[CONSTANT]
    assert [a.text for a in constant.answers] == [
        answers.FLAT,
        answers.REPRODUCES,
        answers.FLAT,
    ]
    assert [(c.after, c.was, c.now) for c in constant.changes(TAGS)] == [
        ("v2.16.2", answers.FLAT, answers.REPRODUCES),
        ("v2.17.1", answers.REPRODUCES, answers.FLAT),
    ]
    assert {p: a.text for p, a in constant.pythons.items()} == {
        "3.12": answers.REPRODUCES,
        "3.13": answers.FLAT,
    }
    normal = by_step[NORMAL]
    assert {a.text for a in normal.answers} == {answers.FAILS} and not normal.changes(TAGS)
    assert all(a is None for a in by_step["tf41973_fit_new_model"].answers)  # not read


def test_a_nightly_bisection_of_a_reported_step_is_told_where_its_answer_changed():
    import dataclasses

    from tfbench.publish import report, sections
    from tfbench.publish.blocks import markdown
    from tfbench.publish.filed import Filed

    (machine,) = report.build(_history()).machines
    line = "first bad nightly 2.17.0.dev20240301 (last good 2.17.0.dev20240229): <url>"
    filed = Filed("reported-tf68196", f"reported.{CONSTANT}", "retained", line, True, "m")
    md = "\n".join(markdown(sections.reported(dataclasses.replace(machine, filed=[filed]))))
    assert "over the nightlies (retained): first bad nightly 2.17.0.dev20240301" in md
    assert "&lt;url&gt;" in md  # a kept line is text


def test_the_section_and_the_page_escape_what_the_results_say(tmp_path):
    from tfbench.publish import html, markdown, report, site

    built = report.build(_history())
    assert built.reported
    md = markdown.render(built)
    assert "Reported leaks: TensorFlow's issues, answered" in md
    assert "[tensorflow\\#68196](https://github.com/tensorflow/tensorflow/issues/68196)" in md
    assert "v2.16.2 (after v2.15.1): does not reproduce → reproduces" in md
    assert "Not read on this machine yet: \\#62551 tf62551_eager" in md
    assert "the same on Python 3.13; Python 3.12: reproduces: 400 KiB kept a step" in md
    assert "<script>" not in md and "\\| no" in md  # a reason is text, a pipe no column
    page = html.render_reported(built)
    assert 'href="https://github.com/tensorflow/tensorflow/issues/25473"' in page
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert 'reported.html">reported leaks' in html.render(built)
    site.write_report(_history(), tmp_path)  # the site writes the page beside the report
    assert (tmp_path / html.REPORTED_PAGE).read_text() == page


def test_the_upstream_comment_says_what_reproduces_where_with_the_step_run():
    from tfbench.publish import families, report
    from tfbench.publish import reported as published

    data = _history()
    by_name = {f.name: f for f in families.families(data.benchmarks)}
    found = published.answered(by_name, data.machines["box"])
    (constant,) = [a for a in found if a.report.number == 68196]
    text = published.comment(constant, TAGS, "box <b>")
    assert "| v2.16.2 | reproduces: 820 KiB kept a step |" in text
    assert "- `tf68196_constant`: v2.17.1 (after v2.16.2): reproduces → does not reproduce" in text
    assert "y = tf.constant(5.0)" in text  # the step's own code
    assert "| v2.17.1, Python 3.12 | reproduces: 400 KiB kept a step |" in text
    assert "`box <b>`" in text  # a machine's name as code, never markup
    (zeros,) = [a for a in found if a.report.number == 62551]
    code = published.comment(zeros, TAGS, "box")  # the helpers a step names come first
    assert code.index("def _zeros():") < code.index("def zeros_eager()")
    assert "CALLS = 1000" in code
    (normal,) = [a for a in found if a.report.number == 25473]
    assert "&lt;script&gt;" in published.comment(normal, TAGS, "box")
    # an answer (its error) on every release: no change over three; none read: no verdict
    assert "No answer changed over the 3 releases read." in published.comment(normal, TAGS, "box")
    assert "Read on 0 of 3 releases: a change needs two." in code
    assert report.build(data).machines[0].reported == found


def test_upstream_refuses_a_report_the_suite_does_not_hold():
    from conftest import run_cli

    run = run_cli("upstream", "tensorflow#1")
    assert run.returncode == 2 and "tensorflow#1 is no report the suite holds" in run.stderr
