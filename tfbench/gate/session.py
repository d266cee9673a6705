"""Two releases measured in one session on this machine, interleaved, by asv.

Each side is the release's environment (made from its lock, cached: tfbench.history.envs)
posed to asv as an existing environment with the release's commit (`--set-commit-hash`);
every asv run writes into a results directory of its own, so the same tag on both sides
(the A/A check) needs no special case and nothing lands in the project's results.

A round measures memory, then time. Memory (`peakmem_`, the probe's `track_`; the probe
measures each point once a round, TFBENCH_REPEATS=1) is read in the first MEMORY_ROUNDS
rounds, both sides at once: a reading is one process's own RSS, which a neighbour does not
change, and both sides then see the same machine at the same moment (a leaking pattern's
peak drifts by 20% over a session). Time (`time_`, every sample recorded) is read in every
round, A then B, with nothing beside it.

The rounds screen: the memory points whose readings part by the rules
(tfbench/gate/rules.py) are read again, both sides at once, until they have
CONFIRM_READINGS a side (a probe point by the side's probe alone, tfbench/gate/confirm.py,
not its family's whole grid), and the time points whose runs already part are re-measured
alone, A then B, until they have CONFIRM_RUNS runs a side. The other points cost no more:
a memory run of the whole suite takes about 5 minutes, a time run about a minute, a probe
reading of one point a few seconds, a time run of a few points about 15 s.
"""

from __future__ import annotations

import ast
import importlib.metadata
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from asv.benchmarks import Benchmarks

from tfbench.gate import readings, rules
from tfbench.history import envs, repo
from tfbench.history.asvconf import derived_config, load_config
from tfbench.measure import child

ROUNDS = 2  # time: the screen's runs a side (tfbench/gate/rules.py)
MEMORY_ROUNDS = 1  # memory: one reading a side, both sides at once; points apart get more
RERUNS = 2  # at most, a side, for runs that read the whole suite slow (rules.disturbed)
PROBE_AGAIN_TIMEOUT = 1800  # seconds: as a family's setup_cache (benchmarks/loops.py)
SIDES = ("A", "B")


class GateError(RuntimeError):
    """A side could not be measured: its environment or an asv run failed."""


class NothingSelected(ValueError):
    """--bench selects no benchmark of the suite."""


@dataclass
class Measured:
    benchmarks: dict[str, dict]
    before: readings.Side
    after: readings.Side
    seconds: float
    switches: list[float]  # seconds to have a side's (existing) environment ready, per run


def commits(conf_path: str, tags: list[str]) -> dict[str, str]:
    """Each tag's commit in the release history; ValueError naming the tags there."""
    known = repo.history_tags(Path(load_config(conf_path).repo))
    unknown = [t for t in tags if t not in known]
    if unknown:
        raise ValueError(
            f"no release tag {', '.join(unknown)} in the history; there: {', '.join(known)}"
        )
    return {t: known[t] for t in tags}


def release_python(tag: str, flavour: str, root: Path | None, say: Callable[[str], None]) -> Path:
    """The release's environment, with the asv runner this asv needs."""
    env = envs.ReleaseEnv(tag.removeprefix("v"), flavour, root or envs.default_root())
    try:
        python, _ = envs.ensure(env, lambda: say(f"{tag}: creating its environment (uv) ..."))
        runner = f"asv_runner=={importlib.metadata.version('asv_runner')}"
        probe = subprocess.run([python, "-c", "import asv_runner"], capture_output=True)
        if probe.returncode:
            say(f"{tag}: adding {runner} to its environment ...")
            envs.uv_install(python, runner)
    except envs.EnvError as e:
        raise GateError(f"{tag}: its environment cannot be made: {e}") from e
    return python


def selection(kind: str, bench: str | None) -> str:
    """asv's --bench for one kind of run: its benchmarks (time_ or the rest) among those the
    user's regex selects (asv matches `name(params)` with re.search; lookaheads intersect)."""
    kind_re = r"(?=[^(]*\.time_)" if kind == "time" else r"(?![^(]*\.time_)"
    return f"^{kind_re}" + (f"(?=.*?(?:{bench}))" if bench else "")


@dataclass
class Run:
    """One asv run of one side, started."""

    process: subprocess.Popen
    log: Path
    results: Path


def _start(
    run_dir: Path,
    conf_path: str,
    python: Path,
    commit: str,
    bench: str,
    machine: str,
    flavour: str,
) -> Run:
    """Start one asv run into `run_dir`'s own results. asv passes its own variables (the
    configuration's directory, the environment's name) to the benchmarks of a virtualenv but
    not of an existing environment: they are set here, so the probe keeps its repeats beside
    these results (benchmarks/common.keep_outcomes) under the name asv gives the results."""
    from asv.environment import get_env_name

    conf = derived_config(
        conf_path, run_dir, results_dir=run_dir / "results", html_dir=run_dir / "html"
    )
    command = [
        sys.executable, "-m", "asv", "run", "--environment", f"existing:{python}",
        "--set-commit-hash", commit, "--record-samples", "--machine", machine,
        "--show-stderr", "--bench", bench,
    ]  # fmt: skip
    env = dict(
        os.environ,
        ASV_COMMIT=commit,
        ASV_CONF_DIR=str(conf.parent),
        ASV_ENV_NAME=get_env_name("existing", str(python).replace(os.path.sep, "_"), {}, {}),
        TFBENCH_WHEELS=flavour,
        TFBENCH_REPEATS="1",
    )
    log = run_dir / "asv.log"
    with log.open("w") as out:
        process = subprocess.Popen(
            command, cwd=conf.parent, env=env, stdout=out, stderr=out, preexec_fn=_ends_with_gate()
        )
    return Run(process, log, run_dir / "results")


def _finish(run: Run) -> bool | None:
    """Wait for the run; False when some benchmark failed (asv's exit 2: the results are
    saved, the failures are readings of that side); None when it selected no benchmark."""
    code = run.process.wait()
    if code == 1 and "No benchmarks selected" in run.log.read_text():
        return None
    if code not in (0, 2) or not run.results.is_dir():
        raise _failed("asv run", code, run.log)
    return code == 0


def _failed(what: str, code: int | str, log: Path) -> GateError:
    """The error of a run that failed, with the last lines of its log."""
    tail = log.read_text(errors="replace").strip().splitlines()[-15:]
    return GateError(f"{what} failed (exit {code}), {log}:\n" + "\n".join(tail))


def _ends_with_gate() -> Callable[[], object]:
    """For Popen's preexec_fn: the run gets SIGTERM when the gate dies (asv then takes its
    forkserver down, benchmarks/common.py), so a killed gate leaves no measurement behind."""
    gate = os.getpid()
    return lambda: child.die_with_parent(signal.SIGTERM, gate)


def _probed(key: str) -> bool:
    """Whether asv's benchmark `key` reports a figure of the probe (benchmarks/common)."""
    return key.rpartition(".")[2] in readings.PROBE_FIGURES


def _probe_again(
    conf_path: str,
    points: list[readings.Point],
    repeats: int,
    sides: dict[str, tuple[Path, str]],
    work: Path,
) -> dict[str, dict[readings.Point, list[dict]]]:
    """Probe grid points (module.Class, asv's param values) measured `repeats` more times by
    each side's probe (tfbench/gate/confirm.py: one point's readings, not its family's
    grid), both sides at once as in the memory rounds: side -> point -> kept repeats."""
    spec = {
        "suite": str(load_config(conf_path).benchmark_dir),
        "repeats": repeats,
        "points": [[costs, [ast.literal_eval(v) for v in combo]] for costs, combo in points],
    }
    project = str(Path(__file__).resolve().parents[2])
    path = os.pathsep.join(filter(None, (project, os.environ.get("PYTHONPATH"))))
    started = {}
    for s, (python, commit) in sides.items():
        run_dir = work / f"{s}-probe-again"
        run_dir.mkdir(parents=True, exist_ok=True)
        (run_dir / "spec.json").write_text(json.dumps(spec))
        command = [
            python,
            "-m",
            "tfbench.gate.confirm",
            run_dir / "spec.json",
            run_dir / "out.json",
        ]
        env = dict(os.environ, ASV_COMMIT=commit, PYTHONPATH=path)
        with (run_dir / "log").open("w") as log:
            started[s] = (
                run_dir,
                subprocess.Popen(
                    command, env=env, stdout=log, stderr=log, preexec_fn=_ends_with_gate()
                ),
            )
    codes = {}
    for s, (_, process) in started.items():
        try:
            codes[s] = process.wait(timeout=PROBE_AGAIN_TIMEOUT)
        except subprocess.TimeoutExpired:
            process.kill()
            codes[s] = f"killed after {PROBE_AGAIN_TIMEOUT} s"
    again = {}
    for s, (run_dir, _) in started.items():
        out = run_dir / "out.json"
        if codes[s] != 0 or not out.is_file():
            raise _failed("measuring again", codes[s], run_dir / "log")
        kept = json.loads(out.read_text())
        again[s] = {
            (costs, combo): kept.get(costs, {}).get(readings.probe_key(combo), [])
            for costs, combo in points
        }
    return again


def ensure_machine(machine: str) -> None:
    """asv's record of this machine under `machine` (asv run asks for one otherwise): one
    already recorded is kept as it is; a new one gets asv's defaults for this host."""
    from asv import util
    from asv.machine import Machine, MachineCollection

    try:
        MachineCollection.load(machine)
    except util.UserError:
        Machine.load(machine_name=machine, **{**Machine.get_defaults(), "machine": machine})


def measure(
    conf_path: str,
    old: str,
    new: str,
    work: Path,
    machine: str,
    bench: str | None = None,
    rounds: int = ROUNDS,
    flavour: str = "cpu",
    env_root: Path | None = None,
    python: Path | None = None,
    say: Callable[[str], None] = print,
) -> Measured:
    """Both tags measured in `rounds` rounds (memory in the first MEMORY_ROUNDS of them),
    then the memory points read apart re-measured until they have CONFIRM_READINGS a side,
    and the time points the screen passes until they have CONFIRM_RUNS runs a side (a
    rounds' time run that read the whole suite slow measured again first, RERUNS at most);
    `python` puts both sides in one interpreter (the gate's own tests, whose planted changes
    follow the commit)."""
    start = time.monotonic()
    hashes = commits(conf_path, [old, new])
    sides = dict(zip(SIDES, (old, new)))
    switches: list[float] = []
    dirs: dict[str, list[Path]] = {s: [] for s in SIDES}
    screen: dict[str, list[Path]] = {s: [] for s in SIDES}  # the rounds' time runs
    unselected: set[str] = set()  # kinds of benchmark --bench selects none of
    ensure_machine(machine)
    pythons = {s: python or release_python(t, flavour, env_root, say) for s, t in sides.items()}

    def run_batch(
        kind: str, batch: list[str], run: str, label: str, selected: str | None
    ) -> dict[str, Path]:
        """One asv run of `kind` for each side of the batch, started together, into
        work/<side><run>-<kind>: side -> its results, for the sides it measured."""
        began = time.monotonic()
        started = {}
        for s in batch:
            started[s] = one = _start(
                work / f"{s}{run}-{kind}",
                conf_path,
                pythons[s],
                hashes[sides[s]],
                selection(kind, selected),
                machine,
                flavour,
            )
            # asv rewrites ~/.asv-machine.json as it starts: the next run waits for this
            # one to have read it (its results then hold machine.json)
            while one.process.poll() is None and not (one.results / machine).is_dir():
                time.sleep(0.2)
        for one in started.values():  # every run ends before a failed one is reported
            one.process.wait()
        clean = {s: _finish(one) for s, one in started.items()}
        for s, one in started.items():
            if clean[s] is None:
                unselected.add(kind)
                continue
            dirs[s].append(one.results)
            failed = "" if clean[s] else f" (some benchmarks failed: {one.log})"
            say(
                f"{label}, {kind}: {s} = {sides[s]} measured in "
                f"{time.monotonic() - began:.0f} s{failed}"
            )
        return {s: one.results for s, one in started.items() if clean[s] is not None}

    for r in range(1, rounds + 1):
        if r > 1:  # the first round may create the environments
            for s, tag in sides.items():
                began = time.monotonic()
                pythons[s] = python or release_python(tag, flavour, env_root, say)
                switches.append(time.monotonic() - began)
        # memory: both sides at once; time: one side after the other, nothing beside it
        if r <= MEMORY_ROUNDS and "memory" not in unselected:
            run_batch("memory", list(SIDES), str(r), f"round {r}/{rounds}", bench)
        for s in SIDES:
            if "time" not in unselected:
                label = f"round {r}/{rounds}"
                screen[s] += run_batch("time", [s], str(r), label, bench).values()
    if not dirs["A"]:
        raise NothingSelected(f"--bench {bench!r} selects no benchmark of the suite")
    for s, tag in sides.items():  # a run that read the whole suite slow is measured again
        for attempt in range(1, RERUNS + 1):
            runs = [readings.read_side([d], machine, hashes[tag]) for d in screen[s]]
            slow = [screen[s][i] for i in rules.disturbed(runs)]
            if not slow:
                break
            say(f"time: {s} = {tag}: {', '.join(d.parent.name for d in slow)} read slow")
            for d in slow:
                screen[s].remove(d)
                dirs[s].remove(d)
            for n in range(len(slow)):
                label = f"re-run {attempt}"
                screen[s] += run_batch("time", [s], f"r{attempt}.{n + 1}", label, bench).values()

    again: dict[str, dict[readings.Point, list[dict]]] = {s: {} for s in SIDES}

    def read() -> tuple[readings.Side, readings.Side]:
        before, after = (readings.read_side(dirs[s], machine, hashes[t]) for s, t in sides.items())
        for s, side in zip(SIDES, (before, after)):
            readings.add_again(side, again[s])
        return before, after

    before, after = read()
    benchmarks = dict(Benchmarks.load(load_config(dirs["A"][0].parent / "asv.conf.json")))
    memory = rules.memory_screened(benchmarks, before, after)
    extra = rules.CONFIRM_READINGS - min(rounds, MEMORY_ROUNDS)
    if memory and extra > 0:
        say(f"memory: {len(memory)} point(s) read apart, re-measured {extra} more times")
        probed = sorted({(key.rpartition(".")[0], combo) for key, combo in memory if _probed(key)})
        if probed:
            began = time.monotonic()
            targets = {s: (pythons[s], hashes[t]) for s, t in sides.items()}
            again = _probe_again(conf_path, probed, extra, targets, work)
            seconds = time.monotonic() - began
            say(f"memory confirm: {len(probed)} probe point(s) measured again in {seconds:.0f} s")
        others = [rules.point_pattern(rules.point_name(p)) for p in memory if not _probed(p[0])]
        if others:  # asv's peakmem_: one process a point, cheap to run through asv again
            for c in range(1, extra + 1):
                label = f"memory confirm {c}/{extra}"
                run_batch("memory", list(SIDES), f"m{c}", label, "|".join(others))
        before, after = read()
    screened = rules.screened(before, after)
    extra = rules.CONFIRM_RUNS - rounds
    if screened and extra > 0:
        say(f"time: {len(screened)} point(s) passed the screen, re-measured {extra} more times")
        candidates = "|".join(rules.point_pattern(rules.point_name(p)) for p in screened)
        for c in range(1, extra + 1):
            for s in SIDES:
                run_batch("time", [s], f"c{c}", f"confirm {c}/{extra}", candidates)
        before, after = read()
    return Measured(benchmarks, before, after, time.monotonic() - start, switches)
