"""One table of figures (tfbench/figures.py): a figure added there, and nowhere else, is
read, compared and shown by every part that reads figures (a count, as a pattern's
counter; any other kind, as the measured record's own key): the gate's rows, bisect, the
report, the nightly bisection's kept file and the issue it writes. No TensorFlow."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
from pathlib import Path

from tfbench import figures, floors, sweep
from tfbench.gate import rules
from tfbench.nightly import policy

ROOT = Path(__file__).resolve().parents[1]
ROW = """
    Figure(
        "threads",
        "track_threads",
        "threads_started",
        "threads",
        "threads started",
        COUNT,
        _exact,
        "threads the step starts and leaves running",
    ),
)
BY_NAME ="""

CHECK = r"""
import json, sys
from tfbench import figures, keptfiles, sweep
from tfbench.gate import rules
from tfbench.gate.readings import Side
from tfbench.nightly import upstream
from tfbench.publish import blocks, sections
from tfbench.publish.changes import Changes, Item

kept = json.loads(sys.argv[1])
out = {"bisected": "threads" in figures.BISECTED}
bench = "m.CCosts.track_threads"
a, b = Side(), Side()
a.runs[(bench, ("'x'",))] = [[3.0], [3.0]]
b.runs[(bench, ("'x'",))] = [[5.0], [5.0]]
benchmarks = {bench: {"param_names": ["variant"], "params": [["'x'"]], "unit": "threads"}}
(row,) = rules.compare(benchmarks, a, b)
out["gate"] = [row.metric, row.direction, row.told]
record = {"status": "ok", "iterations": 10, "counters": {"threads_started": 3}}
out["bisect"] = [
    sweep.differ("threads", record, dict(record, counters={"threads_started": 5})),
    sweep.differ("threads", record, record),
]
changes = Changes(("v1", "v2"), [Item(row, "index.html", "tfbench gate")], "test", "m")
out["report"] = "\n".join(blocks.markdown(sections.changes(changes)))
data = keptfiles.bisection.check(kept)
out["issue"] = upstream.issue(data, "pass\n")
print(json.dumps(out))
"""


def _kept_threads_bisection() -> dict:
    from test_nightly import kept_bisection

    data = kept_bisection()
    for readings in (*data["readings"].values(), *data["releases"].values()):
        for reading in readings:
            started = 3 if reading["heap_bytes"] < 30000 else 5
            reading["counters"] = dict(reading.get("counters", {}), threads_started=started)
    return dict(data, metric="threads")


def _with_row(tmp_path: Path, row: str, code: str, *args: str) -> dict:
    """What `code` prints (JSON) run against the copy of the package in tmp_path whose
    figure table has `row` added as its last, and nothing else changed."""
    table = tmp_path / "tfbench" / "figures.py"
    source = table.read_text()
    assert source.count("\n)\nBY_NAME =") == 1
    table.write_text(source.replace("\n)\nBY_NAME =", row, 1))
    run = subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=tmp_path,
        env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def test_a_figure_added_to_the_table_alone_is_read_everywhere(tmp_path):
    """Copy the package, add one row to FIGURES, and nothing else."""
    shutil.copytree(ROOT / "tfbench", tmp_path / "tfbench")
    out = _with_row(tmp_path, ROW, CHECK, json.dumps(_kept_threads_bisection()))
    assert out["bisected"]
    assert out["gate"][:2] == ["track_threads", "worse"]
    assert out["gate"][2].startswith("threads started 3 threads -> 5 threads")
    assert out["bisect"] == [True, False]
    assert "track\\_threads" in out["report"] or "track_threads" in out["report"]
    assert "threads started 3 threads" in out["report"]
    assert "Threads the step starts and leaves running" in out["issue"]
    assert "5 threads on 2.22.0rc0" in out["issue"]


PEAK_ROW = """
    Figure(
        "stack-peak",
        "track_stack_peak",
        "stack_peak_bytes",
        "bytes",
        "stack peak",
        PEAK,
        floors.peak,
        "the deepest thread stack the step reached",
    ),
)
BY_NAME ="""

RECORD = r"""
import json
from benchmarks import common
from tfbench.keptfiles import fields
from tfbench.measure import record

repeats = [{"status": "ok", "iterations": 10, "stack_peak_bytes": n} for n in (4, 9, 5)]
print(json.dumps({
    "read": fields.records(repeats, "r")[0].get("stack_peak_bytes"),
    "kept": record.kept(repeats[0]).get("stack_peak_bytes"),
    "blank": "stack_peak_bytes" in record.blank("s", {}, "CPU", None),
    "combined": record.combine(repeats)["stack_peak_bytes"],
    "track": hasattr(common.ProbeCosts, "track_stack_peak"),
}))
"""


def test_a_figure_of_the_records_own_is_declared_by_its_row_alone(tmp_path):
    """A peak added to FIGURES alone is a key of the measured record: read back from a
    kept file, kept by a probe's repeat, carried by every record, combined by its median,
    and reported by a track_ benchmark of every family."""
    for folder in ("tfbench", "benchmarks"):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    out = _with_row(tmp_path, PEAK_ROW, RECORD)
    assert out == {
        "read": 4,
        "kept": 4,
        "blank": True,
        "combined": 5,
        "track": True,
    }


def test_the_gate_the_nightly_bisection_and_bisect_ask_one_rule():
    """floors.apart and floors.flipped decide for all three: on the same readings the gate's
    row, the nightly bisection's separation and bisect's single-reading change agree with
    them (bisect's slopes also need their intervals apart: given wide apart here)."""
    rng = random.Random(80)
    for _ in range(2000):
        metric = rng.choice(["retained", "garbage", "heap-peak", "peak", "growth"])
        figure = figures.BY_NAME[metric]
        scale = rng.choice([512, 4096, 1 << 20, 1 << 24])
        a = [rng.uniform(0, scale) for _ in range(rng.randint(1, 5))]
        b = [v * rng.uniform(0.5, 2) + rng.uniform(-scale, scale) for v in a]
        sign = floors.apart(figure.floor, a, b)
        row = rules.RULES[figure.method]([a], [b])
        assert (row[0] if row else 0) == sign
        said = policy.separation(
            metric, [{figure.field: v} for v in a], [{figure.field: v} for v in b]
        )
        assert (said == "apart") == bool(sign)
        one = {"status": "ok", "iterations": 10}
        x, y = (dict(one, **{figure.field: v[0]}) for v in (a, b))
        if figure.interval:
            x[figure.interval], y[figure.interval] = [-1e12, -1e12], [1e12, 1e12]
        assert sweep.differ(metric, x, y) == bool(floors.apart(figure.floor, a[:1], b[:1]))
    for a, b, flip in (
        ([0, 0], [1, 1], 1),
        ([1], [0, 0], -1),
        ([1, 1], [1], 0),
        ([0, 1], [1], None),
    ):
        assert floors.flipped(a, b) == flip
        row = rules.leak_rule([a], [b])
        assert (row[0] if row else 0) == (flip or 0)
        said = policy.separation(
            "leak", [{"leak": bool(v)} for v in a], [{"leak": bool(v)} for v in b]
        )
        assert said == {1: "apart", -1: "apart", 0: "alike", None: "undecided"}[flip]
