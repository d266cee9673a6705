"""A release read on another CPU joins a history chained (tfbench.publish.chain): each time
point the history's figure for the release before moved by its pairs, memory as read, the
link kept and checked, nothing of the history replaced, the chain's spread multiplied."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import pytest

from tfbench import cpu, keptfiles
from tfbench.cli import main
from tfbench.gate import kept
from tfbench.history import repo
from tfbench.paths import ROOT
from tfbench.publish import chain
from tfbench.publish.results import checked_result

HISTORY = "lab"
RAW = "runner-intel"
ENV = "virtualenv-py3.11"
COMMITS = repo.history_tags(ROOT / "releases" / "history.git")
SOURCE = (
    ROOT / "retired" / "results" / "linux-2cpu-24gb"
)  # the committed history's files, as fixtures
HERE = json.loads(json.dumps(cpu.identity()))


def _file(tag: str) -> str:
    return f"{COMMITS[tag][:8]}-{ENV}.json"


def _machine(results: Path, name: str) -> None:
    (results / name).mkdir(parents=True, exist_ok=True)
    record = {"machine": name, "cpu": "x", "version": 1}
    (results / name / "machine.json").write_text(json.dumps(record))


def _time_points(results_file: Path) -> list[str]:
    data = json.loads(results_file.read_text())
    return [
        f"{key}({', '.join(combo)})"
        for key, row in data["results"].items()
        if ".time_" in key
        for combo in itertools.product(*row[1])
    ]


def _gate(results: Path, machine: str, pair: tuple[str, str], ratio: float) -> None:
    """A kept gate run whose every time point reads `ratio`, within x0.97-x1.03 of it
    (different where that interval holds no 1, else the same)."""
    answer = "same" if ratio * 0.97 <= 1 <= ratio * 1.03 else "different"
    points = [
        {"point": p, "answer": answer, "ratio": ratio, "low": ratio * 0.97,
         "high": ratio * 1.03, "pairs": 12}
        for p in _time_points(SOURCE / _file(pair[1]))
    ]  # fmt: skip
    counts = {"different": 0, "same": 0} | {answer: len(points)}
    time = {"design": "turns", "margin": 0.02, "level": 0.98, "pairs": [8, 50],
            "seconds": 0.5, "skipped": 0, **counts, "unknown": [], "points": points}  # fmt: skip
    points = [dict(p, cpu=HERE["id"]) for p in time.pop("points")]
    read_on = {"cpus": {HERE["id"]: HERE}, "onednn": {}}
    kept.write(results, machine, pair, dict(time, points=points), [], (), read_on)


def _copy(tag: str, machine: Path) -> None:
    """The committed history's results file of `tag`, as `machine` read it."""
    data = json.loads((SOURCE / _file(tag)).read_text())
    data["params"]["machine"] = machine.name
    (machine / _file(tag)).write_text(json.dumps(data))


@pytest.fixture
def results(tmp_path):
    """A history that read 2.20.0 itself; a runner that read 2.21.0 and 2.22.0rc0."""
    found = tmp_path / "results"
    _machine(found, HISTORY)
    _machine(found, RAW)
    _copy("v2.20.0", found / HISTORY)
    for tag in ("v2.21.0", "v2.22.0rc0"):
        _copy(tag, found / RAW)
    for tag in ("v2.21.0", "v2.22.0rc0"):
        name = f"{COMMITS[tag][:8]}-{ENV}-cpu.txt"
        (found / "packages" / RAW).mkdir(parents=True, exist_ok=True)
        (found / "packages" / RAW / name).write_text("# lock\nnumpy==2.0\n")
    _gate(found, RAW, ("v2.20.0", "v2.21.0"), 1.10)
    _gate(found, RAW, ("v2.21.0", "v2.22.0rc0"), 0.90)
    return found


def _values(path: Path) -> dict[tuple[str, tuple[str, ...]], object]:
    data = json.loads(path.read_text())
    return {
        (key, combo): value
        for key, row in data["results"].items()
        for combo, value in zip(itertools.product(*row[1]), row[0])
    }


def _chain(results: Path, tag: str, **kw) -> chain.Chained:
    return chain.chain(results, ROOT / "releases" / "history.git", HISTORY, tag, ENV, **kw)


def test_a_release_joins_the_history_moved_by_its_pairs(results):
    done = _chain(results, "v2.21.0")
    base = _values(results / HISTORY / _file("v2.20.0"))
    raw = _values(results / RAW / _file("v2.21.0"))
    got = _values(done.path)
    times = [k for k in got if ".time_" in k[0]]
    assert times and done.moved == sum(isinstance(base[k], float) and base[k] > 0 for k in times)
    for k in times:
        if isinstance(base[k], float) and base[k] > 0 and not math.isnan(base[k]):
            assert got[k] == pytest.approx(base[k] * 1.10)  # not the runner's own figure
        else:
            assert isinstance(got[k], float) and math.isnan(got[k])  # no figure: not drawn
    others = [k for k in got if ".time_" not in k[0]]
    assert others and all(  # memory as the runner read it
        got[k] == raw[k] or (math.isnan(got[k]) and math.isnan(raw[k]))
        for k in others
        if isinstance(raw[k], float)
    )
    data = json.loads(done.path.read_text())
    history = json.loads((results / HISTORY / _file("v2.20.0")).read_text())
    assert data["params"] == history["params"] and data["commit_hash"] == COMMITS["v2.21.0"]
    row = data["results"]["loops.MatrixPower.time_step"]
    ci = dict(zip(data["result_columns"], row))
    assert ci["stats_ci_99_a"][0] == pytest.approx(row[0][0] * 0.97)  # the pairs' interval
    assert ci["stats_ci_99_b"][0] == pytest.approx(row[0][0] * 1.03)
    assert ci["samples"][0] is None  # no sample was read on the history's CPU
    result = checked_result(done.path, HISTORY)  # asv reads it as its own
    assert result.commit_hash == COMMITS["v2.21.0"]
    link = keptfiles.chain_link.read(done.link)
    assert (link["before"], link["gate"], link["raw"], link["links"]) == ("v2.20.0", RAW, RAW, 1)
    assert link["cpus"] == {HERE["id"]: HERE} and len(link["points"]) == done.moved
    assert {p["cpu"] for p in link["points"]} == {HERE["id"]}
    assert (results / "packages" / HISTORY / f"{COMMITS['v2.21.0'][:8]}-{ENV}-cpu.txt").exists()


def test_a_chain_of_two_links_multiplies_their_spread(results):
    _chain(results, "v2.21.0")
    done = _chain(results, "v2.22.0rc0")
    link = keptfiles.chain_link.read(done.link)
    assert link["links"] == 2
    low, high = link["points"][0]["spread"]
    assert (low, high) == pytest.approx((0.97**2, 1.03**2))
    first = _values(results / HISTORY / _file("v2.20.0"))
    got = _values(done.path)
    key = next(k for k in got if ".time_" in k[0] and isinstance(first[k], float) and first[k] > 0)
    assert got[key] == pytest.approx(first[key] * 1.10 * 0.90)


def test_nothing_of_the_history_is_replaced_and_ambiguity_is_named(results):
    with pytest.raises(chain.ChainError, match="holds no results of v2.21.0"):
        _chain(results, "v2.22.0rc0")  # its release before is not in the history yet
    (results / HISTORY / _file("v2.21.0")).write_text("{}")
    with pytest.raises(chain.ChainError, match="lab holds v2.21.0 already"):
        _chain(results, "v2.21.0")
    (results / HISTORY / _file("v2.21.0")).unlink()
    _machine(results, "runner-amd")
    _copy("v2.21.0", results / "runner-amd")
    with pytest.raises(chain.ChainError, match="runner-amd, runner-intel; name one with --raw"):
        _chain(results, "v2.21.0")
    _gate(results, "runner-amd", ("v2.20.0", "v2.21.0"), 1.0)
    with pytest.raises(chain.ChainError, match="name one with --gate"):
        _chain(results, "v2.21.0", raw=RAW)
    assert _chain(results, "v2.21.0", raw=RAW, gate="runner-amd").moved
    assert not (results / HISTORY / _file("v2.22.0rc0")).exists()


def test_a_gate_run_kept_before_it_named_its_cpu_cannot_chain(results):
    path = keptfiles.gate_run.path(results, RAW, ("v2.20.0", "v2.21.0"))
    data = json.loads(path.read_text())
    data["time"]["points"] = [
        {k: v for k, v in p.items() if k != "cpu"} for p in data["time"]["points"]
    ]
    path.write_text(json.dumps({k: v for k, v in data.items() if k != "cpus"}))
    with pytest.raises(chain.ChainError, match="keeps no CPU"):
        _chain(results, "v2.21.0")


def test_the_command_chains_and_says_on_which_cpu(results, tmp_path, capsys):
    config = tmp_path / "asv.conf.json"
    repo_path = str(ROOT / "releases" / "history.git")
    config.write_text(json.dumps({"results_dir": "results", "repo": repo_path}))
    assert main(["results", "chain", "v2.21.0", "--onto", HISTORY, "--config", str(config)]) == 0
    said = capsys.readouterr().out
    assert "v2.21.0 chained onto lab" in said and f"cpu {HERE['id']}" in said
    assert main(["results", "chain", "v2.21.0", "--onto", HISTORY, "--config", str(config)]) == 2
    assert "holds v2.21.0 already" in capsys.readouterr().err
