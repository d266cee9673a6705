"""The articles' examples as written (tfbench/scenarios/articles.py) and the report's
findings about them (tfbench/publish/findings.py)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tfbench import scenarios, targets
from tfbench.publish import articles, findings
from tfbench.publish.articles import Example
from tfbench.publish.families import Family
from tfbench.publish.findings import Literal, finding
from tfbench.publish.results import MachineResults
from tfbench.units import KiB

EXAMPLES = sorted(sid for sid in scenarios.CATALOG if sid.startswith("article."))
# On the newest tracked release: these two raise, as the articles print them
FAILS = {
    "article.functions.ex1": "TypeError",
    "article.predict.ex3": "AttributeError",
}


def test_fifteen_examples_each_named_in_the_report():
    assert len(EXAMPLES) == 15
    named = {f"article.{e.variant}" for a in articles.ARTICLES for e in a.examples}
    assert named == set(EXAMPLES)


@pytest.mark.slow
def test_each_example_runs_within_the_default_budget():
    """Every example measured in a child of its own, the children forked from one fresh
    process (TensorFlow imported once, as the probe does), each with the default budget.
    One test, not one an example: xdist's two workers would each measure them all. Each
    verdict is the window's: no confirming rounds after it (tests/test_calibration reads them)."""
    examples = [targets.ScenarioTarget(s) for s in EXAMPLES]
    found = targets.measure_spawned(examples, targets.Limits(timeout_s=300, confirm=False))
    assert [r["scenario"] for r in found] == EXAMPLES
    wrong = {}
    for r in found:
        scenario = r["scenario"]
        if scenario in FAILS:
            if r["status"] != "error" or FAILS[scenario] not in r["error"]:
                wrong[scenario] = r  # its known error, recorded, never hidden
        elif r["status"] != "ok" or r["leak"] is None:
            wrong[scenario] = r.get("error") or r
    assert not wrong, wrong


# The literal snippets (loops shortened to one pass), run in a fresh interpreter, against
# the scenario's step: the adaptations keep what the example computes.
LITERAL = {
    "article.functions.ex2": """
import tensorflow as tf
external_state = {'counter': 0}
@tf.function
def increment_state(x):
    external_state['counter'] += 1
    return x + external_state['counter']
x = tf.constant(1.0)
for _ in range(3):
    y = increment_state(x)
print(y)
""",
    "article.functions.ex3": """
import tensorflow as tf
@tf.function
def process_data(x, n):
  acc = tf.constant(0.0)
  for _ in tf.range(n):
    acc = acc + x
  return acc
x = tf.constant(1.0)
for i in range(3):
    y = process_data(x, 100)
print(y)
""",
    "article.graphs.ex2": """
import tensorflow as tf
tf.compat.v1.enable_eager_execution()
for i in range(1):
    x = tf.constant(list(range(10000)))
    y = tf.square(x)
    result = y.numpy()
print(repr(result.sum()))
""",
}
SCENARIO_SIDE = """
import sys
from tfbench import scenarios
step = scenarios.get(sys.argv[1]).step()
for _ in range(3):
    y = step()
print(repr(y.sum()) if hasattr(y, "sum") else y)
"""


def _output(code: str, folder, *args: str) -> str:
    script = folder / f"snippet{len(list(folder.iterdir()))}.py"  # autograph reads the source
    script.write_text(code)
    run = subprocess.run(
        [sys.executable, str(script), *args], capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stderr[-2000:]
    return run.stdout.strip().splitlines()[-1]


@pytest.mark.slow
@pytest.mark.parametrize("scenario", sorted(LITERAL))
def test_adapted_example_computes_what_the_literal_does(scenario, tmp_path):
    assert _output(SCENARIO_SIDE, tmp_path, scenario) == _output(LITERAL[scenario], tmp_path)


LEAKY = Example("x.ex1", "leaks: the session", "leak", "the session", (
    articles._v("graphs.Sessions", "with_block", "session"),
    articles._v("graphs.GraphConstruction", "session_per_iteration", "ops"),
))  # fmt: skip


def _lit(**figures) -> Literal:
    base = dict(time=0.01, peak=1e6, growth=0.0, leak=False, ops_per_call=0.0)
    return Literal("v2.21.0", **{**base, **figures})


def test_findings_follow_the_figures():
    flat = finding(LEAKY, _lit(), None, {})
    assert flat.startswith("does not grow") and "contrary to the article" in flat
    slow_graph = finding(LEAKY, _lit(ops_per_call=2.0, growth=40 * KiB), None, {})
    assert slow_graph.startswith("no leak verdict, but its graph grows (+2 ops/call)")
    leak = finding(
        LEAKY,
        _lit(leak=True, growth=80 * KiB, ops_per_call=3.0),
        None,
        {"Sessions(with_block)": False, "GraphConstruction(session_per_iteration)": True},
    )
    assert leak.startswith("leaks, from graph growth (+3 ops/call)")
    assert "as the article says" in leak and "not from the session" in leak
    assert "GraphConstruction(session_per_iteration) leaks too" in leak
    # the same leak without graph growth, and with the claimed cause leaking itself
    other = finding(LEAKY, _lit(leak=True, growth=80 * KiB), None, {"Sessions(with_block)": True})
    assert "graph growth" not in other and "not from" not in other
    failed = finding(LEAKY, Literal("v2.21.0", error="InaccessibleTensorError"), None, {})
    assert failed.startswith("does not run: InaccessibleTensorError")
    # garbage is said apart from the leak: a flat step that leaves it, and one below a KiB
    garbage = finding(LEAKY, _lit(garbage=176 * KiB), None, {})
    assert garbage.startswith("does not grow: contrary to the article; it leaves 176 KiB/call")
    assert "garbage" not in finding(LEAKY, _lit(garbage=512.0), None, {})
    assert _lit(garbage=176 * KiB).text().endswith("flat · garbage 176 KiB/call · +0 ops/call")


def test_comparative_findings_follow_the_figures():
    faster = Example("loops.ex2", "faster", "lower-time", than="loops.ex1")
    assert "as the article says" in finding(faster, _lit(time=0.5), _lit(time=1.0), {})
    assert "contrary" in finding(faster, _lit(time=1.0), _lit(time=1.0), {})
    hungrier = Example("loops.ex1", "more memory", "higher-peak", than="loops.ex2")
    assert "as the article says" in finding(hungrier, _lit(peak=9e6), _lit(peak=1e6), {})
    assert "contrary" in finding(hungrier, _lit(peak=1e6), _lit(peak=1e6), {})


def _machine(with_block_leaks: int) -> tuple[dict, MachineResults]:
    """sessions.ex1 leaking 800 KiB and 3 ops per call on one release; the isolating
    Sessions(with_block) point flat or leaking."""
    m = MachineResults("box", ["v2.21.0"])
    ex = ("'sessions.ex1'",)
    figures = {
        "track_leak": 1,
        "track_growth_per_iteration": 800 * KiB,
        "track_peak_increase": 40 * 2**20,
        "track_graph_ops_per_call": 3.0,
    }
    for method, value in figures.items():
        m.values[(f"articles.ArticlesCosts.{method}", ex, "v2.21.0")] = (value, None, None)
    m.values[("articles.Articles.time_step", ex, "v2.21.0")] = (0.1, None, None)
    point = ("'with_block'", "'off'", "'CPU'")
    m.values[("graphs.SessionsCosts.track_leak", point, "v2.21.0")] = (
        with_block_leaks,
        None,
        None,
    )
    fams = {
        "articles.Articles": Family(
            "articles.Articles", ["variant"], [[f"'{v}'" for v in VARIANTS]]
        ),
        "graphs.Sessions": Family(
            "graphs.Sessions",
            ["variant", "allow_growth", "device"],
            [["'with_block'"], ["'off'", "'on'"], ["'CPU'", "'GPU'"]],
        ),
    }
    return fams, m


VARIANTS = [sid.split(".", 1)[1] for sid in EXAMPLES]


def test_the_report_section_derives_each_finding_from_the_results():
    def ex1(with_block_leaks):
        fams, m = _machine(with_block_leaks)
        (section,) = [s for s in findings.sections(fams, m) if s.article.number == "001"]
        return section.examples[0]

    flat = ex1(0)
    assert flat.literal[0].text().startswith("100 ms · peak +40 MiB · LEAK 800 KiB/call")
    ((text, tags),) = flat.findings
    assert tags == ["v2.21.0"]
    assert "from graph growth (+3 ops/call)" in text
    assert "not from the with-block Session left open: Sessions(with_block) is flat" in text
    ((leaking, _),) = ex1(1).findings
    assert "not from" not in leaking and "Sessions(with_block) leaks too" in leaking
