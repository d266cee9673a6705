"""Where the time of a release's asv run and of the test run goes (`tfbench profile`).

A release: asv's own durations (each benchmark's and each `setup_cache`'s, which is where
the probes run) from its results file, beside the times at which asv's output began its
phases (creating and installing the environment, discovering the benchmarks); what is left
of the run's wall time is asv's own (spawning, the forkserver's TensorFlow import, writing).
The tests: one line per test (tests/conftest.py writes them where TFBENCH_TEST_PROFILE says).
What either file names is escaped in the tables (a results file may come from elsewhere).
"""

from __future__ import annotations

import json
import re
import statistics
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tfbench.escape import code, markdown

# asv's lines that begin a phase outside the benchmarks, by the phase they begin
PHASES = {
    "environment": re.compile(r"Creating environments|Building for |Installing "),
    "discovery": re.compile(r"Discovering benchmarks"),
    "benchmarks": re.compile(r"Running \d+ total benchmarks|Benchmarking "),
}
KINDS = ("time", "peakmem", "track")


@dataclass
class Timeline:
    """When asv's output began each phase, seconds from the run's start."""

    marks: list[tuple[float, str]] = field(default_factory=list)
    total: float = 0.0

    def see(self, at: float, line: str) -> bool:
        """A line of asv's output as read so far: whether it begins a phase (at `at`)."""
        for phase, pattern in PHASES.items():
            if pattern.search(line):
                self.marks.append((at, phase))
                return True
        return False

    def seconds(self) -> dict[str, float]:
        """Each phase's wall seconds: from its line to the next phase's (or the end)."""
        spent: dict[str, float] = defaultdict(float)
        for (at, phase), (end, _) in zip(self.marks, [*self.marks[1:], (self.total, "")]):
            spent[phase] += end - at
        return dict(spent)


def release_rows(result: dict[str, Any], timeline: Timeline | None) -> list[tuple[str, float]]:
    """(phase, seconds) of one asv results file, the probes and samples by family; with the
    run's timeline, the environment, discovery and asv's own share of the wall time.
    ValueError where the file is not of asv's form (it may come from another machine)."""
    rows: list[tuple[str, float]] = []
    durations, results = result.get("durations", {}), result.get("results")
    if not isinstance(durations, dict) or not isinstance(results, dict):
        raise ValueError("durations and results are not objects")
    probes: dict[str, float] = defaultdict(float)
    for name, seconds in durations.items():
        found = re.fullmatch(r"<setup_cache (\w+):\d+>", name)
        if found:
            probes[found[1]] += _seconds(name, seconds)
    samples: dict[tuple[str, str], float] = defaultdict(float)
    column = result["result_columns"].index("duration")
    for name, values in results.items():
        family, _, method = name.rpartition(".")
        kind = method.partition("_")[0]
        if isinstance(values, list) and len(values) > column and values[column] is not None:
            if kind in KINDS:
                samples[family.partition(".")[0], kind] += _seconds(name, values[column])
    if timeline:
        spent = timeline.seconds()
        rows += [(phase, spent.get(phase, 0.0)) for phase in ("environment", "discovery")]
    rows += [(f"probes: {f}", s) for f, s in sorted(probes.items())]
    for kind in KINDS:
        rows += [(f"asv {kind}_: {f}", s) for (f, k), s in sorted(samples.items()) if k == kind]
    inside = sum(probes.values()) + sum(samples.values())
    if timeline:
        rows.append(("asv's own (spawns, imports, writing)", spent.get("benchmarks", 0) - inside))
        rows.append(("total", timeline.total))
    else:
        rows.append(("probes and samples", inside))
    return rows


def _seconds(name: str, value: Any) -> float:
    """A duration read from the file: a finite number of seconds, or ValueError."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < 1e7:
        raise ValueError(f"{name}: a duration of {value!r}, not seconds")
    return float(value)


def release_table(rows: list[tuple[str, float]]) -> str:
    """A Markdown table of phases, with each one's share of the last row."""
    whole = rows[-1][1] or 1.0
    lines = ["| phase | seconds | share |", "|---|---:|---:|"]
    lines += [f"| {markdown(name)} | {s:.0f} | {100 * s / whole:.0f}% |" for name, s in rows]
    return "\n".join(lines)


def test_lines(path: Path) -> list[dict[str, Any]]:
    """The profile's lines; a line that is not one is refused, naming the file and line."""
    lines = []
    for number, text in enumerate(path.read_text().splitlines(), 1):
        try:
            line = json.loads(text)
            lines.append(
                {
                    "test": str(line["test"]),
                    "tier": str(line["tier"]),
                    "wall": float(line["wall"]),
                    "cpu": float(line["cpu"]),
                }
            )
        except (ValueError, KeyError, TypeError):
            raise ValueError(f"{path}:{number}: not a test profile line") from None
    return lines


def tests_table(lines: Iterable[dict[str, Any]], wall: float | None, slowest: int = 20) -> str:
    """By tier (tests, wall and CPU seconds summed over the workers), then the slowest."""
    lines = list(lines)
    tiers: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for line in lines:
        tiers[line["tier"]].append(line)
    out = [
        "| tier | tests | wall s (sum) | CPU s (sum) | median wall s |",
        "|---|---:|---:|---:|---:|",
    ]
    for tier, its in sorted(tiers.items(), key=lambda t: -sum(x["wall"] for x in t[1])):
        wall_sum, cpu_sum = sum(x["wall"] for x in its), sum(x["cpu"] for x in its)
        median = statistics.median(x["wall"] for x in its)
        out.append(
            f"| {markdown(tier)} | {len(its)} | {wall_sum:.0f} | {cpu_sum:.0f} | {median:.2f} |"
        )
    if wall is not None:
        out.append(f"\nThe run's wall time: {wall:.0f} s.")
    out += [
        "",
        f"The {slowest} slowest:",
        "",
        "| test | tier | wall s | CPU s |",
        "|---|---|---:|---:|",
    ]
    for line in sorted(lines, key=lambda x: -x["wall"])[:slowest]:
        out.append(
            f"| {code(line['test'])} | {markdown(line['tier'])} | {line['wall']:.1f} "
            f"| {line['cpu']:.1f} |"
        )
    return "\n".join(out)
