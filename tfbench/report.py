"""The release report: every scenario family across TensorFlow releases, machine by machine.

Reads asv's results with asv's own loaders and names each commit by its release tag. For
each family: a table of grid points x releases (time per iteration, peak increase, growth per
iteration, leak/flat, ratios to the previous release), a plot, the verdicts on the seed
articles' claims, and the newest-release gate. asv's step detection never flags the newest
release (it needs two points after a step), so the gate applies `asv compare`'s own rule
(asv.commands.compare) to the two newest releases: the two agree by construction.
"""

from __future__ import annotations

import ast
import itertools
import math
import sys
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from asv import util
from asv.benchmarks import Benchmarks
from asv.commands.compare import _is_result_better, _isna
from asv.config import Config
from asv.results import Results

from tfbench import releases

FACTOR = 1.1  # `asv compare`'s default factor
# What the report shows of each family -> the benchmark method that measures it.
METRICS = {"time": "time_step", "peak": "track_peak_increase",
           "growth": "track_growth_per_iteration", "leak": "track_leak"}


@dataclass
class MachineResults:
    machine: str
    releases: list[str] = field(default_factory=list)  # tags with results, oldest first
    # (benchmark, param values, tag) -> (value, stats, samples); value None = failed, nan = skipped
    values: dict[tuple[str, tuple[str, ...], str], tuple[Any, Any, Any]] = field(default_factory=dict)

    def value(self, benchmark: str, params: tuple[str, ...], tag: str) -> float | None:
        got = self.values.get((benchmark, params, tag), (math.nan,))[0]
        return None if _isna(got) else got


@dataclass
class Data:
    benchmarks: dict[str, dict]
    machines: dict[str, MachineResults]
    problems: list[str]  # results files that could not be read, and why


def load(conf: Config) -> Data:
    """Every machine's results for the release commits; unreadable files are named and skipped."""
    benchmarks = dict(Benchmarks.load(conf))
    tags = {commit: tag for tag, commit in releases.history_tags(Path(conf.repo)).items()}
    order = {f"v{v}": i for i, v in enumerate(releases.tracked_versions())}
    machines: dict[str, MachineResults] = {}
    problems = []
    for machine_json in sorted(Path(conf.results_dir).glob("*/machine.json")):
        found = MachineResults(machine_json.parent.name)
        for path in sorted(machine_json.parent.glob("*.json")):
            if path.name == "machine.json":
                continue
            try:
                result = Results.load(str(path), machine_name=found.machine)
            except (util.UserError, ValueError, KeyError, TypeError, OSError) as e:
                problems.append(f"{path}: {e}")
                continue
            tag = tags.get(result.commit_hash)
            if tag is None:
                problems.append(f"{path}: commit {result.commit_hash[:8]} is no tracked release")
                continue
            for key in result.get_all_result_keys():
                if key not in benchmarks or result.benchmark_version.get(key) != benchmarks[key]["version"]:
                    continue  # measured by other code than the current benchmark: not comparable
                params = result.get_result_params(key)
                rows = zip(itertools.product(*params), result.get_result_value(key, params),
                           result.get_result_stats(key, params), result.get_result_samples(key, params))
                for combo, value, stats, samples in rows:
                    found.values[(key, combo, tag)] = (value, stats, samples)
            if tag not in found.releases:
                found.releases.append(tag)
        found.releases.sort(key=lambda t: order.get(t, len(order)))
        machines[found.machine] = found
    return Data(benchmarks, machines, problems)


# ---- families -------------------------------------------------------------------------------

@dataclass
class Family:
    name: str  # the step benchmark class, e.g. loops.MatrixPower
    param_names: list[str]
    params: list[list[str]]

    def benchmark(self, metric: str) -> str:
        method = METRICS[metric]  # track_ costs live in the family's Costs class
        return f"{self.name}{'Costs' if method.startswith('track_') else ''}.{method}"


def families(benchmarks: dict[str, dict]) -> list[Family]:
    found = {}
    for name, bench in benchmarks.items():
        cls, _, method = name.rpartition(".")
        if method == "time_step":
            found[cls] = Family(cls, bench["param_names"], bench["params"])
    return [found[k] for k in sorted(found)]


def _label(family: Family, combo: tuple[str, ...]) -> str:
    return ", ".join(f"{n}={v.strip(chr(39))}" for n, v in zip(family.param_names, combo))


def _scenario_point(family: Family, combo: tuple[str, ...]) -> bool:
    """Whether a CPU grid point is one a scenario has (NumPy under a tape is not)."""
    from tfbench import scenarios

    params = {n: ast.literal_eval(v) for n, v in zip(family.param_names, combo)}
    variant = params.pop("variant")
    if params.get("device") != "CPU":
        return False
    for sid, scenario in scenarios.CATALOG.items():
        if sid.split(".", 1)[1] == variant:
            try:
                scenario.bind(params)
                return True
            except scenarios.ParamError:
                continue
    return False


def rows(family: Family, machine: MachineResults) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]]]:
    """(grid points with a value on some release here, CPU points of a scenario with none:
    skipped or failing on every release, such as GPU-only settings)."""
    measured, empty = [], []
    for combo in itertools.product(*family.params):
        if any(machine.value(family.benchmark(m), combo, tag) is not None
               for m in ("time", "growth") for tag in machine.releases):
            measured.append(combo)
        elif _scenario_point(family, combo):
            empty.append(combo)
    return measured, empty


NO_VALUE = "No value on any release here (skipped or failed: asv's log has the reason)"


# ---- verdicts on the seed articles' claims ---------------------------------------------------

@dataclass(frozen=True)
class Claim:
    article: str
    text: str
    family: str
    metric: str  # "leak": `a` leaks; "flat": `a` does not; "time"/"peak": `a` above `b`
    a: dict[str, str]
    b: dict[str, str] | None = None


def _p(**params: str) -> dict[str, str]:
    return {k: repr(v) for k, v in params.items()}


CLAIMS = [
    Claim("loop memory", "A Python loop of tf.matmul is slower than tf.while_loop in a tf.function",
          "loops.MatrixPower", "time", _p(variant="python_matmul", gradient="none", size=256),
          _p(variant="while_loop_function", gradient="none", size=256)),
    Claim("loop memory", "A GradientTape over the loop keeps every product alive (more peak memory)",
          "loops.MatrixPower", "peak", _p(variant="python_matmul", gradient="tape", size=256),
          _p(variant="python_matmul", gradient="none", size=256)),
    Claim("loop memory", "NumPy's matrix_power beats a Python loop of tf.matmul",
          "loops.MatrixPower", "time", _p(variant="python_matmul", gradient="none", size=256),
          _p(variant="numpy_matrix_power", gradient="none", size=256)),
    Claim("graph construction", "New ops and a Session every iteration leak",
          "graphs.GraphConstruction", "leak", _p(variant="session_per_iteration", allow_growth="off")),
    Claim("graph construction", "reset_default_graph each iteration stops the growth",
          "graphs.GraphConstruction", "flat", _p(variant="reset_default_graph", allow_growth="off")),
    Claim("graph construction", "Eager ops in a loop, with .numpy() and del, do not grow",
          "graphs.Eager", "flat", _p(variant="loop")),
    Claim("graph construction", "A tf.Variable created per iteration under a tape leaks",
          "graphs.Eager", "leak", _p(variant="variable_per_iteration")),
    Claim("TF1 sessions", "Sessions kept referenced and never closed leak",
          "graphs.Sessions", "leak", _p(variant="unclosed", allow_growth="off")),
    Claim("TF1 sessions", "A `with tf.Session()` block leaves the session open (leaks)",
          "graphs.Sessions", "leak", _p(variant="with_block", allow_growth="off")),
    Claim("TF1 sessions", "a = tf.add(a, c) with sess.run every iteration leaks",
          "graphs.Sessions", "leak", _p(variant="graph_accumulation", allow_growth="off")),
    Claim("tf.function", "Appending to a Python list in a tf.range loop leaks",
          "functions.Accumulation", "leak", _p(variant="list_in_tf_range", count=1000)),
    Claim("tf.function", "Retracing on every new Python scalar leaks",
          "functions.Retracing", "leak", _p(variant="retrace_python_scalar")),
    Claim("prediction", "model.predict called in a loop leaks",
          "predict.Prediction", "leak", _p(variant="model_predict")),
    Claim("prediction", "tf.random.normal inside call() leaks",
          "predict.Prediction", "leak", _p(variant="random_noise_model")),
    Claim("prediction", "Ops built and .eval()'d inside a thread loop leak",
          "predict.Threads", "leak", _p(variant="new_op_per_run", threads=4)),
    Claim("prediction", "One Session shared by four threads does not grow", "predict.Threads",
          "flat", _p(variant="shared_session", threads=4)),
]


def _match(family: Family, want: dict[str, str]) -> tuple[str, ...] | None:
    """The CPU grid point with `want`'s values and the first value of every other param."""
    given = {n: p[0] for n, p in zip(family.param_names, family.params)}
    given.update(want, device=repr("CPU"))
    combo = tuple(given[n] for n in family.param_names)
    return combo if all(c in p for c, p in zip(combo, family.params)) else None


def verdict(claim: Claim, fams: dict[str, Family], machine: MachineResults) -> str:
    """One line: whether the claim holds on each release, by the numbers."""
    family = fams.get(claim.family)
    a = family and _match(family, claim.a)
    b = family and claim.b and _match(family, claim.b)
    holds, fails, missing = [], [], []
    held = None  # on the newest release
    metric = "leak" if claim.metric == "flat" else claim.metric
    for tag in machine.releases:
        va = a and machine.value(family.benchmark(metric), a, tag)
        vb = b and machine.value(family.benchmark(metric), b, tag)
        if va is None or (claim.b and vb is None):
            missing.append(tag)
            held = None
            continue
        ratio = f" (x{va / vb:.2f})" if claim.b else ""
        held = {"leak": va >= 1, "flat": va < 1}.get(claim.metric, claim.b and va > vb)
        (holds if held else fails).append(tag + ratio)
    newest = machine.releases[-1] if machine.releases else None
    word = "no data" if held is None else "TRUE" if held else "FALSE"
    parts = [f"**{word}** on {newest}" if newest else "**no data**"]
    parts += [f"holds on {', '.join(holds)}"] if holds else []
    parts += [f"does not hold on {', '.join(fails)}"] if fails else []
    parts += [f"no value on {', '.join(missing)}"] if missing else []
    return f"[{claim.article}] {claim.text}: " + "; ".join(parts)


# ---- the newest-release gate -----------------------------------------------------------------

@dataclass
class Regression:
    name: str  # as `asv compare` prints it: benchmark(param values)
    benchmark: str
    params: dict[str, str]
    before: float | None
    after: float | None
    unit: str
    evidence: str  # what asv compare's rule had to go on

    @property
    def ratio(self) -> str:
        if self.before is None or self.after is None:
            return "failed" if self.after is None else "n/a"
        return f"{self.after / self.before:.2f}" if self.before else "n/a"


def gate(data: Data, machine: MachineResults, factor: float = FACTOR,
         pair: tuple[str, str] | None = None) -> list[Regression]:
    """Benchmarks where the newest release (or pair's second) is worse than the one before,
    by asv compare's rule: a new failure, or slower/bigger by `factor` where the samples'
    confidence intervals differ (values without samples compare by the factor alone)."""
    if pair is None and len(machine.releases) < 2:
        return []
    old, new = pair or machine.releases[-2:]
    found = []
    for key, bench in sorted(data.benchmarks.items()):
        params = bench["params"]
        for combo in itertools.product(*params):
            (v1, st1, sa1), (v2, st2, sa2) = (machine.values.get((key, combo, tag), (math.nan, None, None))
                                              for tag in (old, new))
            if v1 is not None and v2 is None:
                worse, evidence = True, "a new failure"
            elif _isna(v1) or _isna(v2):
                worse = False
            else:
                improved = _is_result_better(v2, v1, (st2, sa2), (st1, sa1), factor)
                worse = not improved and _is_result_better(v1, v2, (st1, sa1), (st2, sa2), factor)
                sampled = st1 and st2 and st1.get("repeat", 0) != 1 and st2.get("repeat", 0) != 1
                evidence = ("samples: their confidence intervals differ" if sampled else
                            "one reading per release: the ratio alone")
            if worse:
                name = f"{key}({', '.join(combo)})" if combo else key  # as compare prints it
                found.append(Regression(name, key, dict(zip(bench["param_names"], combo)),
                                        v1, v2, bench.get("unit") or "", evidence))
    return found


def graph_url(regression: Regression, machine: str) -> str:
    """The benchmark's page in asv's site, at this grid point and machine."""
    query = {"machine": machine, **{f"p-{k}": v for k, v in regression.params.items()}}
    return f"index.html#{regression.benchmark}?{urllib.parse.urlencode(query, quote_via=urllib.parse.quote)}"


def bisect_command(regression: Regression, machine: MachineResults) -> str:
    old, new = machine.releases[-2:]
    return (f"asv find --machine {machine.machine} '{old}..{new}' "
            f"'^{regression.benchmark.replace('.', chr(92) + '.')}$'")


# ---- rendering -------------------------------------------------------------------------------

def human(value: float | None, unit: str) -> str:
    if value is None:
        return "n/a"
    if unit == "seconds":
        for name, scale in (("s", 1), ("ms", 1e-3), ("us", 1e-6)):
            if abs(value) >= scale:
                return f"{value / scale:.3g} {name}"
        return f"{value * 1e9:.3g} ns"
    if unit.startswith("bytes"):
        suffix = "/it" if "iteration" in unit else ""
        for name, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
            if abs(value) >= scale:
                return f"{value / scale:.3g} {name}{suffix}"
        return f"{value:.0f} B{suffix}"
    return f"{value:g}"


def cell(family: Family, machine: MachineResults, combo: tuple[str, ...], tag: str,
         previous: str | None) -> str:
    """time · peak · growth · leak/flat, each with its ratio to the previous release."""
    parts = []
    for metric, unit in (("time", "seconds"), ("peak", "bytes"), ("growth", "bytes/iteration")):
        value = machine.value(family.benchmark(metric), combo, tag)
        before = previous and machine.value(family.benchmark(metric), combo, previous)
        text = human(value, unit)
        if value is not None and before and (metric != "growth" or abs(before) >= 1024):
            text += f" (x{value / before:.2f})"
        parts.append(text)
    leak = machine.value(family.benchmark("leak"), combo, tag)
    parts.append("n/a" if leak is None else "LEAK" if leak >= 1 else "flat")
    if set(parts) == {"n/a"}:
        return "no value"
    return " · ".join(parts)


def markdown(data: Data) -> str:
    fams = families(data.benchmarks)
    by_name = {f.name: f for f in fams}
    out = ["# tfbench release report", "",
           "Each cell: time per iteration · peak increase · growth per iteration · leak verdict; "
           "(xN) is the ratio to the previous release.", ""]
    out += [f"- unreadable results file skipped: {p}" for p in data.problems]
    for machine in data.machines.values():
        out += [f"## Machine {machine.machine}", "",
                f"Releases: {', '.join(machine.releases) or 'none'}", "", "### Verdicts", ""]
        out += [f"- {verdict(c, by_name, machine)}" for c in CLAIMS]
        regressions = gate(data, machine)
        out += ["", f"### Newest-release gate ({' -> '.join(machine.releases[-2:])}, factor {FACTOR})", ""]
        if not regressions:
            out.append("No benchmark got worse." if len(machine.releases) > 1 else
                       "Needs two releases.")
        else:
            out += ["| benchmark | before | after | ratio | evidence | bisect |",
                    "|---|---|---|---|---|---|"]
            out += [f"| [{r.name}]({graph_url(r, machine.machine)}) | {human(r.before, r.unit)} | "
                    f"{human(r.after, r.unit)} | {r.ratio} | {r.evidence} | "
                    f"`{bisect_command(r, machine)}` |" for r in regressions]
        for family in fams:
            combos, empty = rows(family, machine)
            out += ["", f"### {family.name}", ""]
            if empty:
                out += [f"{NO_VALUE}: {'; '.join(_label(family, c) for c in empty)}", ""]
            if not combos:
                continue
            out.append("| " + " | ".join(["point", *machine.releases]) + " |")
            out.append("|" + "---|" * (len(machine.releases) + 1))
            for combo in combos:
                cells = [cell(family, machine, combo, tag, prev) for prev, tag in
                         zip([None, *machine.releases], machine.releases)]
                out.append("| " + " | ".join([_label(family, combo), *cells]) + " |")
    return "\n".join(out) + "\n"


def read(conf_path: str) -> tuple[Config, Data]:
    """The configuration and its results; each unreadable results file is named on stderr."""
    conf = Config.load(conf_path)
    data = load(conf)
    for problem in data.problems:
        print(f"tfbench report: skipped {problem}", file=sys.stderr)
    return conf, data


def main(conf_path: str = "asv.conf.json", html_dir: str | None = None) -> Data:
    """Write report.md (and report.html into html_dir); returns what was read."""
    from tfbench import report_html

    conf, data = read(conf_path)
    target = Path(html_dir or conf.html_dir)
    target.mkdir(parents=True, exist_ok=True)
    (target / "report.md").write_text(markdown(data))
    (target / "report.html").write_text(report_html.page(data))
    return data
