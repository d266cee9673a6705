"""Two releases measured in one session on this machine, interleaved A B A B ..., by asv.

Each round runs `asv run` once per side, in the side's release environment (made from the
release's lock, cached: tfbench.history.envs) posed as an existing environment with the
release's commit (`--set-commit-hash`), into a results directory of its own: the same tag
on both sides (the A/A check) needs no special case, and nothing lands in the project's
results. asv records time samples (--record-samples); the probe measures each point once
per round (TFBENCH_REPEATS=1), so each side has one probe reading per round.
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

from tfbench.gate import readings
from tfbench.history import envs, repo
from tfbench.history.asvconf import derived_config, load_config

ROUNDS = 3
SIDES = ("A", "B")


class GateError(RuntimeError):
    """A side could not be measured: its environment or an asv run failed."""


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


def _asv_run(
    conf: Path, python: Path, commit: str, bench: str | None, machine: str, log: Path
) -> bool:
    """One asv run into the run's own results; False when some benchmark failed (asv's exit
    2: the results are saved, the failures are readings of that side)."""
    command = [
        sys.executable, "-m", "asv", "run", "--environment", f"existing:{python}",
        "--set-commit-hash", commit, "--record-samples", "--machine", machine,
        "--show-stderr",
    ]  # fmt: skip
    if bench:
        command += ["--bench", bench]
    env = dict(os.environ, ASV_COMMIT=commit, TFBENCH_REPEATS="1")
    with log.open("w") as out:
        run = subprocess.run(command, cwd=conf.parent, env=env, stdout=out, stderr=out)
    if run.returncode not in (0, 2):
        tail = log.read_text().strip().splitlines()[-15:]
        raise GateError(f"asv run failed (exit {run.returncode}), {log}:\n" + "\n".join(tail))
    return run.returncode == 0


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
    """Both tags measured `rounds` times, interleaved; `python` puts both sides in one
    interpreter (the gate's own tests, whose planted changes follow the commit)."""
    start = time.monotonic()
    hashes = commits(conf_path, [old, new])
    sides = dict(zip(SIDES, (old, new)))
    switches, dirs = [], {s: [] for s in SIDES}
    for r in range(1, rounds + 1):
        for side, tag in sides.items():
            began = time.monotonic()
            py = python or release_python(tag, flavour, env_root, say)
            if r > 1:  # the first round may create the environments
                switches.append(time.monotonic() - began)
            run_dir = work / f"{side}{r}"
            conf = derived_config(
                conf_path, run_dir, results_dir=run_dir / "results", html_dir=run_dir / "html"
            )
            if r == 1 and side == "A":
                ensure_machine(machine)
            say(f"round {r}/{rounds}: {side} = {tag} ...")
            began = time.monotonic()
            clean = _asv_run(conf, py, hashes[tag], bench, machine, run_dir / "asv.log")
            failed = "" if clean else f" (some benchmarks failed: {run_dir / 'asv.log'})"
            say(
                f"round {r}/{rounds}: {side} = {tag} measured in "
                f"{time.monotonic() - began:.0f} s{failed}"
            )
            dirs[side].append(run_dir / "results")
    benchmarks = dict(Benchmarks.load(load_config(work / "A1" / "asv.conf.json")))
    before, after = (readings.read_side(dirs[s], machine, hashes[tag]) for s, tag in sides.items())
    return Measured(benchmarks, before, after, time.monotonic() - start, switches)
