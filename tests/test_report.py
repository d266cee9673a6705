"""The release report on hand-built results: claim polarity, verdict reasons, the gate, and
both renderers reading the one Report. No asv run, no TensorFlow."""

import dataclasses
import math

import pytest

from tfbench.gate.readings import Side
from tfbench.publish import changes, claims, html, markdown, report
from tfbench.publish.families import Family
from tfbench.publish.results import Data, MachineResults

TAGS = ["v1.0.0", "v1.1.0", "v1.2.0"]
PARAMS = [["'leaky'", "'fixed'"], ["'CPU'", "'GPU'"]]
NAMES = ["variant", "device"]
BENCH = {
    "fam.Pattern.time_step": "seconds",
    "fam.PatternCosts.track_peak_increase": "bytes",
    "fam.PatternCosts.track_growth_per_iteration": "bytes/iteration",
    "fam.PatternCosts.track_leak": "leak (1) or flat (0)",
}
LEAKY, FIXED = ("'leaky'", "'CPU'"), ("'fixed'", "'CPU'")


def data(leak=(1, 1, 1), times=(0.010, 0.010, 0.010), reasons=None) -> Data:
    """Two CPU points over three releases; `leaky`'s leak flag and time per release."""
    m = MachineResults("box", list(TAGS))
    for i, tag in enumerate(TAGS):
        for combo, flag, t in ((LEAKY, leak[i], times[i]), (FIXED, 0, 0.005)):
            m.values[("fam.Pattern.time_step", combo, tag)] = (t, None, None)
            m.values[("fam.PatternCosts.track_peak_increase", combo, tag)] = (8 << 20, None, None)
            m.values[("fam.PatternCosts.track_growth_per_iteration", combo, tag)] = (
                (64 << 10) if flag else 0.0,
                None,
                None,
            )
            m.values[("fam.PatternCosts.track_leak", combo, tag)] = (
                math.nan if flag is None else flag,
                None,
                None,
            )
    m.reasons.update(reasons or {})
    for (key, combo, tag), (value, _, _) in m.values.items():  # one reading per release
        side = m.sides.setdefault(tag, Side())
        side.count = 1
        side.add((key, combo), value)
    benchmarks = {
        k: {"params": PARAMS, "param_names": NAMES, "unit": u, "version": "1"}
        for k, u in BENCH.items()
    }
    return Data(benchmarks, {"box": m}, [])


LEAK_CLAIM = claims.Claim("leaky leaks", "fam.Pattern", "leak", {"variant": "'leaky'"})
FLAT_CLAIM = claims.Claim("leaky is flat", "fam.Pattern", "flat", {"variant": "'leaky'"})
SLOWER = claims.Claim(
    "leaky is slower", "fam.Pattern", "time", {"variant": "'leaky'"}, {"variant": "'fixed'"}
)
FAMILY = Family("fam.Pattern", NAMES, PARAMS)


def holds(claim, d):
    return [o.holds for o in claims.judge(claim, FAMILY, d.machines["box"]).outcomes]


def test_leak_and_flat_claims_have_opposite_polarity():
    d = data(leak=(1, 0, 1))
    assert holds(LEAK_CLAIM, d) == [True, False, True]
    assert holds(FLAT_CLAIM, d) == [False, True, False]


def test_garbage_claims_hold_from_a_kib_a_call_and_apart_from_the_leak():
    """A step that keeps nothing and leaves 176 KiB of garbage a call: garbage TRUE, leak
    FALSE; 512 B a call is below the claim's KiB."""
    d = data(leak=(0, 0, 0))
    m = d.machines["box"]
    key = "fam.PatternCosts.track_garbage_per_iteration"
    d.benchmarks[key] = {"params": PARAMS, "param_names": NAMES, "unit": "bytes/iteration"}
    for tag, garbage in zip(TAGS, (176 * 1024, 512, 0)):
        m.values[(key, LEAKY, tag)] = (garbage, None, None)
    garbage = claims.Claim("leaves garbage", "fam.Pattern", "garbage", {"variant": "'leaky'"})
    none = claims.Claim("leaves none", "fam.Pattern", "no-garbage", {"variant": "'leaky'"})
    assert holds(garbage, d) == [True, False, False]
    assert holds(none, d) == [False, True, True]
    assert holds(LEAK_CLAIM, d) == [False, False, False]


def test_a_comparison_holds_where_a_is_above_b_with_its_ratio():
    d = data(times=(0.010, 0.004, 0.005))
    verdict = claims.judge(SLOWER, FAMILY, d.machines["box"])
    assert [o.holds for o in verdict.outcomes] == [True, False, False]
    assert verdict.outcomes[0].ratio == pytest.approx(2.0)


def test_a_release_without_a_value_says_why():
    d = data(
        leak=(1, None, None),
        reasons={("PatternCosts", "leaky|CPU", "v1.1.0"): "error: InaccessibleTensorError: boom"},
    )
    verdict = claims.judge(LEAK_CLAIM, FAMILY, d.machines["box"])
    assert [o.holds for o in verdict.outcomes] == [True, None, None]
    assert verdict.reasons == ["error: InaccessibleTensorError: boom"]
    word, parts = report.verdict_parts(verdict)
    assert word == "no data"  # the newest release's probe kept nothing
    assert "no value on v1.1.0-v1.2.0" in parts
    assert "why on v1.1.0: InaccessibleTensorError: boom" in parts
    error = "error: InaccessibleTensorError: boom"
    kept = {("PatternCosts", "leaky|CPU", tag): error for tag in ("v1.1.0", "v1.2.0")}
    verdict = claims.judge(
        LEAK_CLAIM, FAMILY, data(leak=(1, None, None), reasons=kept).machines["box"]
    )
    assert report.verdict_parts(verdict)[0] == "does not run"  # the newest's probe kept why


def test_what_changed_follows_the_gate_rules():
    d = data(leak=(1, 1, 0), times=(0.010, 0.010, 0.0115))
    found = changes.history_changes(d, d.machines["box"])
    assert [c.pair for c in found] == [("v1.0.0", "v1.1.0"), ("v1.1.0", "v1.2.0")]
    assert found[0].items == []
    rows = [(i.row.metric, i.row.direction, i.row.params["variant"]) for i in found[1].items]
    # growth 64 KiB/it -> 0 and the verdict flip are found; one time reading a side is not
    # enough for the time rule (x1.15 of a single sample says nothing)
    assert rows == [
        ("track_growth_per_iteration", "better", "'leaky'"),
        ("track_leak", "better", "'leaky'"),
    ]


def test_what_changed_lists_a_new_failure():
    d = data()
    m = d.machines["box"]
    m.sides["v1.2.0"] = Side(count=1)
    for (key, combo, tag), (value, _, _) in m.values.items():
        if tag == "v1.2.0":
            m.sides[tag].add((key, combo), None if combo == FIXED else value, "error: boom")
    items = changes.history_changes(d, m)[1].items
    assert {(i.row.direction, i.row.new) for i in items} == {("worse", None)}
    assert {i.row.params["variant"] for i in items} == {"'fixed'"}


def test_both_renderers_show_the_same_report():
    d = data(leak=(1, 1, 0), times=(0.010, 0.010, 0.0115))
    built = report.build(d)
    md, page = markdown.render(built), html.render(built)
    machine = built.machines[0]
    assert [r.label for r in machine.families[0].rows] == [
        "variant=leaky, device=CPU",
        "variant=fixed, device=CPU",
    ]
    for text in (md, page.replace("&#x27;", "'")):
        assert "Machine box" in text
        assert "10 ms · 8 MiB · 64 KiB/it · LEAK" in text
        assert "11.5 ms (x1.15) · 8 MiB (x1.00) · 0 B/it (x0.00) · flat" in text
        assert "Leaks that went away: fam.Pattern('leaky', 'CPU')" in text
        assert "tfbench gate v1.1.0 v1.2.0 --machine box --bench" in text
    assert '<td class="leak">' in page and '<td class="flat">' in page


def test_cells_and_figures_come_from_data_not_text():
    cell = report.FamilyCell("v1", (report.Value(None, "seconds", None),) * 3, None)
    assert cell.empty and cell.text() == "no value"
    assert report.Value(2048, "bytes/iteration", 2.0).text() == "2 KiB/it (x2.00)"


def test_the_summary_says_what_the_newest_release_changed():
    d = data(leak=(1, 1, 0), times=(0.010, 0.010, 0.0115))
    (machine,) = report.build(d).machines
    lines = report.summary_lines(machine.summary)
    assert lines[0] == (  # its growth and its verdict, read in 3 processes a side, not 5
        "v1.2.0 against v1.1.0 (by the gate's rules on the history): 0 point(s) worse and "
        "0 better beyond the floors, confirmed; 1 more read apart too few times (shown, not "
        "counted)."
    )
    assert "Leaks that went away: fam.Pattern('leaky', 'CPU')." in lines[1]
    assert lines[-1] == "Nothing measured here got worse."
    assert 3 <= len(lines) <= 8


def test_the_summary_names_a_leak_that_appeared_and_a_claim_that_changed():
    d = data(leak=(1, 0, 1))
    m = report.build(d).machines[0]
    (line,) = [x for x in report.summary_lines(m.summary) if x.startswith("Leaks that")]
    assert line.startswith("Leaks that appeared: fam.Pattern('leaky', 'CPU')")
    assert report.summary_lines(m.summary)[-1].startswith("Worse: ")


def test_a_candidate_is_compared_with_the_newest_release_before_it():
    d = data()
    m = d.machines["box"]
    for old, new in (("v1.2.0", "v1.3.0rc0"),):
        for (key, combo, tag), value in list(m.values.items()):
            if tag == old:
                m.values[(key, combo, new)] = value
        m.sides[new] = m.sides[old]
        m.releases.append(new)
    (machine,) = report.build(d).machines
    assert machine.summary.newest.pair == ("v1.2.0", "v1.3.0rc0")
    first = report.summary_lines(machine.summary)[0]
    assert first.startswith("v1.3.0rc0 (candidate) against v1.2.0")
    assert "v1.3.0rc0 (candidate)" in markdown.render(report.build(d))


def test_the_report_as_json_carries_the_summary_and_findings():
    import json

    found = report.as_json(report.build(data(leak=(1, 1, 0))))
    json.dumps(found)  # plain data
    (machine,) = found["machines"]
    assert machine["summary"]["leaks_gone"] == ["fam.PatternCosts.track_leak('leaky', 'CPU')"]
    assert machine["summary"]["newest"]["pair"] == ["v1.1.0", "v1.2.0"]
    assert [c["pair"] for c in machine["changes"]] == [["v1.0.0", "v1.1.0"], ["v1.1.0", "v1.2.0"]]


def test_why_a_leaking_point_leaks_comes_from_the_kept_explanations(tmp_path, monkeypatch):
    from tfbench.publish import explained, families

    monkeypatch.setattr(families, "scenario_of", lambda family, combo: ("fam.leaky", {}))
    d = data(leak=(1, 1, 1))
    d.results_dir = tmp_path
    point = "fam.Pattern('leaky', 'CPU')"
    (m,) = report.build(d).machines
    assert m.why == {point: None}
    assert "not explained on this machine yet: `tfbench explain --leaking --machine box`" in (
        markdown.render(report.build(d))
    )
    line = "LEAK, RSS 64 KiB/call: Python objects hold it"
    explained.write(tmp_path, "box", "v1.2.0", {point: {"status": "ok", "conclusion": line}})
    (m,) = report.build(d).machines
    assert m.why == {point: line}
    assert f"- {point}: {line}" in markdown.render(report.build(d)).replace("\\\\", "")
    (tmp_path / "explain" / "box" / "v1.2.0.json").write_text("[1]")
    built = report.build(d)
    assert built.machines[0].why == {point: None} and "v1.2.0.json" in built.problems[0]


def test_points_of_a_family_that_changed_alike_are_one_finding():
    from tfbench.gate.rules import Change

    def item(variant: str, size: int, metric: str, direction: str = "worse") -> changes.Item:
        params = {"variant": repr(variant), "size": repr(size)}
        name = f"fam.PatternCosts.{metric}({params['variant']}, {size})"
        row = Change(name, f"fam.PatternCosts.{metric}", params, metric, direction, 0, 1, "", "")
        return changes.Item(row, "index.html", "")

    items = [
        item("v", size, m)
        for size in (1, 2, 3)
        for m in ("track_leak", "track_growth_per_iteration")
    ]
    items.append(item("v", 4, "track_leak"))  # the verdict alone: not alike
    items.append(item("w", 1, "track_leak", "better"))
    items += [item("x", 1, "track_leak", "better"), item("x", 2, "track_leak", "better")]
    found = changes.Changes(("v1", "v2"), items, "test", "box").points
    assert [(p.name, p.alike) for p in found] == [
        ("fam.Pattern('v', 1)", ("'v', 2", "'v', 3")),
        ("fam.Pattern('v', 4)", ()),
        ("fam.Pattern('w', 1)", ("'x', 1", "'x', 2")),
    ]
    assert found[0].command.endswith(r"'^fam\.Pattern(Costs)?\.\w+\(.v., '")
    assert found[1].command.endswith(r"'^fam\.Pattern(Costs)?\.\w+\(.v., 4\)$'")
    assert found[2].command.endswith(r"'^fam\.Pattern(Costs)?\.\w+\('")


def test_the_newest_release_on_another_python_is_compared_point_by_point():
    """Results of Python 3.12 are kept apart from the history's; a point that leaks on one
    Python only, or whose retained bytes move beyond the floor, is a finding with its
    command; a point alike on both is none."""
    from tfbench.publish import families, python_axis

    d = data()
    m = d.machines["box"]
    newest = TAGS[-1]
    for combo, leak, kept in ((LEAKY, 1, 64 << 10), (FIXED, 1, 0.0)):
        m.pythons.setdefault("3.12", {})[("fam.PatternCosts.track_leak", combo, newest)] = leak
        m.values[("fam.PatternCosts.track_retained_per_iteration", combo, newest)] = (
            kept,
            None,
            None,
        )
        m.pythons["3.12"][("fam.PatternCosts.track_retained_per_iteration", combo, newest)] = (
            kept if combo == LEAKY else 48 << 10
        )
    found = python_axis.across_pythons(m, [FAMILY])
    assert found.release == newest and found.pythons == ["3.12"]
    (finding,) = found.findings  # leaky: leaks on both, keeps the same; fixed: differs
    assert finding.point == "fam.Pattern(variant=fixed, device=CPU)"
    assert "leaks on 3.12 only" in finding.text and "retained 0 B/iteration" in finding.text
    assert finding.command is None  # no catalog scenario is named "fixed"
    assert m.value("fam.PatternCosts.track_leak", FIXED, newest) == 0  # the history's own
    predict = families.Family(
        "predict.Predict", ["variant", "device"], [["'model_predict'"], ["'CPU'"]]
    )
    command = python_axis._command(predict, ("'model_predict'", "'CPU'"), newest, "3.12")
    assert command.startswith("tfbench measure predict.model_predict --param=device=CPU")
    assert "--python 3.12" in command and f"--releases {newest[1:]}" in command


def test_the_reports_to_file_upstream_are_listed_and_a_bad_one_named(tmp_path):
    import json

    from test_nightly import kept_bisection

    from tfbench.publish import filed

    folder = filed.folder(tmp_path, "box")
    good = folder / "loop-python-matmul-retained" / "bisect.json"
    good.parent.mkdir(parents=True)
    good.write_text(json.dumps(kept_bisection()))
    (folder / "other" / "bisect.json").parent.mkdir()
    (folder / "other" / "bisect.json").write_text('{"format": 9}')
    d = data()
    d.results_dir = tmp_path
    (item,) = filed.read(d)
    assert (
        item.target == "loop.python_matmul size=256" and "compare/abc0001...abc0003" in item.line
    )
    assert any("format: 9; this tfbench reads format 1" in p for p in d.problems)
    built = report.build(d)
    assert "compare/abc0001...abc0003" in markdown.render(built)
    assert "issue.md" in html.render(built)


def test_the_reference_leads_and_a_pairs_time_on_each_cpu_is_said_once(monkeypatch):
    """#78: machines came in name order, and the block "Time on each CPU that read this
    pair" was printed word for word under each machine holding the pair."""
    from tfbench.publish import by_cpu, coverage

    d = data()
    d.machines[coverage.REFERENCE] = dataclasses.replace(
        d.machines["box"], machine=coverage.REFERENCE
    )
    read = by_cpu.ByCpu(["AMD (family 25)", "Intel (family 6)"], [])
    monkeypatch.setattr(report, "_by_cpu", lambda data, machine: read)
    built = report.build(d)
    assert [m.name for m in built.machines] == [coverage.REFERENCE, "box"]
    assert [m.by_cpu for m in built.machines] == [read, None]
    assert markdown.render(built).count(report.by_cpu_head(read)) == 1
