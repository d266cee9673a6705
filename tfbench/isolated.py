"""Measure steps in fresh child processes, bounded in memory and time.

Children are forked from a process that has imported TensorFlow but not started it, so
each child skips the import (seconds) and begins with a clean runtime: forking a process
whose TensorFlow runtime (thread pools, CUDA) has started can deadlock. `measure_forked`
is for such clean processes (asv's setup_cache, `python -m tfbench.isolated`);
`measure_isolated` starts one for any caller. The parent watches each child's RSS and
kills it past the budget or the timeout; the child also stops itself at the budget between
iterations, so the usual over-budget report still carries the readings up to that point;
the watchdog's limit sits a margin above the budget so that the child gets to do that.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import asdict
from importlib import metadata
from pathlib import Path
from typing import Any

from tfbench.memory import fault_in_like, process_rss_bytes

MiB = 1 << 20
ROOT = Path(__file__).resolve().parents[1]


def default_budget_bytes() -> int:
    """A quarter of physical memory: a leaking scenario must not take the machine down."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 4
    except (ValueError, OSError, AttributeError):
        return 4096 * MiB


def measure_isolated(target: dict[str, Any], iterations: int | None = None,
                     warmup: int | None = None, budget_bytes: int | None = None,
                     timeout_s: float = 600.0) -> dict[str, Any]:
    """Measure a target in a child of a fresh Python process (safe from any caller).

    target: {"scenario": ID, "params": {...}} or {"file": PATH, "function": NAME}.
    Returns the result dict; "status" is ok, over_budget, timeout, skipped, error or bad_input.
    """
    spec = {"targets": [target], "iterations": iterations, "warmup": warmup,
            "budget": budget_bytes, "timeout": timeout_s}
    with tempfile.TemporaryDirectory(prefix="tfbench-") as tmp:
        spec_path, out_path = Path(tmp) / "spec.json", Path(tmp) / "out.json"
        spec_path.write_text(json.dumps(spec))
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL=os.environ.get("TF_CPP_MIN_LOG_LEVEL", "2"),
                   PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
        code = subprocess.call([sys.executable, "-m", "tfbench.isolated", str(spec_path),
                                str(out_path)], stdout=sys.stderr, env=env)
        if out_path.exists():
            return json.loads(out_path.read_text())[0]
    result = _describe(target)
    result.update(status="error", error=f"the measuring process exited with code {code}")
    return result


def measure_forked(targets: list[dict[str, Any]], iterations: int | None = None,
                   warmup: int | None = None, budget_bytes: int | None = None,
                   timeout_s: float = 600.0, workers: int = 1) -> list[dict[str, Any]]:
    """Measure each target in a child forked from this process, `workers` at a time.

    Only from a process whose TensorFlow runtime has not started (importing it is fine).
    Children run side by side: their readings are per-process RSS, which a neighbour does
    not change. Results come in the order of `targets`.
    """
    if any("scenario" in t for t in targets):
        try:
            import tensorflow  # noqa: F401  (once here rather than in every child)
        except ImportError:
            pass  # the child reports it
    budget = budget_bytes or default_budget_bytes()
    limit = budget + max(64 * MiB, budget // 10)
    spec = {"iterations": iterations, "warmup": warmup, "budget": budget}
    results: list[dict[str, Any] | None] = [None] * len(targets)
    running: dict[int, tuple[int, Path, float]] = {}  # pid -> (index, out, deadline)
    todo = list(enumerate(targets))
    with tempfile.TemporaryDirectory(prefix="tfbench-") as tmp:
        while todo or running:
            while todo and len(running) < workers:
                index, target = todo.pop(0)
                out = Path(tmp) / f"{index}.json"
                running[_fork(target, spec, out)] = (index, out, time.monotonic() + timeout_s)
            for pid, (index, out, deadline) in list(running.items()):
                ended, status = os.waitpid(pid, os.WNOHANG)
                verdict = None
                if not ended:
                    if process_rss_bytes(pid) > limit:
                        verdict = "over_budget"
                    elif time.monotonic() > deadline:
                        verdict = "timeout"
                    else:
                        continue
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
                del running[pid]
                results[index] = _collect(targets[index], out, verdict, status, budget, timeout_s)
            time.sleep(0.02)
    return results


def _fork(target: dict[str, Any], spec: dict[str, Any], out: Path) -> int:
    sys.stdout.flush(), sys.stderr.flush()  # or the child would print them again
    pid = os.fork()
    if pid:
        return pid
    code = 1
    try:  # the child: its prints go to stderr (stdout may carry the parent's JSON)
        os.dup2(2, 1)
        spec = dict(spec, primed=fault_in_like(os.getppid()))
        _child(target, spec, out)
        code = 0
    finally:
        sys.stdout.flush(), sys.stderr.flush()
        os._exit(code)


def _collect(target: dict[str, Any], out: Path, verdict: str | None, status: int,
             budget: int, timeout_s: float) -> dict[str, Any]:
    if verdict is None and out.exists():
        return json.loads(out.read_text())
    result = _describe(target)
    result.update(status=verdict or "error", budget_bytes=budget)
    if verdict == "over_budget":
        result["error"] = f"killed: RSS passed the budget of {budget / MiB:.0f} MiB"
    elif verdict == "timeout":
        result["error"] = f"killed: still running after {timeout_s:.0f} s"
    elif os.WIFSIGNALED(status):
        result["error"] = f"the measuring process died of signal {os.WTERMSIG(status)}"
    else:
        result["error"] = f"the measuring process exited with code {os.WEXITSTATUS(status)}"
    return result


# Every result carries these keys; None where the run produced no reading.
FIGURES = ("iterations", "seconds_per_iteration", "peak_increase_bytes",
           "growth_bytes_per_iteration", "leak", "method", "allocator_peak_bytes")


def _describe(target: dict[str, Any]) -> dict[str, Any]:
    if "scenario" in target:
        params = target.get("params", {})
        described = {"scenario": target["scenario"], "params": params,
                     "device": params.get("device", "CPU")}
    else:
        described = {"scenario": f"{target['file']}::{target['function']}", "params": {},
                     "device": "default"}
    return {**described, "tf_version": _tf_version(), **dict.fromkeys(FIGURES)}


def _tf_version() -> str | None:
    if "tensorflow" in sys.modules:
        return sys.modules["tensorflow"].__version__
    for dist in ("tensorflow", "tensorflow-cpu"):
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    return None


def _load_function(path: str, name: str):
    file = Path(path)
    if not file.is_file():
        raise LookupError(f"no such file: {path}")
    spec = importlib.util.spec_from_file_location(f"tfbench_user_{file.stem}", file)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(file.parent.resolve()))
    try:
        spec.loader.exec_module(module)
    except (SyntaxError, ImportError) as e:
        raise LookupError(f"cannot import {path}: {type(e).__name__}: {e}") from e
    function = getattr(module, name, None)
    if not callable(function):
        found = sorted(k for k, v in vars(module).items() if callable(v) and not k.startswith("_")
                       and getattr(v, "__module__", None) == module.__name__)
        raise LookupError(f"{path} has no function {name!r}; functions there: "
                          f"{', '.join(found) or 'none'}")
    return function


def _child(target: dict[str, Any], spec: dict[str, Any], out: Path) -> None:
    from tfbench import devices, scenarios
    from tfbench.probe import measure

    result = _describe(target)
    try:
        if "scenario" in target:
            scenario = scenarios.get(target["scenario"])
            params = scenario.bind(target.get("params", {}))
            result.update(params=params, device=params.get("device", "CPU"))
            step = scenario.prepare(**params)
            iterations = spec["iterations"] or scenario.iterations
            warmup = scenario.warmup if spec["warmup"] is None else spec["warmup"]
        else:
            step = _load_function(target["file"], target["function"])
            iterations = spec["iterations"] or 100
            warmup = max(1, iterations // 10) if spec["warmup"] is None else spec["warmup"]
        device = result["device"]
        devices.reset_allocator_peak(device)
        reading = asdict(measure(step, iterations, warmup, spec["budget"]))
        counters = getattr(step, "counters", None)
        result.update(reading, tf_version=_tf_version(), budget_bytes=spec["budget"],
                      allocator_peak_bytes=devices.allocator_peak(device),
                      counters=counters() if counters else {})
        if not spec["primed"]:  # library pages first touched in the region count in its peak
            result["method"] += "+unprimed"
    except (scenarios.ParamError, LookupError) as e:
        result.update(status="bad_input", error=str(e))
    except devices.Unsupported as e:
        result.update(status="skipped", error=str(e))
    except Exception as e:  # the pattern itself failed: record it, never hide it
        result.update(status="error", error=f"{type(e).__name__}: {e}",
                      traceback=traceback.format_exc())
    out.write_text(json.dumps(result))


def _main(spec_path: str, out_path: str) -> None:
    spec = json.loads(Path(spec_path).read_text())
    results = measure_forked(spec["targets"], spec["iterations"], spec["warmup"],
                             spec["budget"], spec["timeout"])
    Path(out_path).write_text(json.dumps(results))


if __name__ == "__main__":
    _main(*sys.argv[1:3])
