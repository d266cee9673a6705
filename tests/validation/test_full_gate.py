"""The gate at full size: the history's real model.predict change found between two
releases' environments, and the planted project's other A/A (README command 2 keeps the
planted changes found and one A/A: tests/test_gate.py)."""

from __future__ import annotations

import json

import pytest
from conftest import planted_gate

from tfbench import cli
from tfbench.paths import ROOT
from tfbench.units import KiB

pytestmark = pytest.mark.validation


def test_gate_same_commit_twice_is_quiet(planted_project, monkeypatch, capsys):
    """kept: 64 KiB against 64."""
    assert planted_gate(planted_project, "v1.0.0", "v1.0.0", monkeypatch, capsys) == (0, [])


def test_gate_finds_the_real_change_in_model_predict(capsys):
    """The history's one real change in that range: model.predict's growth per call falls
    from ~230 KiB (2.14.1) to ~40 KiB (2.15.1). Both releases' environments are made. The
    probes measure the one grid point --bench asks for, not their family's grid."""
    bench = r"^predict\.PredictionCosts\.track_growth.*'model_predict', 'CPU'"
    code = cli.main(
        ["gate", "v2.14.1", "v2.15.1", "--bench", bench, "--machine", "gate-test", "--json"]
    )
    rows = json.loads(capsys.readouterr().out)
    assert [(r["params"]["variant"], r["direction"]) for r in rows] == [
        ("model_predict", "better")
    ]
    assert rows[0]["old"] > 150 * KiB and rows[0]["new"] < 100 * KiB
    assert code == 0  # better only: nothing to stop a release for
    runs = ROOT / ".asv" / "gate" / "v2.14.1-v2.15.1"
    kept = [
        json.loads(p.read_text()) for p in runs.glob("*-memory/results/probes/gate-test/*.json")
    ]
    assert len(kept) == 2 and all(
        list(k["PredictionCosts"]) == ["model_predict|CPU"] for k in kept
    )
