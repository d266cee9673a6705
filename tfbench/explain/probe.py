"""The explaining run, in a measuring child of its own (forked and bounded like a
measurement: tfbench.measure.supervisor): after the step's warm-up, windows of calls, each
read by one instrument, so that no tracer weighs on another's figures:

1. nothing traced: what the step keeps (the heap after full collections), the garbage
   Python's collector frees, and how RSS grows (the growth to explain, and its verdict);
2. Python: the objects that survive, by type (gc's objects and what they hold), the
   allocation sites that grew (tracemalloc), and TensorFlow's state (operations in the
   default graph, traces of every live tf.function, open Sessions, GPU memory in use);
3. garbage, where the step leaves some: the objects its collections find unreachable, by
   type and by the line that made them (gc.DEBUG_SAVEALL, tracemalloc);
4. native: memray's record of the allocations made and never freed (native stacks).

Native memory no Python object owns is what the step keeps (the heap's growth; RSS's where
the heap is not read) that tracemalloc does not account for; RSS's growth beyond what is
kept is heap the allocator holds and did not give back. memray names where native memory
came from where it can (a function pointer taken with dlsym, as ctypes does, it misses).
The figures are this run's own: tracing changes timing and memory.

Run as `python -m tfbench.explain.probe SPEC OUT` (tfbench.explain.explain_isolated).
"""

from __future__ import annotations

import gc
import json
import re
import sys
import tracemalloc
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tfbench import targets, whole
from tfbench.explain import layers
from tfbench.measure import devices, record, steps, supervisor
from tfbench.paths import ROOT
from tfbench.targets import Step, portable

FRAMES = 12  # tracemalloc's depth: enough to reach the step's own line from inside NumPy
TOP = 5
SITE_FLOOR = 64  # bytes per call: below, an allocation site is the interpreter's own churn
NATIVE_CALLS = 20
# Files that are the harness, not the step: never named as where memory is allocated.
HARNESS = tuple(str(ROOT / "tfbench" / part) for part in ("measure", "explain", "targets.py"))
PYTHON_ALLOCATORS = ("PyDataMem", "PyObject_", "PyMem_", "_PyObject", "_PyMem")


def _installed(filename: str) -> bool:
    """Whether a file is the interpreter's or an installed package's (not the step's)."""
    return filename.startswith((sys.prefix, sys.base_prefix)) or "site-packages" in filename


def _steps_frame(frames: list[tuple[str, int]]) -> str:
    """Where, among (file, line) frames innermost first, the step allocated: its own
    innermost frame, else the innermost frame outside the harness."""
    mine = [f for f in frames if not f[0].startswith(HARNESS)]
    own = [f for f in mine if not _installed(f[0])]
    file, line = (own or mine or frames or [("?", 0)])[0]
    return portable(f"{file}:{line}")


def objects() -> Counter:
    """Live objects by type: those gc tracks, and the untracked ones they hold (arrays,
    tensors in a list)."""
    gc.collect()
    seen: set[int] = set()
    counts: Counter = Counter()
    for holder in gc.get_objects():
        for o in (holder, *gc.get_referents(holder)):
            if id(o) not in seen:
                seen.add(id(o))
                counts[type(o).__qualname__] += 1
    return counts


def tf_state(device: str) -> dict[str, int | None]:
    """TensorFlow's state this process holds, where it has imported TensorFlow."""
    tf = sys.modules.get("tensorflow")
    if tf is None:
        return {}
    traces = sessions = 0
    for o in gc.get_objects():
        kind = type(o)
        if callable(getattr(kind, "experimental_get_tracing_count", None)):
            traces += o.experimental_get_tracing_count()
        elif any(c.__name__ == "BaseSession" for c in kind.__mro__):
            sessions += not getattr(o, "_closed", True)
    gpu = None
    if device == "GPU":
        gpu = tf.config.experimental.get_memory_info("GPU:0")["current"]
    ops = len(tf.compat.v1.get_default_graph().get_operations())
    return {"graph_ops": ops, "traces": traces, "sessions": sessions, "gpu_bytes": gpu}


def _per_call(after: dict, before: dict, calls: int) -> dict[str, float | None]:
    return {
        k: None if after[k] is None or before.get(k) is None else (after[k] - before[k]) / calls
        for k in after
    }


def _sites(first: tracemalloc.Snapshot, last: tracemalloc.Snapshot) -> tuple[int, Counter]:
    """The net bytes allocated between the snapshots, and the growth by the step's line."""
    ours = [tracemalloc.Filter(False, tracemalloc.__file__)]  # the snapshots' own
    total, by_site = 0, Counter[str]()
    for diff in last.filter_traces(ours).compare_to(first.filter_traces(ours), "traceback"):
        total += diff.size_diff
        if diff.size_diff > 0:
            frames = [(f.filename, f.lineno) for f in reversed(diff.traceback)]
            by_site[_steps_frame(frames)] += diff.size_diff
    return total, by_site


def python_window(step: Callable[[], Any], calls: int, device: str) -> dict[str, Any]:
    """Objects, allocation sites and TensorFlow's state, before and after `calls` calls."""
    counted, state = objects(), tf_state(device)
    tracemalloc.start(FRAMES)
    try:
        first = tracemalloc.take_snapshot()
        for _ in range(calls):
            step()
        gc.collect()
        last = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    total, by_site = _sites(first, last)
    del first, last  # their traces are objects too, not the step's: gone before the census
    grown = objects() - counted
    sites = [(w, b / calls) for w, b in by_site.most_common(TOP) if b / calls >= SITE_FLOOR]
    return {
        "python_bytes_per_call": total / calls,
        "sites": [{"where": w, "bytes_per_call": b} for w, b in sites],
        "objects": [
            {"type": t, "per_call": n / calls}
            for t, n in grown.most_common(TOP)
            if n / calls >= layers.TF_GROWTH
        ],
        "tf": _per_call(tf_state(device), state, calls),
    }


def garbage_window(step: Callable[[], Any], calls: int) -> dict[str, Any]:
    """The objects `calls` calls leave in reference cycles (NATIVE_CALLS at most), by type and
    by the step's line that made them: saved by the collector (gc.DEBUG_SAVEALL) instead of
    freed, their lines from tracemalloc."""
    calls = min(calls, NATIVE_CALLS)
    gc.collect()
    tracemalloc.start(FRAMES)
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        for _ in range(calls):
            step()
        gc.collect()
        found = list(gc.garbage)
    finally:
        gc.garbage.clear()
        gc.set_debug(0)
    try:
        lines = Counter[str]()
        for o in found:  # an object with a pre-header (3.11's managed dict) has no
            # traceback of its own: the first of what it holds that has one stands for it
            held = (o, *gc.get_referents(o))
            made = next(filter(None, map(tracemalloc.get_object_traceback, held)), None)
            if made is not None:
                lines[_steps_frame([(f.filename, f.lineno) for f in reversed(made)])] += 1
    finally:
        tracemalloc.stop()
    types = Counter(type(o).__qualname__ for o in found)
    del found
    return {
        "types": [{"type": t, "per_call": n / calls} for t, n in types.most_common(TOP)],
        "sites": [{"where": w, "per_call": n / calls} for w, n in lines.most_common(TOP)],
    }


NESTED = re.compile(r"<[^<>]*>|\([^()]*\)")


def _short(symbol: str) -> str:
    """A C++ symbol without its template and parameter lists: llvm::DenseMapBase::grow."""
    while NESTED.search(symbol):
        symbol = NESTED.sub("", symbol)
    return symbol


def _allocator(symbol: str) -> bool:
    return "alloc" in symbol.lower() or symbol.startswith(("operator new", "mmap"))


def _memray(extra_path: str | None):
    try:
        import memray
    except ImportError:
        if not extra_path:
            raise
        sys.path.append(extra_path)  # after the environment's own packages: none shadowed
        import memray
    return memray


def native_window(step: Callable[[], Any], calls: int, extra_path: str | None) -> dict[str, Any]:
    """memray's allocations made in `calls` calls (NATIVE_CALLS at most: memray unwinds the
    native stack of every allocation) and never freed, by where they came from (the step's
    Python line and the first native function that is no allocator)."""
    calls = min(calls, NATIVE_CALLS)
    try:
        memray = _memray(extra_path)
    except ImportError as e:
        return {"available": False, "why": f"memray is not installed ({e})"}
    with whole.temporary("tfbench-explain-") as tmp:
        capture = tmp / "native.bin"
        with memray.Tracker(capture, native_traces=True, follow_fork=False):
            for _ in range(calls):
                step()
            gc.collect()
        with memray.FileReader(capture) as reader:
            records = list(reader.get_leaked_allocation_records(merge_threads=True))
            where: Counter = Counter()
            for r in sorted(records, key=lambda r: -r.size)[: 4 * TOP]:
                natives = [s for s, _, _ in r.native_stack_trace(max_stacks=16)]
                if any(s.startswith(PYTHON_ALLOCATORS) for s in natives):
                    continue  # a Python object's memory: tracemalloc's layer
                code = [(file, line) for _, file, line in r.stack_trace(max_stacks=FRAMES)]
                first = _short(next((s for s in natives if not _allocator(s)), "?"))
                where[f"{_steps_frame(code)} ({first})"] += r.size
    stacks = [(w, b / calls) for w, b in where.most_common(TOP) if b / calls >= SITE_FLOOR]
    return {
        "available": True,
        "bytes_per_call": sum(r.size for r in records) / calls,
        "stacks": [{"where": w, "bytes_per_call": b} for w, b in stacks],
    }


def explain(
    target: Step, limits: targets.Limits, primed: bool, memray_path: str | None = None
) -> dict[str, Any]:
    """The step's growth read layer by layer in this (child) process (`memray_path`: where
    memray is, if not among this environment's packages); a failure becomes the record's
    status, as in a measurement."""
    result: dict[str, Any] = {
        k: v for k, v in targets.describe(target).items() if k not in record.FIGURES
    }
    result["explained_by"] = (
        "tfbench explain: its own run, traced (its figures are not a measurement's)"
    )
    try:
        ready = targets.prepare(target, limits.iterations, limits.warmup)
        devices.start_runtime(ready.device)
        for _ in range(ready.warmup):
            ready.step()
        calls = ready.iterations
        budget = limits.budget_bytes or supervisor.default_budget_bytes()
        reading = steps.measure(ready.step, calls, 0, budget)
        result.update(
            params=ready.params,
            tf_version=targets.tf_version(),
            iterations=calls,
            warmup=ready.warmup,
            status=reading.status,
            rss_bytes_per_call=reading.growth_bytes_per_iteration,
            retained_bytes_per_call=reading.retained_bytes_per_iteration,
            garbage_bytes_per_call=reading.garbage_bytes_per_iteration,
            garbage_objects_per_call=reading.garbage_objects_per_iteration,
            heap_growth_bytes_per_call=reading.heap_growth_bytes_per_iteration,
            collector=reading.collector,
            leak=bool(reading.leak),
            leak_basis=reading.leak_basis,
        )
        if reading.status != "ok":
            result["error"] = "stopped at the memory budget in the untraced window"
            return result
        result.update(python_window(ready.step, calls, ready.device))
        if (reading.garbage_bytes_per_iteration or 0) >= layers.NOTABLE:
            result["garbage"] = garbage_window(ready.step, calls)
        native = native_window(ready.step, calls, memray_path)
        result.update(native=native, **split(result))
        result.update(layer=layers.layer(result), conclusion=layers.conclusion(result))
    except Exception as e:
        result.update(targets.failure(e))
    return result


def split(figures: dict[str, Any]) -> dict[str, float | None]:
    """The growth per call in layers: what the step keeps (the heap's slope, where read;
    else RSS's) less its Python objects is native memory no object owns; RSS's growth
    beyond what is kept is heap the allocator did not give back."""
    rss, kept = figures["rss_bytes_per_call"], figures.get("retained_bytes_per_call")
    whole = rss if kept is None else kept
    return {
        "native_bytes_per_call": max(0.0, whole - figures["python_bytes_per_call"]),
        "unreturned_bytes_per_call": None if kept is None else max(0.0, rss - kept),
    }


def _main(spec_path: str, out_path: str) -> None:
    spec = json.loads(Path(spec_path).read_text())
    memray = spec.get("memray_path")
    found = targets.measure_forked(
        [targets.step_from_json(t) for t in spec["targets"]],
        targets.Limits.from_json(spec["limits"]),
        runner=lambda target, limits, primed: explain(target, limits, primed, memray),
    )
    Path(out_path).write_text(json.dumps(found))


if __name__ == "__main__":
    _main(*sys.argv[1:3])
