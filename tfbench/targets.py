"""What can be measured, and measuring it: a catalog scenario or a user's file::function.

A target is a ScenarioTarget (a catalog id and its params) or a FunctionTarget (a file and
the name of a function in it); both travel to a measuring process as JSON. This is
where the instrument (tfbench.measure) meets the catalog (tfbench.scenarios): `run` turns a
target into a step inside the measuring child, `measure_forked` supervises children forked
from this process (TensorFlow imported, not started), and `measure_spawned` starts a fresh
process that does the same (`measure_isolated`: one target): every measurement runs there.
"""

from __future__ import annotations

import importlib.util
import io
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from importlib import metadata
from pathlib import Path
from typing import IO, Any

from tfbench import faults, scenarios, whole
from tfbench.measure import devices, heap, parents, record, supervisor
from tfbench.measure.child import measure_step
from tfbench.measure.record import Record
from tfbench.measure.spawn import Spawned
from tfbench.paths import IMPORTED_FROM, PACKAGE, ROOT

DEFAULT_ITERATIONS = 100  # a user's function; scenarios carry their own
# A line a measuring process prints of what it is doing: shown even where it runs quiet.
PROGRESS = "tfbench: "


@dataclass(frozen=True)
class ScenarioTarget:
    scenario: str  # a catalog id
    params: dict[str, Any] = field(default_factory=dict)  # as given: the rest are defaults

    @property
    def name(self) -> str:
        return self.scenario


@dataclass(frozen=True)
class FunctionTarget:
    file: str  # an absolute path
    function: str

    @property
    def name(self) -> str:
        return f"{self.file}::{self.function}"


@dataclass(frozen=True)
class FootprintTarget:
    """TensorFlow's own footprint: a fresh process after `import tensorflow` and one op on
    the device (tfbench.scenarios.footprint); not a step, so measured its own way."""

    params: dict[str, Any] = field(default_factory=dict)  # device, as given (default CPU)

    name = record.FOOTPRINT

    @property
    def device(self) -> str:
        return self.params.get("device", "CPU")


Step = ScenarioTarget | FunctionTarget  # a step called once per iteration
Target = Step | FootprintTarget


def to_json(target: Target) -> dict[str, Any]:
    """A target as a measuring process and a kept bisection name it (the footprint as the
    catalog id it is named by)."""
    if isinstance(target, FunctionTarget):
        return {"file": target.file, "function": target.function}
    return {"scenario": target.name, "params": dict(target.params)}


def from_json(data: dict[str, Any]) -> Target:
    if data.get("scenario") == record.FOOTPRINT:
        return FootprintTarget(dict(data.get("params", {})))
    return step_from_json(data)


def step_from_json(data: dict[str, Any]) -> Step:
    """A step as a measuring process's spec names it."""
    if "scenario" in data:
        return ScenarioTarget(data["scenario"], dict(data.get("params", {})))
    return FunctionTarget(data["file"], data["function"])


def describe(target: Target) -> Record:
    """The target's identity, with no figures yet."""
    if isinstance(target, FunctionTarget):
        return record.blank(target.name, {}, "default", tf_version())
    device = target.params.get("device", "CPU")
    return record.blank(target.name, target.params, device, tf_version())


def tf_version() -> str | None:
    if "tensorflow" in sys.modules:
        return sys.modules["tensorflow"].__version__
    for dist in ("tensorflow", "tensorflow-cpu"):
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    return None


def load_function(path: str, name: str):
    file = Path(path)
    if not file.is_file():
        raise LookupError(f"no such file: {path}")
    spec = importlib.util.spec_from_file_location(f"tfbench_user_{file.stem}", file)
    if spec is None or spec.loader is None:
        raise LookupError(f"cannot import {path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(file.parent.resolve()))
    try:
        spec.loader.exec_module(module)
    except (SyntaxError, ImportError) as e:
        raise LookupError(f"cannot import {path}: {type(e).__name__}: {e}") from e
    function = getattr(module, name, None)
    if not callable(function):
        found = sorted(
            k
            for k, v in vars(module).items()
            if callable(v)
            and not k.startswith("_")
            and getattr(v, "__module__", None) == module.__name__
        )
        raise LookupError(
            f"{path} has no function {name!r}; functions there: {', '.join(found) or 'none'}"
        )
    return function


@dataclass
class Prepared:
    """A target's step, built in the process that runs it, with how to run it."""

    step: Callable[[], Any]
    params: dict[str, Any]  # bound: the scenario's defaults filled in
    device: str
    iterations: int
    warmup: int


def prepare(target: Step, iterations: int | None = None, warmup: int | None = None) -> Prepared:
    """Build the target's step here; iterations and warm-up default to the scenario's (a
    user's function: DEFAULT_ITERATIONS, a tenth of them warm-up). Raises ParamError or
    LookupError (bad input), Unsupported (a skip), or whatever the pattern raises."""
    if isinstance(target, ScenarioTarget):
        scenario = scenarios.get(target.scenario)
        params = scenario.bind(target.params)
        step = scenario.prepare(**params)
        iterations = iterations or scenario.iterations
        warmup = scenario.warmup if warmup is None else warmup
        return Prepared(step, params, params.get("device", "CPU"), iterations, warmup)
    step = load_function(target.file, target.function)
    iterations = iterations or DEFAULT_ITERATIONS
    warmup = max(1, iterations // 10) if warmup is None else warmup
    return Prepared(step, {}, "default", iterations, warmup)


SITE_PACKAGES = re.compile(r"[^\s\"']*/lib/python\d+\.\d+/site-packages/")


def portable(text: str) -> str:
    """Paths in a message made the same on every machine: installed packages' relative to
    their site-packages, the project's files relative to the project (whichever way it was
    imported)."""
    text = SITE_PACKAGES.sub("<site-packages>/", text)
    for root in dict.fromkeys((IMPORTED_FROM, ROOT)):
        text = text.replace(f"{root}{os.sep}", "")
    return text


def warmed(name: str, make: Callable[[], Callable[[], Any]]) -> Callable[[], Any]:
    """A step made and called once (traces, caches, first allocations), as a time_ benchmark
    and the time reader take it; a pattern that fails on this release is a skip
    (Unsupported, its reason printed to stderr too), not an error."""
    try:
        step = make()
        step()
    except devices.Unsupported:
        raise
    except Exception as e:
        reason = f"{name} fails here: {failure(e)['error']}"
        print(reason, file=sys.stderr)
        raise devices.Unsupported(reason) from e
    return step


def failure(e: BaseException) -> dict[str, str]:
    """What a record says of a failure: bad input, a skip, or the pattern's own error (its
    message and traceback kept, with portable paths: records are committed)."""
    if isinstance(e, scenarios.ParamError | LookupError):
        return {"status": "bad_input", "error": str(e)}
    if isinstance(e, devices.Unsupported):
        return {"status": "skipped", "error": str(e)}
    return {
        "status": "error",
        "error": portable(f"{type(e).__name__}: {e}"),
        "traceback": portable(traceback.format_exc()),
    }


@dataclass(frozen=True)
class Limits:
    """How a measurement runs: its iterations and warm-up (None: the target's own), the
    memory budget (None: a quarter of RAM) and timeout, which interpreter (None: this one;
    another environment's), whether its process's output is shown, and whether a window
    that grew a little is confirmed by rounds (tfbench.measure.growth): a smoke reading,
    which asks whether a pattern runs and its record reads, reads none, and its verdict
    rests on the window alone, as where the clock stops the rounds."""

    iterations: int | None = None
    warmup: int | None = None
    budget_bytes: int | None = None
    timeout_s: float = 600.0
    python: str | None = None
    quiet: bool = False
    confirm: bool = True

    def to_json(self) -> dict[str, Any]:
        """What the measuring process needs of them."""
        return {
            "iterations": self.iterations,
            "warmup": self.warmup,
            "budget_bytes": self.budget_bytes,
            "timeout_s": self.timeout_s,
            "confirm": self.confirm,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Limits:
        return cls(**data)


DEFAULTS = Limits()


def run(target: Step, limits: Limits, primed: bool) -> Record:
    """Measure the target in this (child) process; every failure becomes the record's status."""
    result = describe(target)
    try:
        ready = prepare(target, limits.iterations, limits.warmup)
        if isinstance(target, ScenarioTarget):
            result.update(params=ready.params, device=ready.device)
        result.update(
            measure_step(
                ready.step,
                ready.iterations,
                ready.warmup,
                limits.budget_bytes or supervisor.default_budget_bytes(),
                result["device"],
                primed,
                limits.confirm,
            ),
            tf_version=tf_version(),
            budget_bytes=limits.budget_bytes,
        )
    except Exception as e:  # the pattern itself failed: record it, never hide it
        result.update(failure(e))
    return result


RunStep = Callable[[Step, Limits, bool], Record]  # how a step is measured in a child


def measure_forked(
    targets: list[Step], limits: Limits = DEFAULTS, workers: int = 1, runner: RunStep = run
) -> list[Record]:
    """Measure each target in a child forked from this process, `workers` at a time, by
    `runner` (a measurement; tfbench.explain's explaining run).

    Only from a process whose TensorFlow runtime has not started (importing it is fine).
    """
    if any(_uses_tensorflow(t) for t in targets):
        try:
            import tensorflow  # noqa: F401  (once here rather than in every child)
        except ImportError:
            pass  # the child reports it
    budget = limits.budget_bytes or supervisor.default_budget_bytes()
    limits = replace(limits, budget_bytes=budget)
    return supervisor.fork_each(
        targets,
        lambda t, primed: runner(t, limits, primed),
        describe,
        budget,
        limits.timeout_s,
        workers,
    )


def _uses_tensorflow(target: Step) -> bool:
    """A scenario that uses TensorFlow (an unknown one may: its child reports it); a user's
    function imports what it uses itself."""
    if not isinstance(target, ScenarioTarget):
        return False
    found = scenarios.CATALOG.get(target.scenario)
    return found is None or found.tensorflow


def _import_root(module: str) -> str:
    """The directory `module` (imported here) is imported from: `benchmarks.loops` from the
    directory holding `benchmarks/`."""
    file = Path(sys.modules[module].__file__ or module).resolve()
    return str(file.parents[module.count(".")])


def isolated_env(tmp: Path, roots: list[str], counted: bool = False) -> dict[str, str]:
    """The environment of a process that imports tfbench from its source and nothing else
    from this process's path but `roots` (another environment's packages, its TensorFlow,
    must not be shadowed by this one's), through a link made in `tmp`, and not from the
    current folder (`python -m` would put it first: a clone there would measure with its own
    instrument); every allocation through glibc's malloc and counted where `counted`
    (tfbench.measure.heap). Its temporary files go to `tmp` as well: a forked reading exits
    without Python's exit handlers, which is where TensorFlow's autograph removes the
    modules it writes."""
    source = tmp / "code"
    if not source.exists():  # a shared parent's folder is made once (tfbench.measure.parents)
        source.mkdir()
        (source / "tfbench").symlink_to(PACKAGE)
    return dict(
        os.environ,
        TF_CPP_MIN_LOG_LEVEL=os.environ.get("TF_CPP_MIN_LOG_LEVEL", "2"),
        PYTHONPATH=os.pathsep.join([str(source), *dict.fromkeys(roots)]),
        PYTHONSAFEPATH="1",  # CPython 3.11+, as every tracked release's environment
        TMPDIR=str(tmp),
        **(heap.preload_env() if counted else {}),
    )


def run_isolated(
    module: str,
    spec: dict[str, Any],
    limits: Limits,
    counted: bool = True,
    imports: tuple[str, ...] = (),
) -> tuple[Any, int, str]:
    """`python -m MODULE SPEC OUT` in a fresh process (`limits.python`: a release
    environment's, tfbench.history.envs; else this interpreter), tfbench imported from its
    source and `imports` (modules imported here) from where they were, nothing else from
    this process's path (asv's puts its own `benchmarks` module first), every allocation
    through glibc's malloc and counted
    (tfbench.measure.heap; not `counted`: Python's own allocator, as a user runs): (what it
    wrote to OUT, None if nothing; its exit code; its last lines, when quiet). What the
    process prints goes to stderr, or when quiet nowhere.

    Every measuring parent starts like this, whoever asks: a reading does not depend on
    what the caller's heap went through (asv's forkserver differs from one run to the next).
    Within tfbench.measure.parents.shared(), a parent of the same interpreter and
    environment serves every such request of the run (`python -m tfbench.targets` only).
    """
    python, roots = limits.python or sys.executable, [_import_root(m) for m in imports]
    with whole.temporary("tfbench-spec-") as tmp:
        spec_path, out_path = tmp / "spec.json", tmp / "out.json"
        spec_path.write_text(
            json.dumps({**spec, "limits": limits.to_json(), "imports": list(imports)})
        )
        folder = parents.folder_for(python, roots, counted, os.environ)
        answer = None
        if module == "tfbench.targets" and folder is not None:
            made = not folder.exists()
            folder.mkdir(exist_ok=True)
            env = isolated_env(folder, roots, counted)
            argv = [python, "-m", module]  # no arguments: it serves (_serve)
            answer = parents.ask(folder, argv, env, spec_path, out_path)
            if answer is None and made:  # no broker: nothing serves from there
                shutil.rmtree(folder, ignore_errors=True)
        if answer is not None:
            exit_code, printed = answer["exit"] or 0, answer["printed"]
            if not limits.quiet:
                sys.stderr.write(printed)
        else:
            log = tmp / "log"
            with open(log, "w") as shown:
                exit_code = _shown(
                    Spawned(
                        [python, "-m", module, str(spec_path), str(out_path)],
                        stdout=subprocess.PIPE if limits.quiet else sys.stderr,
                        stderr=subprocess.STDOUT if limits.quiet else None,
                        env=isolated_env(tmp, roots, counted),
                    ),
                    shown,
                )
            printed = log.read_text(errors="replace")
        _end_on_fault(exit_code, printed, limits.quiet)
        out = json.loads(out_path.read_text()) if out_path.exists() else None
        last = "".join(printed.splitlines(keepends=True)[-20:])
    return out, exit_code, last


def _end_on_fault(exit_code: int, printed: str, quiet: bool) -> None:
    """A child that met a full disk or a folder it may not write said so in one line, its
    last, and exited EXIT_IO: this run ends with it (the line shown where it was quiet)."""
    if exit_code == faults.EXIT_IO:
        if quiet and printed:
            sys.stderr.write(printed.splitlines(keepends=True)[-1])
        raise faults.Said(faults.EXIT_IO)


def _shown(process: Spawned, log: IO[str]) -> int:
    """Its exit code; what a quiet process prints goes to `log` as it comes, and its
    progress lines (PROGRESS) to stderr too."""
    pipe = process.process.stdout
    if pipe is None:
        return process.wait()

    def relay() -> None:
        for line in io.TextIOWrapper(pipe, errors="replace"):
            log.write(line)
            if line.startswith(PROGRESS):
                sys.stderr.write(line)
                sys.stderr.flush()

    thread = threading.Thread(target=relay, daemon=True)
    thread.start()
    code = process.wait()
    thread.join(timeout=10)  # the group has ended: its end of the pipe is closed
    return code


def died(target: Target, exit_code: int, last: str, python: str | None) -> Record:
    """The record of a measuring process that exited without writing one."""
    result = describe(target)
    result.update(
        status="error",
        error=f"the measuring process exited with code {exit_code}"
        + (f"; its last lines:\n{last}" if last else ""),
    )
    if python:
        result["tf_version"] = None  # another environment's: not known here
    return result


def measure_spawned(
    targets: list[Step], limits: Limits = DEFAULTS, workers: int = 1, imports: tuple = ()
) -> list[Record]:
    """measure_forked in a fresh process (run_isolated), `imports` imported there first:
    the modules that register scenarios outside the catalog (a benchmark module's)."""
    spec = {"targets": [to_json(t) for t in targets], "workers": workers}
    out, exit_code, last = run_isolated("tfbench.targets", spec, limits, imports=imports)
    return out or [died(t, exit_code, last, limits.python) for t in targets]


def measure_isolated(target: Step, limits: Limits = DEFAULTS) -> Record:
    """Measure a target in a child of a fresh Python process (safe from any caller), when
    quiet the process's output joining the error only if it dies without a record.

    Its "status" is ok, over_budget, timeout, skipped, error or bad_input.
    """
    (found,) = measure_spawned([target], limits)
    return found


def measure(target: Target, limits: Limits = DEFAULTS) -> Record:
    """A target measured in a fresh process: a step (measure_isolated), or TensorFlow's
    footprint. Every kind of target is told apart here, once."""
    if isinstance(target, FootprintTarget):
        return measure_footprint(target.device, limits)
    return measure_isolated(target, limits)


def measure_footprint(device: str, limits: Limits = DEFAULTS, repeats: int = 3) -> Record:
    """TensorFlow's footprint on `device` (tfbench.scenarios.footprint), each figure the
    median of `repeats` fresh processes: RSS as a user's process holds it (Python's own
    allocator), the heap in use with every allocation counted."""
    found: dict[str, list] = {"rss_bytes": [], "heap_bytes": [], "import_seconds": []}
    result = Record(scenario=record.FOOTPRINT, params={"device": device}, device=device)
    for k in range(2 * repeats):
        spec = {"device": device}
        out, code, last = run_isolated("tfbench.scenarios.footprint", spec, limits, k % 2 == 1)
        if not out or out["status"] != "ok":
            failed = out or died(FootprintTarget(), code, last, limits.python)
            result.update(status=failed["status"], error=failed.get("error"))
            return result
        figures = ("heap_bytes",) if k % 2 else ("rss_bytes", "import_seconds")
        for figure in figures:
            found[figure].append(out[figure])
        result.update(tf_version=out["tf_version"], heap_note=out["heap_note"])
    result.update(
        status="ok",
        repeats=repeats,
        **{k: statistics.median(v) if None not in v else None for k, v in found.items()},
    )
    return result


def _main(spec_path: str, out_path: str) -> None:
    spec = json.loads(Path(spec_path).read_text())
    for module in spec.get("imports", ()):
        importlib.import_module(module)
    steps = [step_from_json(t) for t in spec["targets"]]
    limits = Limits.from_json(spec["limits"])
    try:
        results = measure_forked(steps, limits, spec.get("workers", 1))
    except faults.Said as e:  # a measuring child's full disk, said by it
        sys.exit(e.code)
    try:
        whole.write(Path(out_path), json.dumps(results))  # whole: a full disk cuts nothing
    except OSError as e:  # said here, in one line; the parent ends with the same code
        faults.end_on(e)
        raise


def _serve() -> None:
    """A shared parent (tfbench.measure.parents): one request a line ([spec, out], as _main
    takes them), each answered by a line once its out is written; it ends with its input."""
    answers = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # what anything prints goes to the log, not into the answers
    for line in sys.stdin:
        _main(*json.loads(line))
        answers.write("done\n")
        answers.flush()


if __name__ == "__main__":
    if len(sys.argv) > 1:
        _main(*sys.argv[1:3])
    else:
        _serve()
