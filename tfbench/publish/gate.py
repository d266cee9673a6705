"""Benchmarks where a release is worse than the one before, by `asv compare`'s own rule.

asv's step detection never flags the newest release (it needs two points after a step), so
the report gates the newest pair of releases with asv compare's rule
(asv.commands.compare._is_result_better): the two agree by construction (a test checks).
"""

from __future__ import annotations

import itertools
import math
import re
import shlex
import urllib.parse
from dataclasses import dataclass

from asv.commands.compare import _is_result_better, _isna

from tfbench.publish.results import Data, MachineResults

FACTOR = 1.1  # `asv compare`'s default factor


@dataclass(frozen=True)
class GateRow:
    name: str  # as `asv compare` prints it: benchmark(param values)
    benchmark: str
    params: dict[str, str]
    before: float | None
    after: float | None
    unit: str
    evidence: str  # what asv compare's rule had to go on

    @property
    def ratio(self) -> float | None:
        if self.before and self.after is not None:
            return self.after / self.before
        return None

    @property
    def ratio_text(self) -> str:
        if self.after is None:
            return "failed"
        return "n/a" if self.ratio is None else f"{self.ratio:.2f}"


def rows(
    data: Data,
    machine: MachineResults,
    pair: tuple[str, str] | None = None,
    factor: float = FACTOR,
) -> list[GateRow]:
    """Benchmarks where the newest release (or pair's second) is worse than the one before,
    by asv compare's rule: a new failure, or slower/bigger by `factor` where the samples'
    confidence intervals differ (values without samples compare by the factor alone)."""
    if pair is None and len(machine.releases) < 2:
        return []
    old, new = pair or machine.releases[-2:]
    found = []
    for key, bench in sorted(data.benchmarks.items()):
        for combo in itertools.product(*bench["params"]):
            (v1, st1, sa1), (v2, st2, sa2) = (
                machine.values.get((key, combo, tag), (math.nan, None, None)) for tag in (old, new)
            )
            if v1 is not None and v2 is None:
                worse, evidence = True, "a new failure"
            elif _isna(v1) or _isna(v2):
                worse = False
            else:
                improved = _is_result_better(v2, v1, (st2, sa2), (st1, sa1), factor)
                worse = not improved and _is_result_better(v1, v2, (st1, sa1), (st2, sa2), factor)
                sampled = st1 and st2 and st1.get("repeat", 0) != 1 and st2.get("repeat", 0) != 1
                evidence = (
                    "samples: their confidence intervals differ"
                    if sampled
                    else "one reading per release: the ratio alone"
                )
            if worse:
                name = f"{key}({', '.join(combo)})" if combo else key  # as compare prints it
                found.append(
                    GateRow(
                        name,
                        key,
                        dict(zip(bench["param_names"], combo)),
                        v1,
                        v2,
                        bench.get("unit") or "",
                        evidence,
                    )
                )
    return found


def graph_url(row: GateRow, machine: str) -> str:
    """The benchmark's page in asv's site, at this grid point and machine."""
    query = {"machine": machine, **{f"p-{k}": v for k, v in row.params.items()}}
    return (
        f"index.html#{row.benchmark}?{urllib.parse.urlencode(query, quote_via=urllib.parse.quote)}"
    )


def bisect_command(row: GateRow, machine: str, pair: tuple[str, str]) -> str:
    """`asv find` over the pair for this grid point: asv matches a parameterized benchmark's
    regex against `name(param, ...)`. Every value is shell-quoted: names come from results."""
    old, new = pair
    # A quote becomes '.', so the pattern needs no quoting inside the shell's quotes.
    point = "^" + re.escape(row.name).replace("\\ ", " ").replace("'", ".") + "$"
    return shlex.join(["asv", "find", "--machine", machine, f"{old}..{new}", point])
