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
round, A then B, with nothing beside it. The rounds screen time: the points whose runs
already part (tfbench/gate/rules.py) are re-measured alone, A then B, until they have
CONFIRM_RUNS runs a side; the other points cost no more (a time run of the whole suite
takes about a minute, one of a few points about 13 s).
"""

from __future__ import annotations

import importlib.metadata
import os
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

ROUNDS = 2  # time: the screen's runs a side (tfbench/gate/rules.py)
MEMORY_ROUNDS = 2  # memory: 2 readings a side, both sides at once
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
        process = subprocess.Popen(command, cwd=conf.parent, env=env, stdout=out, stderr=out)
    return Run(process, log, run_dir / "results")


def _finish(run: Run) -> bool | None:
    """Wait for the run; False when some benchmark failed (asv's exit 2: the results are
    saved, the failures are readings of that side); None when it selected no benchmark."""
    code = run.process.wait()
    if code == 1 and "No benchmarks selected" in run.log.read_text():
        return None
    if code not in (0, 2) or not run.results.is_dir():
        tail = run.log.read_text().strip().splitlines()[-15:]
        raise GateError(f"asv run failed (exit {code}), {run.log}:\n" + "\n".join(tail))
    return code == 0


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
    then the time points the screen passes re-measured until they have CONFIRM_RUNS runs a
    side; `python` puts both sides in one interpreter (the gate's own tests, whose planted
    changes follow the commit)."""
    start = time.monotonic()
    hashes = commits(conf_path, [old, new])
    sides = dict(zip(SIDES, (old, new)))
    switches: list[float] = []
    dirs: dict[str, list[Path]] = {s: [] for s in SIDES}
    unselected: set[str] = set()  # kinds of benchmark --bench selects none of
    ensure_machine(machine)
    pythons = {s: python or release_python(t, flavour, env_root, say) for s, t in sides.items()}

    def run_batch(kind: str, batch: list[str], run: str, label: str, selected: str | None) -> None:
        """One asv run of `kind` for each side of the batch, started together, into
        work/<side><run>-<kind>."""
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
                run_batch("time", [s], str(r), f"round {r}/{rounds}", bench)
    if not dirs["A"]:
        raise NothingSelected(f"--bench {bench!r} selects no benchmark of the suite")

    def read() -> tuple[readings.Side, readings.Side]:
        before, after = (readings.read_side(dirs[s], machine, hashes[t]) for s, t in sides.items())
        return before, after

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
    benchmarks = dict(Benchmarks.load(load_config(dirs["A"][0].parent / "asv.conf.json")))
    return Measured(benchmarks, before, after, time.monotonic() - start, switches)
