"""Measure a step in a fresh Python process, bounded in memory and time.

The parent starts `python -m tfbench.isolated SPEC OUT`, watches the child's RSS and kills
it past the budget or the timeout; the child also stops itself at the budget between
iterations, so the usual over-budget report still carries the readings up to that point;
the watchdog's limit sits a margin above the budget so that the child gets to do that.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import asdict
from importlib import metadata
from pathlib import Path
from typing import Any

from tfbench.memory import process_rss_bytes

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
    """Measure a target in a child process.

    target: {"scenario": ID, "params": {...}} or {"file": PATH, "function": NAME}.
    Returns the result dict; "status" is ok, over_budget, timeout, skipped, error or bad_input.
    """
    budget = budget_bytes or default_budget_bytes()
    spec = {"target": target, "iterations": iterations, "warmup": warmup, "budget": budget}
    with tempfile.TemporaryDirectory(prefix="tfbench-") as tmp:
        spec_path, out_path = Path(tmp) / "spec.json", Path(tmp) / "out.json"
        spec_path.write_text(json.dumps(spec))
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL=os.environ.get("TF_CPP_MIN_LOG_LEVEL", "2"),
                   PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
        child = subprocess.Popen([sys.executable, "-m", "tfbench.isolated", str(spec_path),
                                  str(out_path)], stdout=sys.stderr, env=env)
        status = _watch(child, budget + max(64 * MiB, budget // 10), timeout_s)
        if status == "ok":
            if out_path.exists():
                return json.loads(out_path.read_text())
            status = None
    result = _describe(target)
    result.update(status=status or "error", budget_bytes=budget)
    if status is None:
        result["error"] = f"the measuring process exited with code {child.returncode}"
    elif status == "over_budget":
        result["error"] = f"killed: RSS passed the budget of {budget / MiB:.0f} MiB"
    else:
        result["error"] = f"killed: still running after {timeout_s:.0f} s"
    return result


def _watch(child: subprocess.Popen, limit: int, timeout_s: float) -> str | None:
    """Wait for the child; kill it past limit or timeout. "ok" when it exited cleanly."""
    deadline = time.monotonic() + timeout_s
    while child.poll() is None:
        verdict = None
        if process_rss_bytes(child.pid) > limit:
            verdict = "over_budget"
        elif time.monotonic() > deadline:
            verdict = "timeout"
        if verdict:
            child.kill()
            child.wait()
            return verdict
        time.sleep(0.02)
    return "ok" if child.returncode == 0 else None


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


def _child(spec_path: str, out_path: str) -> None:
    from tfbench import devices, scenarios
    from tfbench.probe import measure

    spec = json.loads(Path(spec_path).read_text())
    target = spec["target"]
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
    except (scenarios.ParamError, LookupError) as e:
        result.update(status="bad_input", error=str(e))
    except devices.Unsupported as e:
        result.update(status="skipped", error=str(e))
    except Exception as e:  # the pattern itself failed: record it, never hide it
        result.update(status="error", error=f"{type(e).__name__}: {e}",
                      traceback=traceback.format_exc())
    Path(out_path).write_text(json.dumps(result))


if __name__ == "__main__":
    _child(*sys.argv[1:3])
