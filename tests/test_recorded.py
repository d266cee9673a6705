"""The gate's rules on recorded readings: the committed history's sides of two pairs of
releases as the report read them (every timing sample and probe repeat of each point),
with the rows the rules gave when the fixture was written. A change to the rules' code
that is meant to keep their behaviour must give the same rows: the same points, metrics,
directions and values (the evidence's wording is presentation: tests/test_gate.py)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from tfbench.gate import rules
from tfbench.gate.readings import Side

FIXTURE = Path(__file__).parent / "data" / "recorded-readings.json.gz"


def _side(recorded: dict) -> Side:
    side = Side(count=recorded["count"])
    side.runs = {(key, tuple(combo)): runs for key, combo, runs in recorded["runs"]}
    side.missing = {(key, tuple(combo)): why for key, combo, why in recorded["missing"]}
    return side


RECORDED = json.loads(gzip.decompress(FIXTURE.read_bytes()))


@pytest.mark.parametrize("pair", sorted(RECORDED["pairs"]))
def test_rules_give_the_recorded_rows(pair):
    old, new = pair.split("..")
    sides = RECORDED["sides"]
    rows = rules.compare(RECORDED["benchmarks"], _side(sides[old]), _side(sides[new]))
    found = [dict(r.as_json(), name=r.name) for r in rows]
    for row in found + RECORDED["pairs"][pair]:
        row.pop("evidence")
    assert found == RECORDED["pairs"][pair]


def test_the_fixture_holds_rows_of_several_rules():
    metrics = {r["metric"] for rows in RECORDED["pairs"].values() for r in rows}
    assert {"peakmem_step", "track_growth_per_iteration", "track_peak_increase"} <= metrics
