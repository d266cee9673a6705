"""The gate through asv: each side is a release's environment (made from its lock, cached:
tfbench.history.envs) posed to asv as an existing environment with the release's commit
(`--set-commit-hash`); every asv run writes into a results directory of its own under the
gate's work directory, so the same tag on both sides (the A/A check) needs no special case
and nothing lands in the project's results.

`run_gate` is the whole command: check the request, measure (tfbench.gate.session),
compare (tfbench.gate.rules), keep a whole-suite run for the report (tfbench.gate.kept).
"""

from __future__ import annotations

import ast
import copy
import importlib.metadata
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from asv.config import Config

from tfbench import cpu, keptfiles, probes, whole
from tfbench.gate import calibration, kept, readings, rules, shards
from tfbench.gate.readings import Point, Side
from tfbench.gate.session import SIDES, Again, Measured, Say, Session
from tfbench.history import envs, pythons, repo
from tfbench.history.asvconf import derived_config
from tfbench.measure.spawn import Spawned
from tfbench.pairs import timing
from tfbench.pairs.verdict import Timed
from tfbench.paths import ROOT
from tfbench.probes import GridPoint

SCRATCH = ".tfbench-gate-"  # a gate's runs until it is done
PROBE_AGAIN_TIMEOUT = 1800  # seconds: as a family's setup_cache (benchmarks/loops.py)


class GateError(RuntimeError):
    """A side could not be measured: its environment or an asv run failed."""


class BadRequest(ValueError):
    """A tag the history does not have."""


@dataclass(frozen=True)
class Request:
    """What `tfbench gate` was asked, checked by the command line."""

    conf_path: Path
    conf: Config  # loaded once, its paths absolute
    old: str  # tags, e.g. v2.21.0
    new: str
    machine: str
    bench: str | None = None
    flavour: str = "cpu"
    env_root: Path | None = None
    python_version: str = pythons.DEFAULT  # CPython X.Y of both sides' environments
    python: Path | None = None  # one interpreter for both sides (the gate's own tests)
    plant: float = 0.0  # the new side's steps do this share more work (calibration): not kept
    reader: timing.Reader = timing.Reader()  # how the time reader reads
    shard: tuple[int, int] | None = None  # I of N: `bench` is its share, its readings kept
    units: tuple[shards.Unit, ...] = ()  # the shard's share

    @property
    def work(self) -> Path:
        return self.conf_path.resolve().parent / ".asv" / "gate" / f"{self.old}-{self.new}"


@dataclass
class GateResult:
    measured: Measured
    rows: list[rules.Change]
    kept: Path | None  # where a whole-suite run was kept for the report


def commits(conf: Config, tags: list[str]) -> dict[str, str]:
    """Each tag's commit in the release history; BadRequest naming the tags there."""
    known = repo.history_tags(Path(conf.repo))
    unknown = [t for t in tags if t not in known]
    if unknown:
        raise BadRequest(
            f"no release tag {', '.join(unknown)} in the history; there: {', '.join(known)}"
        )
    return {t: known[t] for t in tags}


def run_gate(request: Request, say: Say) -> GateResult:
    """Measure both releases (BadRequest, session.NothingSelected, GateError), compare them,
    and keep a whole-suite run (no --bench) where the report finds it. The runs go to a
    scratch folder that takes the place of the previous gate's runs once the gate is done:
    a gate stopped midway leaves those as they were (its scratch goes with the next gate)."""
    hashes = commits(request.conf, [request.old, request.new])
    request.work.parent.mkdir(parents=True, exist_ok=True)
    whole.sweep(SCRATCH, request.work.parent)  # a killed gate's
    with whole.temporary(SCRATCH, request.work.parent) as staged:
        done = _gate(request, hashes, say, staged)
        whole.swap(staged, request.work)  # the previous runs now in `staged`
    return done


def _gate(request: Request, hashes: dict[str, str], say: Say, work: Path) -> GateResult:
    """run_gate's measurement and its kept files, the runs in `work`."""
    backend = AsvBackend(request, hashes, say, work)
    session = Session(backend, request.bench, say, backend.tags)
    measured = session.measure()
    if measured.timed:
        timing.record(measured.timed, request.reader, request.plant, work / "time.json")
    here = cpu.identity()
    read = dict.fromkeys(measured.timed, here["id"])
    rows, differing = kept.conclude(
        measured.benchmarks, measured.old, measured.new, measured.timed, read
    )
    pair, results = (request.old, request.new), Path(request.conf.results_dir)
    onednn = dict(backend.onednn)
    read_on = {"cpus": {here["id"]: here}, "onednn": {here["id"]: onednn}}
    where = None
    if request.shard:
        where = shards.write(
            results, request.machine, pair, request.shard, request.units, measured, read_on,
            request.plant, request.reader,
        )  # fmt: skip
    elif not request.bench:
        calibration.keep(
            results, pair, request.plant, rows, measured.timed, read, {here["id"]: here},
            measured.seconds,
        )  # fmt: skip
        if not request.plant:
            summary = timing.summary(measured.timed, request.reader, read)
            where = kept.write(results, request.machine, pair, summary, rows, differing, read_on)
    return GateResult(measured, rows, where)


def release_python(
    tag: str, flavour: str, root: Path | None, say: Say, python: str = pythons.DEFAULT
) -> Path:
    """The release's environment (of CPython `python`), with the asv runner this asv needs."""
    root = root or envs.default_root()
    env = envs.ReleaseEnv(tag.removeprefix("v"), flavour, root, python)
    try:
        made, _ = envs.ensure(env, lambda: say(f"{tag}: creating its environment (uv) ..."))
        runner = f"asv_runner=={importlib.metadata.version('asv_runner')}"
        probe = subprocess.run([made, "-c", "import asv_runner"], capture_output=True)
        if probe.returncode:
            say(f"{tag}: adding {runner} to its environment ...")
            envs.uv_install(made, runner)
    except envs.EnvError as e:
        raise GateError(f"{tag}: its environment cannot be made: {e}") from e
    return made


class OtherCpu(BadRequest):
    """A machine whose kept figures were read on another CPU than this one."""


def check_cpu(machine: str, results_dir: Path) -> None:
    """OtherCpu where the machine's kept record (RESULTS/<machine>/machine.json) names
    another CPU than this one, or none: one machine name is one CPU, and its time figures
    are never read beside another's."""
    here = cpu.identity()
    kept = results_dir / machine / "machine.json"
    if kept.exists() or kept.is_symlink():
        try:
            named = keptfiles.machine.read(kept)["cpu"]
        except keptfiles.KeptFileError as e:
            raise OtherCpu(f"{e}: the CPU it was read on cannot be told") from None
        if cpu.id_in(named) != here["id"]:
            raise OtherCpu(
                f"{results_dir / machine}/ was read on {cpu.named(named)}; this machine is "
                f"{cpu.label(here)}: its figures would land beside another CPU's. Measure "
                f"into a machine of its own (--machine {machine}-{here['id']}); a release "
                "read there joins that history by `tfbench results chain` (docs/history.md)"
            )


def ensure_machine(machine: str, results_dir: Path) -> None:
    """asv's record of this machine under `machine` (asv run asks for one otherwise), its
    `cpu` this CPU's identity (tfbench.cpu); the rest of one already recorded is kept as it
    is, a new one gets asv's defaults for this host. OtherCpu (check_cpu) first."""
    from asv import util
    from asv.machine import Machine, MachineCollection

    check_cpu(machine, results_dir)
    try:
        record = MachineCollection.load(machine)
    except util.UserError:  # saved as asv's Machine.load would, without its error message
        record = {**Machine.get_defaults(), "machine": machine}
    MachineCollection.save(machine, {**record, "cpu": cpu.asv_cpu()})


@dataclass
class Started:
    """One asv run of one side, started."""

    process: Spawned
    log: Path
    results: Path


class AsvBackend:
    """The session's backend (tfbench.gate.session.Backend): a run is the results
    directory of one asv run."""

    def __init__(self, request: Request, hashes: dict[str, str], say: Say, work: Path):
        self.request, self.say, self.work = request, say, work
        self.tags = dict(zip(SIDES, (request.old, request.new)))
        self.commits = {s: hashes[t] for s, t in self.tags.items()}
        self.pythons: dict[str, Path] = {}
        self.onednn: dict[str, str | None] = {}  # side -> the ISA its oneDNN detects
        self.first: Path | None = None  # results of the first run: asv's benchmarks.json
        ensure_machine(request.machine, Path(request.conf.results_dir))

    def environments(self) -> list[float]:
        seconds = []
        for s, tag in self.tags.items():
            began = time.monotonic()
            r = self.request
            self.pythons[s] = r.python or release_python(
                tag, r.flavour, r.env_root, self.say, r.python_version
            )
            seconds.append(time.monotonic() - began)
        # each distinct environment's TensorFlow asked once, side by side: an import each
        began = time.monotonic()
        distinct = sorted({str(p) for p in self.pythons.values()})
        with ThreadPoolExecutor(len(distinct)) as pool:
            isa = dict(zip(distinct, pool.map(cpu.onednn_isa, distinct)))
        self.onednn = {s: isa[str(p)] for s, p in self.pythons.items()}
        asked = time.monotonic() - began
        return [t + asked for t in seconds]

    def run(
        self, kind: str, sides: Sequence[str], run_id: str, selection: str
    ) -> dict[str, Path | None]:
        started = {}
        for s in sides:
            started[s] = one = self._start(s, self.work / f"{s}{run_id}-{kind}", selection)
            # asv rewrites ~/.asv-machine.json as it starts: the next run waits for this
            # one to have read it (its results then hold machine.json)
            while one.process.poll() is None and not (one.results / self.request.machine).is_dir():
                time.sleep(0.2)
        for one in started.values():  # every run ends before a failed one is reported
            one.process.wait()
        done = {}
        for s, one in started.items():
            clean = _finish(one)
            done[s] = None if clean is None else one.results
            if clean is False:
                log = self.request.work / one.log.relative_to(self.work)  # once it is done
                self.say(f"{kind}: {s} = {self.tags[s]}: some benchmarks failed: {log}")
            if clean is not None and self.first is None:
                self.first = one.results
        return done

    def read(self, side: str, runs: list[Path]) -> Side:
        return readings.read_side(runs, self.request.machine, self.commits[side])

    def benchmarks(self) -> dict[str, dict]:
        from asv.benchmarks import Benchmarks

        conf = copy.copy(self.request.conf)
        conf.results_dir = str(self.first)
        return dict(Benchmarks.load(conf))

    def times(self, points: list[Point]) -> dict[Point, Timed]:
        """The time reader over the points: each side's time server in its environment."""
        if not points:
            return {}
        r, suite = self.request, Path(self.request.conf.benchmark_dir)
        old, new = (
            timing.SideServer(
                str(self.pythons[s]),
                suite,
                self.work / f"time-{s}.log",
                {"ASV_COMMIT": self.commits[s]},  # as asv gives its benchmarks
            )
            for s in SIDES
        )
        try:
            return timing.measure(points, old, new, r.reader, (0.0, r.plant), self.say)
        finally:
            old.close()
            new.close()

    def _start(self, side: str, run_dir: Path, selection: str) -> Started:
        """Start one asv run into `run_dir`'s own results. asv passes its own variables (the
        configuration's directory, the environment's name) to the benchmarks of a
        virtualenv but not of an existing environment: they are set here, so the probe
        keeps its repeats beside these results (tfbench.probes) under the name asv gives
        the results."""
        from asv.environment import get_env_name

        r, python, commit = self.request, self.pythons[side], self.commits[side]
        conf = derived_config(
            r.conf_path, run_dir, results_dir=run_dir / "results", html_dir=run_dir / "html"
        )
        command = [
            sys.executable, "-m", "asv", "run", "--environment", f"existing:{python}",
            "--set-commit-hash", commit, "--record-samples", "--machine", r.machine,
            "--show-stderr", "--bench", selection,
        ]  # fmt: skip
        env = dict(
            os.environ,
            ASV_COMMIT=commit,
            ASV_CONF_DIR=str(conf.parent),
            ASV_ENV_NAME=get_env_name("existing", str(python).replace(os.path.sep, "_"), {}, {}),
            TFBENCH_WHEELS=r.flavour,
            TFBENCH_MACHINE=r.machine,
            # its probes measure only the points asked for, once a round
            **{probes.SELECTION: selection, probes.REPEATS_VAR: "1"},
        )
        log = run_dir / "asv.log"
        with log.open("w") as out:  # SIGTERM when the gate ends: asv takes its forkserver down
            process = Spawned(
                command,
                cwd=conf.parent,
                env=env,
                stdout=out,
                stderr=out,
                parent_signal=signal.SIGTERM,
                own_tmp=True,
            )
        return Started(process, log, run_dir / "results")

    def probe_again(self, points: list[Point], repeats: int) -> dict[str, Again]:
        """Each side's probe (tfbench.gate.confirm: one point's readings, not its family's
        grid), both sides at once as in the memory rounds."""
        spec = {
            "suite": str(self.request.conf.benchmark_dir),
            "repeats": repeats,
            "points": [[costs, [ast.literal_eval(v) for v in combo]] for costs, combo in points],
        }
        project = str(ROOT)
        path = os.pathsep.join(filter(None, (project, os.environ.get("PYTHONPATH"))))
        started = {}
        for s in SIDES:
            run_dir = self.work / f"{s}-probe-again"
            run_dir.mkdir(parents=True, exist_ok=True)
            (run_dir / "spec.json").write_text(json.dumps(spec))
            spec_path, out = run_dir / "spec.json", run_dir / "out.json"
            command = [
                str(self.pythons[s]),
                "-m",
                "tfbench.gate.confirm",
                str(spec_path),
                str(out),
            ]
            env = dict(os.environ, ASV_COMMIT=self.commits[s], PYTHONPATH=path)
            with (run_dir / "log").open("w") as log:
                process = Spawned(
                    command,
                    env=env,
                    stdout=log,
                    stderr=log,
                    timeout_s=PROBE_AGAIN_TIMEOUT,
                    own_tmp=True,
                )
            started[s] = (run_dir, process)
        codes: dict[str, int | str] = {}
        for s, (_, process) in started.items():
            code = process.wait()
            codes[s] = process.stopped or code
        again = {}
        for s, (run_dir, _) in started.items():
            out = run_dir / "out.json"
            if codes[s] != 0 or not out.is_file():
                raise failed("measuring again", codes[s], run_dir / "log")
            found = json.loads(out.read_text())
            again[s] = {
                (costs, combo): found.get(costs, {}).get(GridPoint(costs, combo).key, [])
                for costs, combo in points
            }
        return again


def _finish(run: Started) -> bool | None:
    """The ended run: False when some benchmark failed (asv's exit 2: the results are
    saved, the failures are readings of that side); None when it selected no benchmark."""
    code = run.process.wait()
    if code == 1 and "No benchmarks selected" in run.log.read_text():
        return None
    if code not in (0, 2) or not run.results.is_dir():
        raise failed("asv run", code, run.log)
    return code == 0


def failed(what: str, code: int | str, log: Path) -> GateError:
    """The error of a run that failed, with the last lines of its log."""
    tail = log.read_text(errors="replace").strip().splitlines()[-15:]
    return GateError(f"{what} failed (exit {code}), {log}:\n" + "\n".join(tail))
