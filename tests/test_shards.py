"""The gate in shards (tfbench.gate.shards): every runner plans alike, the shares are
disjoint, cover the suite and are balanced; a share selects exactly its points; shards
joined conclude as the whole gate does, each time point's verdict from the CPU that read
it; shards that do not make one gate are refused, naming why."""

from __future__ import annotations

import json
import math
import re
import tarfile

import pytest

from tfbench import cpu, keptfiles
from tfbench.cli import main
from tfbench.gate import kept, shards
from tfbench.gate.readings import Side
from tfbench.gate.session import Measured
from tfbench.keptfiles import gate_run, gate_shard
from tfbench.pairs import timing, verdict
from tfbench.paths import ROOT
from tfbench.units import MiB

VALUES = ["'a'", "'b'", "'c'", "'d'", "'e'", "'f'"]
SUITE = {
    name: {"param_names": ["variant", "device"], "params": [VALUES, ["'CPU'", "'GPU'"]],
           "unit": unit}
    for name, unit in [
        ("m.C.time_step", "seconds"),
        ("m.C.peakmem_step", "bytes"),
        ("m.CCosts.track_peak_increase", "bytes"),
        ("m.CCosts.track_leak", "leak (1) or flat (0)"),
    ]
}  # fmt: skip
HERE = json.loads(json.dumps(cpu.identity()))
PAIR = ("v2.21.0", "v2.22.0rc0")
OTHER = dict(cpu.parse("vendor_id\t: AuthenticAMD\ncpu family\t: 26\nmodel\t: 2\n", {}, 2))


def test_every_runner_plans_alike_disjoint_shares_that_cover_the_suite_balanced():
    units = shards.units(SUITE)
    assert len([u for u in units if u[0] == shards.TIME]) == 6  # no GPU time point
    assert len([u for u in units if u[0] == shards.MEMORY]) == 12  # a family's every point
    costs = {u: shards.Cost(1.0 + k % 5) for k, u in enumerate(units)}
    plan = shards.plan(costs, 4)
    assert plan == shards.plan(dict(reversed(list(costs.items()))), 4)  # order does not matter
    held = [u for share in plan for u in share]
    assert sorted(held) == units and len(set(held)) == len(held)
    loads = [sum(costs[u].seconds for u in share) for share in plan]
    assert max(loads) - min(loads) <= max(c.seconds for c in costs.values())


def test_a_share_that_reads_long_pays_for_its_passes():
    """A share's pass over its points renews their servers: the share holding a point read
    to 50 pairs pays 50 passes, and so takes fewer other points than their seconds alone
    would give it (ignoring the passes, it would take 9 of the 20)."""
    units = [u for u in shards.units(SUITE)]
    long, short = units[0], units[1:21]
    costs = {long: shards.Cost(10.0, 50)} | {u: shards.Cost(5.0, 8) for u in short}
    plan = shards.plan(costs, 2)
    mine, other = (plan[0], plan[1]) if long in plan[0] else (plan[1], plan[0])
    assert 1 <= len(mine) - 1 <= 4 < len(other)

    def span(share):
        return sum(costs[u].seconds for u in share) + shards.PASS_S * max(
            costs[u].passes for u in share
        )

    assert abs(span(mine) - span(other)) <= 5.0 + shards.PASS_S * 8


def test_a_share_selects_exactly_its_points_as_asv_selects():
    """asv's --bench searches `name(values)`: a memory unit selects its family's every
    memory benchmark at its values (the step class's and its Costs'), none of time."""
    units = shards.units(SUITE)
    share = [u for u in units if u[2][0] in ("'a'", "'e'")]
    selected = re.compile(shards.pattern(share))
    names = {
        f"{b}({v}, {d})" for b in SUITE for v in VALUES for d in ("'CPU'", "'GPU'")
    }  # fmt: skip
    chosen = {n for n in names if selected.search(n)}
    assert chosen == {
        *(f"m.C.time_step({v}, 'CPU')" for v in ("'a'", "'e'")),
        *(f"{b}({v}, {d})" for b in SUITE if ".time_" not in b for v in ("'a'", "'e'")
          for d in ("'CPU'", "'GPU'")),
    }  # fmt: skip


def test_costs_come_from_the_kept_pairs_and_probe_calls():
    units = shards.units(SUITE)
    point = "m.C.time_step('b', 'CPU')"
    run = {"time": {"points": [{"point": point, "pairs": 30}]}}
    probed = {"CCosts": {"c|CPU": [{"status": "ok", "iterations": 90, "warmup_run": 10,
                                     "seconds_per_iteration": 0.2}]}}  # fmt: skip
    costs = shards.costs(units, [run], [probed])
    fast = 2 * 0.5 + shards.PAIR_S  # two 0.5 s readings
    assert costs[(shards.TIME, "m.C.time_step", ("'b'", "'CPU'"))] == shards.Cost(30 * fast, 30)
    assert costs[(shards.TIME, "m.C.time_step", ("'a'", "'CPU'"))] == shards.Cost(fast, 1)
    slow = 2 * 5 * 0.2 + shards.PAIR_S  # a 0.2 s step: 5 blocks of one call a reading
    assert costs[(shards.TIME, "m.C.time_step", ("'c'", "'CPU'"))] == shards.Cost(slow, 1)
    memory = costs[(shards.MEMORY, "m.C", ("'c'", "'CPU'"))]
    assert memory.seconds == pytest.approx(shards.POINT_S + 20) and memory.passes == 0
    assert costs[(shards.MEMORY, "m.C", ("'a'", "'CPU'"))] == shards.Cost(shards.POINT_S)
    unread = shards.costs(units, [], [])
    assert unread[(shards.TIME, "m.C.time_step", ("'a'", "'CPU'"))] == shards.Cost(8 * fast, 8)


def _measured(share: list, apart: bool) -> Measured:
    """Readings of a share: memory a little apart at 'a' (worse by 20 MiB where `apart`),
    failed on the new side at 'c' (a reading missing, none read), time 5% slower at 'b'."""
    before, after, timed = Side(), Side(), {}
    for kind, name, combo in share:
        if kind == shards.MEMORY:
            for b in SUITE:
                if b.rpartition(".")[0].removesuffix("Costs") == name and ".time_" not in b:
                    grown = 20 * MiB if (apart and combo[0] == "'a'" and "peak" in b) else 0
                    for s, extra in ((before, 0), (after, grown)):
                        for v in (100 * MiB, 100.5 * MiB):
                            if s is after and combo[0] == "'c'":
                                s.add((b, combo), None, "failed: MemoryError")
                                continue
                            s.add((b, combo), v + extra if "leak" not in b else 0.0)
        else:
            ratio = 1.05 if combo[0] == "'b'" else 1.0
            logs = [math.log(ratio) + (k - 4) / 2000 for k in range(9)]
            timed[(name, combo)] = verdict.Timed((name, combo), 0.02, logs=logs)
            timed[(name, combo)].kept_old = 1e-3
    return Measured(SUITE, before, after, 60.0, [], timed)


def _keep(results, share, shard, machine, identity, plant=0.0, reader=None):
    read_on = {"cpus": {identity["id"]: identity}, "onednn": {identity["id"]: {"old": None}}}
    return shards.write(
        results, machine, PAIR, shard, tuple(share), _measured(share, True), read_on, plant,
        reader or timing.Reader(),
    )  # fmt: skip


def test_shards_joined_conclude_as_the_whole_gate_each_time_point_on_its_cpu(tmp_path):
    units = shards.units(SUITE)
    plan = shards.plan({u: shards.Cost(1.0) for u in units}, 2)
    for k, (share, (machine, identity)) in enumerate(
        zip(plan, [("runner-a", HERE), ("runner-b", OTHER)]), 1
    ):
        where = _keep(tmp_path, share, (k, 2), machine, identity)
        assert keptfiles.gate_shard.read(where)["shard"] == [k, 2]
    joined = shards.merge(tmp_path, ("v2.21.0", "v2.22.0rc0"), 0.0, SUITE)
    whole = _measured(units, True)
    cpu_of = {p: (HERE if any(u[:2] == ("time", p[0]) and u[2] == p[1] for u in plan[0])
                  else OTHER)["id"] for p in whole.timed}  # fmt: skip
    rows, differing = kept.conclude(SUITE, whole.old, whole.new, whole.timed, cpu_of)
    assert [r.as_json() for r in joined.rows] == [r.as_json() for r in rows]
    assert joined.differing == differing
    assert {r.name for r in rows if r.metric == "time_step"} == {"m.C.time_step('b', 'CPU')"}
    assert any(r.evidence["rule"] == "status" and "'c'" in r.name for r in joined.rows)
    (time_row,) = [r for r in joined.rows if r.metric == "time_step"]
    assert time_row.evidence["cpu"] == cpu_of[(time_row.benchmark, ("'b'", "'CPU'"))]
    assert set(joined.read_on["cpus"]) == {HERE["id"], OTHER["id"]}
    points = {p["point"]: p["cpu"] for p in joined.summary["points"]}
    assert points == {f"m.C.time_step({', '.join(c)})": i for (_, c), i in cpu_of.items()}
    found = kept.write(tmp_path, "merged", ("v2.21.0", "v2.22.0rc0"), joined.summary,
                       joined.rows, joined.differing, joined.read_on)  # fmt: skip
    assert keptfiles.gate_run.read(found)["cpus"].keys() == {HERE["id"], OTHER["id"]}


def test_a_shard_keeps_its_own_points_and_a_merge_refuses_one_that_holds_others(tmp_path):
    """asv's results of a shard's runs hold the suite's every point, the unread ones too:
    a shard keeps only its share's readings, and one holding another's would overwrite it."""
    plan = shards.plan({u: shards.Cost(1.0) for u in shards.units(SUITE)}, 2)
    other = next(u for u in plan[1] if u[0] == shards.MEMORY)[2]  # the other share's
    unread = Side()
    unread.add(("m.CCosts.track_leak", other), None, "not selected")
    measured = _measured(plan[0], True)
    measured.old.missing |= unread.missing
    read_on = {"cpus": {HERE["id"]: HERE}, "onednn": {}}
    where = shards.write(
        tmp_path, "a", PAIR, (1, 2), tuple(plan[0]), measured, read_on, 0.0, timing.Reader()
    )
    kept_points = {p for p, *_ in keptfiles.gate_shard.read(where)["sides"]["old"]}
    assert kept_points and all(shards.unit_of(p) in plan[0] for p in kept_points)
    data = json.loads(where.read_text())
    data["sides"]["old"].append(["m.CCosts.track_leak", list(other), [], ["x"]])
    where.write_text(json.dumps(data))
    _keep(tmp_path, plan[1], (2, 2), "b", HERE)
    with pytest.raises(shards.ShardError, match="holds readings of m.CCosts.track_leak"):
        shards.merge(tmp_path, ("v2.21.0", "v2.22.0rc0"), 0.0, SUITE)


@pytest.mark.parametrize("wrong", ["missing", "twice", "reader", "count"])
def test_shards_that_do_not_make_one_gate_are_refused_naming_why(tmp_path, wrong):
    plan = shards.plan({u: shards.Cost(1.0) for u in shards.units(SUITE)}, 3)
    _keep(tmp_path, plan[0], (1, 3), "runner-a", HERE)
    _keep(tmp_path, plan[1], (2, 3), "runner-b", HERE)
    third = {
        "missing": lambda: None,
        "twice": lambda: _keep(tmp_path, plan[1] + plan[2], (3, 3), "runner-c", HERE),
        "reader": lambda: _keep(
            tmp_path, plan[2], (3, 3), "runner-c", HERE, reader=timing.Reader(most=20)
        ),  # fmt: skip
        "count": lambda: _keep(tmp_path, plan[2], (3, 4), "runner-c", HERE),
    }[wrong]
    third()
    said = {
        "missing": "not 1 to N of one N",
        "twice": "read twice: ",
        "reader": "readers set another way",
        "count": "not 1 to N of one N",
    }[wrong]
    with pytest.raises(shards.ShardError, match=said):
        shards.merge(tmp_path, ("v2.21.0", "v2.22.0rc0"), 0.0, SUITE)


def test_a_planted_gate_in_shards_is_joined_apart_from_the_pair_and_not_kept(tmp_path):
    plan = shards.plan({u: shards.Cost(1.0) for u in shards.units(SUITE)}, 1)
    _keep(tmp_path, plan[0], (1, 1), "runner-a", HERE, plant=0.05)
    with pytest.raises(shards.ShardError, match="no shard of v2.21.0"):
        shards.merge(tmp_path, ("v2.21.0", "v2.22.0rc0"), 0.0, SUITE)
    assert shards.merge(tmp_path, ("v2.21.0", "v2.22.0rc0"), 0.05, SUITE).plant == 0.05


@pytest.mark.parametrize(
    "edit, field",
    [
        (lambda d: d.update(shard=[3, 2]), "shard"),
        (lambda d: d.update(cpus={}), "cpus"),
        (lambda d: d["times"][0][2].update(old=-1.0), "times[0][2].old"),
        (lambda d: d["units"][0].__setitem__(0, "disk"), "units[0][0]"),
        (lambda d: d["sides"]["old"][0][2].append(["x"]), "sides.old[0][2]"),
        (lambda d: d["reader"].pop("margin"), "reader.margin"),
    ],
)
def test_a_kept_shard_not_of_its_form_is_refused_naming_its_field(tmp_path, edit, field):
    plan = shards.plan({u: shards.Cost(1.0) for u in shards.units(SUITE)}, 1)
    data = json.loads(_keep(tmp_path, plan[0], (1, 1), "runner-a", HERE).read_text())
    edit(data)
    with pytest.raises(keptfiles.Invalid) as refused:
        keptfiles.gate_shard.check(data)
    assert refused.value.field.startswith(field)


def test_the_command_merges_the_kept_shards_and_keeps_one_gate(tmp_path, capsys):
    results = tmp_path / "results"
    plan = shards.plan({u: shards.Cost(1.0) for u in shards.units(SUITE)}, 2)
    for k, share in enumerate(plan, 1):
        _keep(results, share, (k, 2), f"runner-{k}", HERE)
    described = {name: dict(spec, name=name) for name, spec in SUITE.items()}
    (results / "benchmarks.json").write_text(json.dumps({**described, "version": 2}))
    config = tmp_path / "asv.conf.json"
    config.write_text(json.dumps({"version": 1, "repo": ".", "results_dir": "results"}))
    argv = ["gate", "merge", "v2.21.0", "v2.22.0rc0", "--machine", "lab", "--config", str(config)]
    assert main(argv) == 1  # a point got worse
    said = capsys.readouterr()
    assert "m.C.time_step('b', 'CPU')" in said.out and "kept in" in said.err
    assert keptfiles.gate_run.read(results / "gate" / "lab" / "v2.21.0-v2.22.0rc0.json")["cpus"]
    with pytest.raises(SystemExit) as one_release:  # argparse's usage line, exit 2
        main(["gate", "merge", "v2.21.0", "--config", str(config)])
    assert one_release.value.code == 2


def test_upgrade_rewrites_every_former_gate_file_as_it_is_committed(tmp_path, capsys):
    """Gate runs of format 2 and shards of format 1 named the sides before and after: every
    one committed before `tfbench results upgrade` (tests/data/former.tar.gz) upgrades to
    the file committed now, byte for byte; a second run upgrades nothing; a file whose
    upgrade its reader refuses is named and left as it was; the readers read one format."""
    with tarfile.open(ROOT / "tests" / "data" / "former.tar.gz") as former:
        former.extractall(tmp_path / "results", filter="data")
    files = sorted((tmp_path / "results").rglob("*.json"))
    assert len(files) == 13
    assert main(["results", "upgrade", "--results", str(tmp_path / "results")]) == 0
    for path in files:
        committed = ROOT / "results" / path.relative_to(tmp_path / "results")
        assert path.read_bytes() == committed.read_bytes(), path
    assert "13 file(s) upgraded" in capsys.readouterr().out
    assert main(["results", "upgrade", "--results", str(tmp_path / "results")]) == 0
    assert "0 file(s) upgraded" in capsys.readouterr().out

    with tarfile.open(ROOT / "tests" / "data" / "former.tar.gz") as former:
        former.extractall(tmp_path / "again", filter="data")
    runs = [p for p in (tmp_path / "again").rglob("*.json") if gate_run.named(p.name)]
    run = next(p for p in runs if json.loads(p.read_text())["rows"])
    raw = json.loads(run.read_text())
    raw["rows"][0]["before"] = "x"
    run.write_text(json.dumps(raw))
    held = next(p for p in (tmp_path / "again").rglob("*.json") if gate_shard.named(p.name))
    held.write_bytes(held.read_bytes().replace(b'"format": 1', b'"format": 7'))
    was = run.read_bytes(), held.read_bytes()
    assert main(["results", "upgrade", "--results", str(tmp_path / "again")]) == 2
    said = capsys.readouterr()
    assert f"{run}: upgraded, rows[" in said.err and ".old: " in said.err
    assert "11 file(s) upgraded, 1 left" in said.out  # format 7: no former format, not read
    assert (run.read_bytes(), held.read_bytes()) == was
    for path, check in ((run, gate_run.check), (held, gate_shard.check)):
        with pytest.raises(keptfiles.Invalid, match=r"^format: .* reads format"):
            check(json.loads(path.read_text()))
