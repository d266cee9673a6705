"""Common-mode shifts (tfbench.gate.shifts) on hand-built sides: a uniform shift is one
finding and no rows, a shift plus one real outlier keeps the outlier, no shift keeps the
rows as the gate's rules give them."""

from __future__ import annotations

from tfbench.gate import shifts
from tfbench.gate.readings import Side
from tfbench.units import MiB

POINTS = 10
BENCH = {
    f"m.C{p}.{metric}": {"param_names": [], "params": [], "unit": unit}
    for p in range(POINTS)
    for metric, unit in (("peakmem_step", "bytes"), ("time_step", "seconds"))
}


def side(peaks: list[float], times: list[float] | None = None, runs: int = 1) -> Side:
    s = Side()
    for _ in range(runs):
        s.count += 1
        for p, peak in enumerate(peaks):
            s.add((f"m.C{p}.peakmem_step", ()), peak)
            if times:
                for k in range(10):
                    s.add((f"m.C{p}.time_step", ()), times[p] * (1 + k / 1000))
    return s


BASE = [(200 + 10 * p) * MiB for p in range(POINTS)]


def test_a_uniform_shift_is_one_finding_and_no_row():
    found, rows = shifts.common_shifts(BENCH, side(BASE), side([v + 8.5 * MiB for v in BASE]))
    (shift,) = found
    assert (
        shift.text()
        == "the process's peak memory (peakmem_step) moved +8.5 MiB at 10 of 10 points"
    )
    assert rows == []


def test_a_shift_plus_one_outlier_keeps_the_outlier():
    after = [v + 8.5 * MiB for v in BASE]
    after[3] += 40 * MiB  # this point grew for a reason of its own
    found, rows = shifts.common_shifts(BENCH, side(BASE), side(after))
    assert [s.amount for s in found] == [8.5 * MiB]
    (row,) = rows
    assert (row.name, row.direction, row.new) == ("m.C3.peakmem_step", "worse", after[3])
    assert "less the common +8.5 MiB" in row.told and row.evidence["less"] == "+8.5 MiB"
    # a point that did not move while the rest did differs from the shift too
    still = [v + 8.5 * MiB for v in BASE]
    still[5] = BASE[5]
    (row,) = shifts.common_shifts(BENCH, side(BASE), side(still))[1]
    assert (row.name, row.direction) == ("m.C5.peakmem_step", "better")


def test_no_shift_keeps_the_rules_rows():
    after = list(BASE)
    after[0] += 30 * MiB
    after[1] += 30 * MiB
    found, rows = shifts.common_shifts(BENCH, side(BASE), side(after))
    assert found == []
    assert [r.name for r in rows] == ["m.C0.peakmem_step", "m.C1.peakmem_step"]
    # moves that spread too widely are no common shift either
    spread = [v + (p % 2) * 20 * MiB for p, v in enumerate(BASE)]
    assert shifts.find(side(BASE), side(spread)) == []


def test_time_shifts_by_a_factor():
    times = [1e-3 * (1 + p) for p in range(POINTS)]
    slower = [t * 1.3 for t in times]
    found, rows = shifts.common_shifts(
        BENCH, side(BASE, times, runs=5), side(BASE, slower, runs=5)
    )
    (shift,) = found
    assert shift.metric == "time_step" and shift.text().startswith("time per step moved x1.30")
    assert rows == []


def test_a_shift_of_one_family_is_told_for_that_family():
    """Families import different parts of TensorFlow: one family's footprint can move while
    the others' stay."""
    combos = [(repr(p),) for p in range(6)]
    bench = {
        f"m.{f}.peakmem_step": {
            "param_names": ["p"],
            "params": [[c for (c,) in combos]],
            "unit": "bytes",
        }
        for f in "AB"
    }

    def two_families(moved: float) -> Side:
        s = Side(count=1)
        for (c,), base in zip(combos, BASE):
            s.add(("m.A.peakmem_step", (c,)), base + moved)
            s.add(("m.B.peakmem_step", (c,)), base)
        return s

    found, rows = shifts.common_shifts(bench, two_families(0), two_families(9 * MiB))
    (shift,) = found
    assert (shift.scope, shift.followed, shift.points) == ("m.A", 6, 6)
    assert shift.text().endswith("moved +9 MiB at 6 of 6 points of m.A")
    assert rows == []
