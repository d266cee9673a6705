"""The gate's rules (tfbench.gate.rules) on known readings, and the gate end to end on a
test-only suite with planted changes (tests/planted), through asv results as a user's run."""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import planted_gate

from tfbench import cli, probes
from tfbench.gate import readings, rules, session
from tfbench.gate.readings import Side
from tfbench.pairs import verdict
from tfbench.publish import changes
from tfbench.units import KiB, MiB

BENCH = {
    name: {"param_names": ["variant"], "params": [["'x'"]], "unit": unit}
    for name, unit in [
        ("m.C.time_step", "seconds"),
        ("m.C.peakmem_step", "bytes"),
        ("m.CCosts.track_peak_increase", "bytes"),
        ("m.CCosts.track_growth_per_iteration", "bytes/iteration"),
        ("m.CCosts.track_leak", "leak (1) or flat (0)"),
        ("m.CCosts.track_graph_ops", "operations"),
    ]
}


def side(benchmark: str, *runs: list[float | None]) -> Side:
    s = Side()
    for run in runs:
        s.count += 1
        for v in run:
            s.add((benchmark, ("'x'",)), v, "error: boom")
    return s


def found(benchmark: str, a: list[list], b: list[list]) -> list[rules.Change]:
    return rules.compare(BENCH, side(benchmark, *a), side(benchmark, *b))


def test_same_readings_are_no_change():
    for bench, runs in [
        ("m.C.time_step", [[1.0 + i / 100 for i in range(10)]] * 2),
        ("m.CCosts.track_peak_increase", [[10 * MiB, 10.5 * MiB]] * 2),
        ("m.CCosts.track_leak", [[1.0, 0.0]] * 2),
    ]:
        assert found(bench, runs, runs) == []


def test_time_is_no_row_of_the_readings_rules():
    """One process's samples cannot tell a release from a slow process: time rows are the
    time reader's (tfbench.pairs.timing; tests/test_timing.py), never these rules'."""
    a = [[1.0 + i / 1000 for i in range(10)]] * 5
    b = [[1.3 + i / 1000 for i in range(10)]] * 5
    assert found("m.C.time_step", a, b) == []


def test_a_time_row_moves_the_old_side_by_the_pairs_not_by_the_new_sides_median():
    """The sides' own medians met the machine at other moments and can part the other way
    (here the old side read its last pairs in a slow spell): the row follows the pairs."""

    def reply(ms: float) -> dict:
        return {"blocks": [[0, int(ms * 1e6 * 10), 10]] * 5}

    old = [1.0] * 3 + [2.0] * 5  # median 2.0 ms
    new = [1.05] * 6 + [2.1] * 2  # median 1.05 ms, yet each pair 5% slower
    point = ("m.C.time_step", ("'x'",))
    timed = verdict.Timed(point, 0.02, logs=[math.log(1.05) + i / 1e4 for i in range(8)])
    timed.readings = [(reply(a), reply(b)) for a, b in zip(old, new)]
    (row,) = rules.time_rows(BENCH, {point: timed}, {point: "cpu-x"})
    assert row.direction == "worse" and row.old == pytest.approx(2e-3)
    assert row.new == pytest.approx(row.old * timed.verdict.ratio) and row.new > row.old
    assert row.evidence["new"] == row.new and row.evidence["cpu"] == "cpu-x"


def test_memory_needs_ranges_apart_by_the_floor_not_a_ratio():
    near_zero = [[0.0, 100.0]], [[900.0, 1000.0]]  # x10, but far below a MiB
    assert found("m.CCosts.track_peak_increase", *near_zero) == []
    assert found("m.CCosts.track_peak_increase", [[10 * MiB]], [[10.9 * MiB]]) == []
    (row,) = found("m.CCosts.track_peak_increase", [[10 * MiB, 11 * MiB]], [[27 * MiB]])
    assert row.direction == "worse" and row.new == 27 * MiB
    overlapping = [[10 * MiB, 30 * MiB]], [[27 * MiB, 29 * MiB]]
    assert found("m.CCosts.track_peak_increase", *overlapping) == []


def test_rss_that_moves_where_the_heap_does_not_is_rss_only_and_not_worse():
    """An RSS peak apart by 4 MiB while the heap's peak of the same point holds: the heap's
    layout moved, not what the step holds. With the heap's peak apart too, it is worse."""
    bench = {
        **BENCH,
        "m.CCosts.track_heap_peak_increase": {
            "param_names": ["variant"],
            "params": [["'x'"]],
            "unit": "bytes",
        },
    }
    point = ("'x'",)

    def sides(heap_after: float) -> tuple[Side, Side]:
        a, b = Side(), Side()
        for s, rss, heap in ((a, 10 * MiB, 8 * MiB), (b, 14 * MiB, heap_after)):
            s.count += 1
            s.add(("m.CCosts.track_peak_increase", point), rss)
            s.add(("m.CCosts.track_heap_peak_increase", point), heap)
        return a, b

    (row,) = rules.compare(bench, *sides(8 * MiB))
    assert row.metric == "track_peak_increase" and row.direction == rules.RSS_ONLY
    assert "did not move" in row.told and row.evidence["heap"] == "track_heap_peak_increase"
    rows = {r.metric: r.direction for r in rules.compare(bench, *sides(12 * MiB))}
    assert rows == {"track_peak_increase": "worse", "track_heap_peak_increase": "worse"}


def test_a_leaking_patterns_peak_takes_the_growth_floor():
    """Seen in an A/A gate: a leaking thread pattern's peak read 61.4 and 58.0 MiB."""

    def leaking(peaks: list[float], leak: float) -> Side:
        s = side("m.CCosts.track_peak_increase", peaks)
        for _ in peaks:
            s.add(("m.CCosts.track_leak", ("'x'",)), leak)
        return s

    a, b = [61.4 * MiB, 61.4 * MiB], [58.0 * MiB, 58.1 * MiB]
    assert rules.compare(BENCH, leaking(a, 1.0), leaking(b, 1.0)) == []
    (row,) = rules.compare(BENCH, leaking(a, 0.0), leaking(b, 0.0))  # flat: 5% floor
    assert row.direction == "better"
    (row,) = rules.compare(BENCH, leaking(a, 1.0), leaking([40 * MiB], 1.0))
    assert "leaking pattern" in row.told


def test_growth_floor_keeps_noise_flat_and_finds_a_planted_leak():
    assert found("m.CCosts.track_growth_per_iteration", [[0.0, 50.0]], [[3 * KiB]]) == []
    (row,) = found("m.CCosts.track_growth_per_iteration", [[0.0, 900.0]], [[64 * KiB]] * 2)
    assert row.direction == "worse"
    (row,) = found(
        "m.CCosts.track_growth_per_iteration", [[230 * KiB, 236 * KiB]], [[40 * KiB, 44 * KiB]]
    )
    assert row.direction == "better"


def test_leak_counts_only_a_unanimous_flip():
    (row,) = found("m.CCosts.track_leak", [[0.0, 0.0, 0.0]], [[1.0, 1.0, 1.0]])
    assert row.direction == "worse" and "flat -> leak" in row.told
    assert found("m.CCosts.track_leak", [[0.0, 0.0, 0.0]], [[1.0, 0.0, 1.0]]) == []


def test_counts_change_when_their_ranges_part():
    assert found("m.CCosts.track_graph_ops", [[5.0, 5.0]], [[5.0, 6.0]]) == []
    assert found("m.CCosts.track_graph_ops", [[5.0, 5.0]], [[7.0, 7.0]])[0].direction == "worse"


def test_a_pattern_that_stops_running_counts():
    (row,) = found("m.C.peakmem_step", [[500 * MiB], [501 * MiB]], [[None], [None]])
    assert row.direction == "worse" and row.new is None and "boom" in row.told
    assert found("m.C.peakmem_step", [[None], [None]], [[500 * MiB]] * 2)[0].direction == "better"
    # measured in one run of a side only: flaky, not a change
    assert found("m.C.peakmem_step", [[500 * MiB], [None]], [[None], [None]]) == []


def test_rows_as_json_carry_what_the_issue_names():
    (row,) = found("m.CCosts.track_leak", [[0.0]], [[1.0]])
    assert set(row.as_json()) >= {"benchmark", "params", "metric", "direction", "old", "new"}
    assert row.as_json()["params"] == {"variant": "x"}


def test_a_point_missing_from_the_first_runs_keeps_its_runs_apart():
    """A gate's time points are in its time runs only, its memory points in its memory runs."""
    s = Side()
    for run in ([], [1.0, 1.1], [], [2.0, 2.1, 2.2]):
        s.count += 1
        for v in run:
            s.add(("m.C.time_step", ("'x'",)), v)
    assert s.runs[("m.C.time_step", ("'x'",))] == [[1.0, 1.1], [2.0, 2.1, 2.2]]


def test_a_run_selects_its_kind_among_what_bench_selects():
    import re

    names = [
        "loops.MatrixPower.time_step('numpy', 64)",
        "loops.MatrixPower.peakmem_step('numpy', 64)",
        "loops.MatrixPowerCosts.track_growth_per_iteration('numpy', 64)",
        "graphs.Eager.time_step('loop')",
    ]

    def picked(kind: str, bench: str | None) -> list[int]:
        return [i for i, n in enumerate(names) if re.search(session.selection(kind, bench), n)]

    assert picked("time", None) == [0, 3] and picked("memory", None) == [1, 2]
    assert picked("time", r"^loops\.") == [0] and picked("memory", "MatrixPower") == [1, 2]
    assert picked("memory", r"numpy', 64\)$") == [1, 2]  # a grid point, anchored at its end
    assert picked("time", r"^graphs\.Eager\.time_step\('loop'\)$") == [3]
    assert picked("memory", "Eager") == [] and picked("time", "Costs") == []


def test_bad_input_exits_2(capsys):
    assert cli.main(["gate", "v0.0.0", "v2.21.0"]) == cli.EXIT_BAD_INPUT
    assert "no release tag v0.0.0" in capsys.readouterr().err
    assert cli.main(["gate", "v2.21.0", "v2.21.0", "--bench", "("]) == cli.EXIT_BAD_INPUT
    assert cli.main(["gate", "v2.21.0", "v2.21.0", "--plant", "2"]) == cli.EXIT_BAD_INPUT
    assert cli.main(["gate", "v2.21.0", "v2.21.0", "--machine", "a b"]) == cli.EXIT_BAD_INPUT
    assert cli.main(["gate", "v2.21.0", "v2.21.0", "--config", "nowhere.json"]) == 2
    assert cli.main(["gate", "v2.21.0", "v2.21.0", "--interpreter", "/no/python"]) == 2
    for option, value in (
        ("--pairs", "4"), ("--pairs", "5000"), ("--time-budget", "0"), ("--reading", "nan")
    ):  # fmt: skip
        assert cli.main(["gate", "v2.21.0", "v2.21.0", option, value]) == cli.EXIT_BAD_INPUT
        assert option in capsys.readouterr().err


def test_the_time_reader_reads_as_many_pairs_as_asked():
    """--pairs, --time-budget and --reading reach the reader the gate runs (and the kept
    run's summary, which names its pairs); without them the reader's defaults."""
    from tfbench.cli import gate
    from tfbench.pairs import timing

    def reader(pairs=None, budget=None, reading=None):
        asked = argparse.Namespace(pairs=pairs, time_budget=budget, reading=reading)
        return gate.time_reader(asked)

    assert reader() == timing.Reader()
    asked = reader(60, 3600.0, 0.2)
    assert (asked.first, asked.most, asked.budget_s, asked.seconds) == (8, 60, 3600.0, 0.2)


@pytest.mark.slow
def test_gate_finds_every_planted_change(planted_project, monkeypatch, capsys):
    code, rows = planted_gate(planted_project, "v1.0.0", "v1.0.1", monkeypatch, capsys)
    worse = {(r["params"]["variant"], r["metric"]) for r in rows if r["direction"] == "worse"}
    assert code == 1
    assert {
        ("leak", "track_growth_per_iteration"),
        ("leak", "track_leak"),
        ("peak", "track_peak_increase"),
    } <= worse
    # +3% of what a step keeps is a row of its own: retained bytes, and nothing else
    assert [m for v, m in worse if v == "kept"] == ["track_retained_per_iteration"], rows
    (kept,) = [r for r in rows if r["params"]["variant"] == "kept"]
    assert kept["old"] == pytest.approx(64 * KiB, rel=0.01)
    assert kept["new"] == pytest.approx(66 * KiB, rel=0.01)
    # read at its size although the probe forks from asv's process, whose heap holds
    # resident free chunks (the baseline comes after malloc_trim)
    (growth,) = [
        r
        for r in rows
        if r["metric"] == "track_growth_per_iteration" and r["params"]["variant"] == "leak"
    ]
    assert growth["new"] == pytest.approx(64 * KiB, rel=0.05) and growth["old"] < 4 * KiB
    (peak,) = [
        r
        for r in rows
        if r["metric"] == "track_peak_increase" and r["params"]["variant"] == "peak"
    ]
    assert abs(peak["new"] - 16 * MiB) <= MiB
    assert not [r for r in rows if r["direction"] == "better"], rows
    assert [m for v, m in worse if v == "slow"] == ["time_step"], rows
    # (the leak's and the peak's steps do more work too: their time may rise, never fall)
    (slow,) = [r for r in rows if r["params"]["variant"] == "slow"]
    assert slow["evidence"]["rule"] == "time"  # the time reader's verdict
    assert slow["evidence"]["ratio"] == pytest.approx(1.25, rel=0.05)
    # one environment on both sides: its oneDNN asked once, named for each
    kept = json.loads((planted_project / "results/gate/planted/v1.0.0-v1.0.1.json").read_text())
    (sides,) = kept["onednn"].values()  # this CPU's
    assert set(sides) == {"old", "new"} and sides["old"] == sides["new"] and sides["old"]


@pytest.mark.slow
def test_gate_same_commit_twice_is_quiet(planted_project, monkeypatch, capsys):
    """kept: 66 KiB against 66 (64 against 64: tests/validation/test_full_gate.py)."""
    assert planted_gate(planted_project, "v1.0.1", "v1.0.1", monkeypatch, capsys) == (0, [])


@pytest.mark.slow
def test_gate_bench_that_selects_nothing_is_bad_input(planted_project, monkeypatch, capsys):
    monkeypatch.setenv("TFBENCH_PLANTED_REPO", str(planted_project / "repo"))
    code = cli.main(
        ["gate", "v1.0.0", "v1.0.1", "--config", str(planted_project / "asv.conf.json"),
         "--machine", "planted", "--interpreter", sys.executable, "--bench", "no_such_benchmark"]
    )  # fmt: skip
    assert code == cli.EXIT_BAD_INPUT
    assert "selects no benchmark" in capsys.readouterr().err


@pytest.mark.slow
def test_a_report_command_reruns_exactly_its_row(planted_project, monkeypatch, capsys):
    """The command the report prints for a row, run as printed (on the planted project),
    re-measures that grid point only, and finds the row again."""
    row = rules.Change(
        "planted.PlantedCosts.track_peak_increase('peak')",
        "planted.PlantedCosts.track_peak_increase",
        {"variant": "'peak'"},
        "track_peak_increase",
        "worse",
        None,
        None,
        "bytes",
        "",
    )
    printed = changes.gate_command(row, "planted", ("v1.0.0", "v1.0.1"))
    argv = shlex.split(printed)
    assert argv[0] == "tfbench"
    monkeypatch.setenv("TFBENCH_PLANTED_REPO", str(planted_project / "repo"))
    code = cli.main(
        [*argv[1:], "--config", str(planted_project / "asv.conf.json"),
         "--interpreter", sys.executable, "--json"]
    )  # fmt: skip
    rows = json.loads(capsys.readouterr().out)
    assert code == 1
    assert [(r["benchmark"], r["params"]) for r in rows] == [
        ("planted.PlantedCosts.track_peak_increase", {"variant": "peak"})
    ]


def test_each_environments_onednn_is_asked_once_and_named_for_its_side(monkeypatch):
    from tfbench.gate import asvruns

    asked = []

    def isa(python: str) -> str:
        asked.append(python)
        return f"isa of {python}"

    monkeypatch.setattr(asvruns.cpu, "onednn_isa", isa)
    monkeypatch.setattr(asvruns, "release_python", lambda tag, *a: Path(f"/env/{tag}/python"))
    backend = object.__new__(asvruns.AsvBackend)
    backend.request = argparse.Namespace(
        python=None, flavour="cpu", env_root=None, python_version=None
    )
    backend.say, backend.pythons = print, {}
    for tags, isas in [
        (("v1", "v2"), {"old": "isa of /env/v1/python", "new": "isa of /env/v2/python"}),
        (("v1", "v1"), {"old": "isa of /env/v1/python", "new": "isa of /env/v1/python"}),
    ]:
        asked.clear()
        backend.tags = dict(zip(("old", "new"), tags))
        assert len(backend.environments()) == 2
        assert backend.onednn == isas
        assert sorted(asked) == sorted({f"/env/{t}/python" for t in tags})  # once each


def test_a_probe_measures_the_points_its_asv_run_asks_for(monkeypatch):
    """asv calls a Costs class's setup_cache for its whole grid: the probe reads the gate's
    --bench (TFBENCH_SELECTION) and selects as asv does, by name(param reprs)."""
    names = ["predict.PredictionCosts.track_leak", "predict.PredictionCosts.track_traces"]
    monkeypatch.delenv(probes.SELECTION, raising=False)
    assert probes.selected(names)(("model_call", "GPU"))  # a run of the whole suite
    monkeypatch.setenv(probes.SELECTION, session.selection("memory", r"track_leak\('model_p"))
    asked = probes.selected(names)
    assert asked(("model_predict", "CPU")) and asked(("model_predict", "GPU"))
    assert not asked(("model_call", "CPU"))
    monkeypatch.setenv(probes.SELECTION, session.selection("memory", "Threads"))
    assert not probes.selected(names)(("model_predict", "CPU"))


def test_memory_points_read_apart_are_measured_again_and_pooled():
    """The gate re-measures the points of memory rows (not time's) and pools the readings:
    a bimodal peak read low on one side and high on the other once is no row after."""
    point = ("m.CCosts.track_peak_increase", ("'x'",))
    a, b = side(point[0], [30 * MiB]), side(point[0], [36 * MiB])
    a.add(("m.C.time_step", ("'x'",)), 1.0)
    b.add(("m.C.time_step", ("'x'",)), 2.0)
    assert rules.memory_screened(BENCH, a, b) == [point]
    repeats = [{"status": "ok", "peak_increase_bytes": v * MiB} for v in (36, 30, 31, 36)]
    for s, again in ((a, repeats), (b, repeats[::-1])):
        readings.add_again(s, {("m.CCosts", ("'x'",)): again})
        assert len(s.values(point)) == 5
    assert rules.memory_screened(BENCH, a, b) == [] and rules.compare(BENCH, a, b) == []
    # figures of points the side's runs did not read are not added
    assert ("m.CCosts.track_leak", ("'x'",)) not in a.runs and not a.missing


def test_a_killed_gate_leaves_no_run_behind():
    code = (
        "import signal, time; from tfbench.measure.spawn import Spawned\n"
        "p = Spawned(['sleep', '60'], parent_signal=signal.SIGTERM)  # as the gate's runs\n"
        "print(p.pid, flush=True); time.sleep(60)"
    )
    gate = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    run = int(gate.stdout.readline())
    gate.kill()
    gate.wait()
    for _ in range(50):
        try:
            state = Path(f"/proc/{run}/stat").read_text().split(")")[1].split()[0]
        except FileNotFoundError:
            return
        if state == "Z":  # ended, not reaped by this container's init
            return
        time.sleep(0.1)
    pytest.fail(f"the gate's run {run} outlived it")


def test_evidence_is_data_told_in_a_sentence_with_units():
    (row,) = found("m.CCosts.track_peak_increase", [[10 * MiB, 11 * MiB]], [[27 * MiB]])
    assert row.evidence == {
        "rule": "apart",
        "figure": "peak increase",
        "old": [10 * MiB, 11 * MiB],
        "new": [27 * MiB, 27 * MiB],
        "floor": pytest.approx(1.35 * MiB),
        "readings": [2, 1],
    }
    assert row.told == (
        "peak increase 10-11 MiB -> 27 MiB, apart by more than 1.35 MiB (2 readings old, 1 new)"
    )
    (row,) = found("m.CCosts.track_graph_ops", [[5.0, 5.0]], [[7.0, 7.0]])
    assert row.told.startswith("graph operations 5 operations -> 7 operations")
    timed = {"rule": "time", "ratio": 1.057, "low": 1.041, "high": 1.072, "pairs": 8}
    timed |= {"margin": 0.02, "level": 0.95, "old": 0.006, "new": 0.00634}
    assert rules.told(timed, "seconds") == (
        "time 6 ms -> 6.34 ms (x1.057, 95% interval x1.041-x1.072, beyond the margin of 2%; "
        "8 pairs of processes, read in turn)"
    )


def test_a_machine_is_recorded_for_asv_once_and_kept_as_it_is(tmp_path, monkeypatch, caplog):
    """asv asks for this machine's record before it runs: the gate and `run` make one with
    asv's defaults where there is none (quietly: a fresh machine is not an error), and keep
    one already there, but for its `cpu`: this CPU's identity, read now."""
    from tfbench import cpu
    from tfbench.gate import asvruns

    monkeypatch.setenv("HOME", str(tmp_path))
    asvruns.ensure_machine("lab-1", tmp_path / "results")
    saved = json.loads((tmp_path / ".asv-machine.json").read_text())
    assert saved["lab-1"]["machine"] == "lab-1" and saved["lab-1"]["num_cpu"]
    assert cpu.id_in(saved["lab-1"]["cpu"]) == cpu.identity()["id"]
    assert "No information stored" not in caplog.text
    saved["lab-1"]["cpu"] = "as its owner wrote it"
    saved["lab-1"]["os"] = "as its owner wrote it"
    (tmp_path / ".asv-machine.json").write_text(json.dumps(saved))
    asvruns.ensure_machine("lab-1", tmp_path / "results")
    asvruns.ensure_machine("lab-2", tmp_path / "results")
    again = json.loads((tmp_path / ".asv-machine.json").read_text())
    assert again["lab-1"]["os"] == "as its owner wrote it" and "lab-2" in again
    assert again["lab-1"]["cpu"] == cpu.asv_cpu()


@pytest.mark.parametrize(
    "kept_cpu", ["AMD EPYC (2 cores)", "AMD EPYC (family 26 ...) cpu amd-26.2.1-2c-000000", None]
)
def test_a_machine_read_on_another_cpu_is_refused_with_its_own_name(
    tmp_path, monkeypatch, kept_cpu
):
    """One machine name is one CPU: a machine whose kept record names another CPU, or none
    (kept before identities), or cannot be read, is refused before anything runs, with the
    machine name to measure into instead; one that names this CPU is taken."""
    from tfbench import cpu
    from tfbench.gate import asvruns

    monkeypatch.setenv("HOME", str(tmp_path))
    folder = tmp_path / "results" / "lab"
    folder.mkdir(parents=True)
    record = {"machine": "lab", "version": 1, **({"cpu": kept_cpu} if kept_cpu else {})}
    (folder / "machine.json").write_text(json.dumps(record))
    here = cpu.identity()["id"]
    with pytest.raises(asvruns.OtherCpu, match=f"--machine lab-{re.escape(here)}"):
        asvruns.ensure_machine("lab", tmp_path / "results")
    assert not (tmp_path / ".asv-machine.json").exists()
    (folder / "machine.json").write_text("{")
    with pytest.raises(asvruns.OtherCpu, match="cannot be told"):
        asvruns.ensure_machine("lab", tmp_path / "results")
    (folder / "machine.json").write_text(json.dumps(dict(record, cpu=cpu.asv_cpu())))
    asvruns.ensure_machine("lab", tmp_path / "results")
    assert (tmp_path / ".asv-machine.json").exists()


def test_the_gates_job_summary_is_a_table_of_its_rows_or_says_none():
    """`tfbench gate --markdown`'s summary for a CI job (its rows built once as blocks):
    a heading, the time reader's line, then a table of the rows, each name as code and each
    untrusted text escaped; with no row, one sentence."""
    from tfbench.cli import output

    row = rules.Change(
        "loops.MatrixPower.time_step('numpy')",
        "loops.MatrixPower.time_step",
        {"variant": "'numpy'"},
        "time_step",
        "worse",
        0.010,
        0.012,
        "seconds",
        {"rule": "apart", "figure": "<b>x</b>", "old": [0.01, 0.01], "new": [0.012, 0.012]}
        | {"floor": 0.0005, "readings": [3, 3]},
    )
    said = output.gate_markdown([row], "v1", "v2").splitlines()
    assert said[0] == "### `tfbench gate v1 v2`: 1 change(s)"
    head = next(k for k, line in enumerate(said) if "| point | metric |" in line)
    assert said[head + 1] == "|---|---|---|---|---|---|"
    assert said[head + 2].startswith("| worse | `loops.MatrixPower.time_step('numpy')` |")
    assert "<b>" not in said[head + 2] and said[head + 2].count(" | ") == 5
    empty = output.gate_markdown([], "v1", "v2")
    assert empty.splitlines()[-1] == "No change beyond the floors."
    # the terminal's lines are the same blocks: the row and its evidence on one line, the
    # columns aligned, control characters and bidi marks as their code points
    hostile = dataclasses.replace(row, evidence=dict(row.evidence, figure="\x1b[31m\u202ex"))
    shown = output.gate([row, hostile], "v1", "v2").splitlines()
    assert shown[0] == "tfbench gate v1 v2: 2 change(s)"
    assert shown[2].startswith("  worse  loops.MatrixPower.time_step('numpy')  time_step")
    assert shown[2].index("time_step  ") == shown[1].index("metric")
    assert "\\u001b[31m\\u202ex" in shown[3] and "\x1b" not in "".join(shown)
    assert output.gate([], "v1", "v2").splitlines()[1] == "  No change beyond the floors."
