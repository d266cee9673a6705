"""asv's results for the release commits, machine by machine, read with asv's own loaders."""

from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from asv import util
from asv.benchmarks import Benchmarks
from asv.commands.compare import _isna
from asv.config import Config
from asv.results import Results

from tfbench import grammar, keptfiles
from tfbench.gate import readings
from tfbench.history import pythons, releases, repo


@dataclass
class MachineResults:
    machine: str
    releases: list[str] = field(default_factory=list)  # tags with results, oldest first
    # (benchmark, param values, tag) -> (value, stats, samples); value None = failed, nan = skipped
    values: dict[tuple[str, tuple[str, ...], str], tuple[Any, Any, Any]] = field(
        default_factory=dict
    )
    # (Costs class, probe key, tag) -> why the probe has no figures there (a skip, an error)
    reasons: dict[tuple[str, str, str], str] = field(default_factory=dict)
    # tag -> every reading of the release (asv samples, probe repeats), for the gate's rules
    sides: dict[str, readings.Side] = field(default_factory=dict)
    # another CPython than the history's -> its (benchmark, param values, tag) -> value
    pythons: dict[str, dict[tuple[str, tuple[str, ...], str], Any]] = field(default_factory=dict)
    cpu: str | None = None  # asv's record's `cpu` (tfbench.cpu.id_in: its id, where it has one)

    def value(
        self, benchmark: str, params: tuple[str, ...], tag: str, python: str | None = None
    ) -> float | None:
        """A point's value on a release: the history's Python's, or `python`'s."""
        if python is None or python == pythons.DEFAULT:
            got = self.values.get((benchmark, params, tag), (math.nan,))[0]
        else:
            got = self.pythons.get(python, {}).get((benchmark, params, tag), math.nan)
        return None if _isna(got) else got


@dataclass
class Data:
    benchmarks: dict[str, dict]
    machines: dict[str, MachineResults]
    problems: list[str]  # results files that could not be read, and why
    # machine.json -> the results files read (what `tfbench publish` gives asv)
    files: dict[Path, list[Path]] = field(default_factory=dict)
    results_dir: Path | None = None


def _reasons(kept: keptfiles.probes.Probes, tag: str) -> dict[tuple[str, str, str], str]:
    """Why a probe point has no figures on this release: the first repeat's status and
    error, where no repeat measured (a pattern that fails there, a device missing)."""
    found = {}
    for costs, points in kept.items():
        for key, repeats in points.items():
            failed = [r for r in repeats if r.get("status") not in ("ok", "over_budget")]
            if failed and len(failed) == len(repeats):
                found[(costs, key, tag)] = f"{failed[0].get('status')}: {failed[0].get('error')}"
    return found


# Results come from other machines too: untrusted input. Names go into pages and into shell
# commands the report suggests, so only these forms are read; anything else is a problem.
MACHINE_NAME = grammar.MACHINE
BENCHMARK_NAME = grammar.DOTTED
PARAM_VALUE = grammar.LITERAL  # asv's repr of a str, int, float, None


# What asv's pages show of an entry besides its name and params: a pretty name and a unit
# they build into HTML as they are (refused unless plain), the kind, and the code they show
# as an HTML tooltip (escaped where the site is built: site._readable_copy).
PRETTY_NAME = re.compile(r"[A-Za-z0-9_ .,:()+-]{1,200}")
UNIT = re.compile(r"[A-Za-z0-9 ()/,.%-]{1,40}")
TYPES = {"time", "timeraw", "peakmemory", "memory", "track"}
CODE_LIMIT = 1 << 16  # characters: a benchmark's source, as asv keeps it
DATE_LIMIT = 10**14  # milliseconds: asv's dates (of the commit) stop short of year 5000


def unsafe_benchmark(name: str, bench: dict) -> str | None:
    """Why a benchmark's entry cannot be shown, or None: its name, params and param names,
    and every other field asv's pages show."""
    if not BENCHMARK_NAME.fullmatch(name):
        return f"benchmark name {name!r} is not dotted identifiers"
    for values in bench.get("params") or []:
        for value in values:
            if not isinstance(value, str) or not PARAM_VALUE.fullmatch(value):
                return f"benchmark {name} has a param value {value!r} that is no plain literal"
    for param in bench.get("param_names") or []:
        if not isinstance(param, str) or not param.isidentifier():
            return f"benchmark {name} has a param name {param!r} that is no identifier"
    pretty = bench.get("pretty_name")
    if pretty is not None and not (isinstance(pretty, str) and PRETTY_NAME.fullmatch(pretty)):
        return f"benchmark {name} has a pretty_name {_cut(pretty)} that is no plain text"
    unit = bench.get("unit")
    if unit is not None and not (isinstance(unit, str) and UNIT.fullmatch(unit)):
        return f"benchmark {name} has a unit {_cut(unit)} that is no plain text"
    if bench.get("type") not in TYPES:
        return f"benchmark {name} has a type {_cut(bench.get('type'))} asv does not know"
    code = bench.get("code", "")
    if not isinstance(code, str) or len(code) > CODE_LIMIT:
        return f"benchmark {name} has a code that is no text of at most {CODE_LIMIT} characters"
    return None


def _cut(value: Any) -> str:
    """A refused value as one short line."""
    shown = repr(value)
    return shown if len(shown) <= 60 else shown[:57] + "..."


def machine_name(machine_json: Path) -> str:
    """The machine's name: machine.json's (tfbench.keptfiles: every field of its form, the
    name its directory's). KeptFileError otherwise: the directory is skipped by the report
    and left out of the site alike."""
    try:
        return keptfiles.machine.read(machine_json)["machine"]
    except keptfiles.KeptFileError as e:
        raise keptfiles.KeptFileError(machine_json, f"{e.why}: its results are skipped") from None


Readable = dict[Path, tuple[str, list[tuple[Path, Results]]]]


def readable_files(results_dir: Path) -> tuple[Readable, list[str]]:
    """machine.json -> (the machine's name, its results files that asv and the report can
    both read, loaded), and the problems: the one rule for `tfbench report` and the site
    `tfbench publish` builds."""
    good: Readable = {}
    problems = []
    for machine_json in sorted(results_dir.glob("*/machine.json")):
        try:
            if machine_json.parent.is_symlink():
                raise keptfiles.KeptFileError(machine_json.parent, "a link: skipped")
            name = machine_name(machine_json)
        except ValueError as e:
            problems.append(str(e))
            continue
        good[machine_json] = (name, [])
        for path in sorted(machine_json.parent.glob("*.json")):
            if path.name == "machine.json":
                continue
            try:
                good[machine_json][1].append((path, checked_result(path, name)))
            except (util.UserError, ValueError, KeyError, TypeError, AttributeError, OSError) as e:
                problems.append(f"{path}: {' '.join(str(e).split())}")
    return good, problems


def checked_result(path: Path, machine: str) -> Results:
    """An asv results file, its names of the forms the report and the site show and the
    paths of its probes and packages files are made of."""
    try:
        keptfiles.regular(path, 1)  # <machine>/: asv reads it then
    except keptfiles.KeptFileError as e:
        raise ValueError(e.why) from None
    try:
        result = Results.load(str(path), machine_name=machine)
    except RecursionError:
        raise ValueError("not JSON (nested too deep)") from None
    bad = next((k for k in result.get_all_result_keys() if not BENCHMARK_NAME.fullmatch(k)), None)
    if bad is not None:
        raise ValueError(f"benchmark name {bad!r} is not dotted identifiers")
    python = result.params.get("python", pythons.DEFAULT)
    if not isinstance(python, str) or not grammar.PYTHON_PARAM.fullmatch(python):
        raise ValueError(f"python {python!r} is neither X.Y nor an interpreter's path")
    if not grammar.ENVIRONMENT.fullmatch(str(result.env_name)):
        raise ValueError(f"environment name {result.env_name!r} is no plain name")
    if not grammar.COMMIT.fullmatch(str(result.commit_hash)):
        raise ValueError(f"commit {result.commit_hash!r} is no commit hash")
    if result.date is not None and not (
        isinstance(result.date, int) and 0 <= result.date <= DATE_LIMIT
    ):
        raise ValueError(f"date {_cut(result.date)} is no time in milliseconds")
    _figures(result)
    return result


def _figures(result: Results) -> None:
    """ValueError unless every value and sample (which the gate reads) is a figure."""
    for key in result.get_all_result_keys():
        params = result.get_result_params(key)
        if not all(_value(v) for v in result.get_result_value(key, params)):
            raise ValueError(f"{key}: a value that is no figure")
        for samples in result.get_result_samples(key, params):
            if samples is not None and not (
                isinstance(samples, list) and all(_value(v) and v is not None for v in samples)
            ):
                raise ValueError(f"{key}: samples that are no figures")


def _value(value: Any) -> bool:
    """A point's value as asv keeps it: a number (NaN: skipped), or None (failed)."""
    if value is None:
        return True
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return abs(value) <= grammar.NUMBER_LIMIT or (isinstance(value, float) and math.isnan(value))


def _values(result: Results, versions: dict[str, str]):
    """(benchmark, param values, (value, stats, samples)) of a results file, for the
    benchmarks measured by the current code (other versions are not comparable)."""
    for key in result.get_all_result_keys():
        if key not in versions or result.benchmark_version.get(key) != versions[key]:
            continue
        params = result.get_result_params(key)
        rows = zip(
            itertools.product(*params),
            result.get_result_value(key, params),
            result.get_result_stats(key, params),
            result.get_result_samples(key, params),
        )
        for combo, value, stats, samples in rows:
            yield key, combo, (value, stats, samples)


def load(conf: Config) -> Data:
    """Every machine's results for the release commits; unreadable files are named and
    skipped, and so is each kept file in no kind's place (tfbench.keptfiles.misplaced)."""
    benchmarks, problems = {}, []
    try:
        keptfiles.load(Path(conf.results_dir) / "benchmarks.json")  # regular, bounded, JSON
        loaded = dict(Benchmarks.load(conf))
    except (util.UserError, ValueError, KeyError, TypeError, AttributeError, OSError) as e:
        loaded = {}
        said = " ".join(str(e).split())  # asv's say it in two lines
        problems.append(f"{Path(conf.results_dir) / 'benchmarks.json'}: {said}")
    for name, bench in loaded.items():
        why = unsafe_benchmark(name, bench)
        if why:
            problems.append(f"benchmarks.json: {why}: skipped")
        else:
            benchmarks[name] = bench
    tags = {commit: tag for tag, commit in repo.history_tags(Path(conf.repo)).items()}
    order = {f"v{v}": i for i, v in enumerate(releases.tracked_versions())}
    machines: dict[str, MachineResults] = {}
    files, unreadable = readable_files(Path(conf.results_dir))
    problems += unreadable + keptfiles.misplaced(Path(conf.results_dir))
    versions = {k: b["version"] for k, b in benchmarks.items()}
    for machine_json, (name, loaded_files) in files.items():
        found = MachineResults(name, cpu=keptfiles.machine.read(machine_json)["cpu"])
        for path, result in loaded_files:
            tag = tags.get(result.commit_hash)
            if tag is None:
                problems.append(f"{path}: commit {result.commit_hash[:8]} is no tracked release")
                continue
            python = result.params.get("python", pythons.DEFAULT)  # of its form (_result)
            if python != pythons.DEFAULT:  # another Python's results: kept apart
                other = found.pythons.setdefault(python, {})
                other.update({(k, c, tag): v[0] for k, c, v in _values(result, versions)})
                continue
            found.values.update({(k, c, tag): v for k, c, v in _values(result, versions)})
            kept = keptfiles.probes.beside(
                Path(conf.results_dir), name, result.commit_hash, result.env_name, problems
            )
            found.reasons.update(_reasons(kept, tag))
            side = found.sides.setdefault(tag, readings.Side())
            readings.add_result(side, result, kept, versions)
            if tag not in found.releases:
                found.releases.append(tag)
        found.releases.sort(key=lambda t: order.get(t, len(order)))
        machines[found.machine] = found
    readable = {m: [path for path, _ in paths] for m, (_, paths) in files.items()}
    return Data(benchmarks, machines, problems, readable, Path(conf.results_dir))
