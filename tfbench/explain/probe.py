"""The explaining run, in a measuring child of its own (forked and bounded like a
measurement: tfbench.measure.supervisor): after the step's warm-up, windows of calls, each
read by one instrument, so that no tracer weighs on another's figures:

1. untraced: what the step keeps, the garbage Python's collector frees, RSS's growth;
2. Python: the objects that survive, by type, the allocation sites that grew
   (tracemalloc), TensorFlow's state (default graph's ops, graphs and variables alive,
   traces, open Sessions, GPU memory), what a call makes (tf.function objects and the line
   that made them, graphs traced) and what holds what survives (tfbench.explain.holders);
3. garbage, where the step leaves some: the objects its collections find unreachable, by
   type and by the line that made them (gc.DEBUG_SAVEALL, tracemalloc);
4. native: memray's record of the allocations made and never freed (native stacks).

Native memory no Python object owns is what the step keeps that tracemalloc does not
account for and no surviving TensorFlow object holds; RSS's growth beyond what is kept is
heap the allocator did not give back. Each window says on stderr when it starts. The
figures are this run's own: tracing changes timing and memory.

Run as `python -m tfbench.explain.probe SPEC OUT` (tfbench.explain.explain_isolated).
"""

from __future__ import annotations

import gc
import json
import re
import sys
import time
import tracemalloc
import types
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tfbench import targets, whole
from tfbench.explain import holders, layers
from tfbench.measure import devices, record, steps, supervisor
from tfbench.paths import ROOT
from tfbench.targets import Step, portable

FRAMES = 12  # tracemalloc's depth: enough to reach the step's own line from inside NumPy
# Calls traced by tracemalloc at most: it costs about ten times a call of a step that traces
# a tf.function (1.5 s against 0.13 s here), and counts the bytes and objects a call keeps
# exactly from a few calls.
PYTHON_CALLS = 30
NATIVE_FRAMES = 128  # a memray record's Python stack, read after the calls: deep is cheap
TOP = 5
SITE_FLOOR = 64  # bytes per call: below, an allocation site is the interpreter's own churn
NATIVE_CALLS = 20
# Files that are the harness, not the step: never named as where memory is allocated.
HARNESS = tuple(str(ROOT / "tfbench" / part) for part in ("measure", "explain", "targets.py"))
PYTHON_ALLOCATORS = ("PyDataMem", "PyObject_", "PyMem_", "_PyObject", "_PyMem")


# The modules TensorFlow's autograph writes for a converted function (in the temporary
# folder): TensorFlow's code, not the step's own line.
AUTOGRAPH = "__autograph_generated_file"


def _installed(filename: str) -> bool:
    """Whether a file is the interpreter's or an installed package's (not the step's)."""
    return (
        filename.startswith((sys.prefix, sys.base_prefix))
        or "site-packages" in filename
        or AUTOGRAPH in filename
    )


STARTED = time.monotonic()


def say(text: str) -> None:
    """What the explaining run is doing, on stderr (a quiet run's progress too), with the
    seconds since its process started."""
    spent = time.monotonic() - STARTED
    print(f"{targets.PROGRESS}explain: [{spent:.0f} s] {text}", file=sys.stderr, flush=True)


def _steps_frame(frames: list[tuple[str, int]]) -> str:
    """Where, among (file, line) frames innermost first, the step allocated: its own
    innermost frame, else the innermost frame outside the harness."""
    mine = [f for f in frames if not f[0].startswith(HARNESS)]
    own = [f for f in mine if not _installed(f[0])]
    file, line = (own or mine or frames or [("?", 0)])[0]
    return portable(f"{file}:{line}")


def live(*ours: Any) -> dict[int, Any]:
    """Every live object gc tracks, and the untracked ones they hold (arrays, tensors in a
    list), by id, after a full collection; `ours` (the explaining run's own containers) and
    what they hold left out."""
    gc.collect()
    found: dict[int, Any] = {}
    left_out = set(map(id, ours))
    for holder in gc.get_objects():
        if id(holder) in left_out:
            continue
        found.setdefault(id(holder), holder)
        for o in gc.get_referents(holder):
            found.setdefault(id(o), o)
    return found


def _census(found: dict[int, Any]) -> Counter:
    return Counter(type(o).__qualname__ for o in found.values())


def tf_state(device: str) -> dict[str, int | None]:
    """TensorFlow's state this process holds, where it has imported TensorFlow: operations
    in the default graph, graphs, variables and eager tensors alive, traces of the live
    tf.functions, open Sessions, GPU memory in use."""
    tf = sys.modules.get("tensorflow")
    if tf is None:
        return {}
    traces = sessions = graphs = variables = tensors = 0
    for o in gc.get_objects():
        kind = type(o)
        # the classes' own lines, not isinstance: tf.Variable's ABCMeta keeps a weak
        # reference for every class it is asked about (~14,000 at a first reading), which
        # the census would count as the step's
        mro = kind.__mro__
        if callable(getattr(kind, "experimental_get_tracing_count", None)):
            traces += o.experimental_get_tracing_count()
        elif tf.Graph in mro:
            graphs += 1
        elif tf.Variable in mro:
            variables += 1
        elif kind.__name__ == "EagerTensor":
            tensors += 1
        elif any(c.__name__ == "BaseSession" for c in mro):
            sessions += not getattr(o, "_closed", True)
    gpu = None
    if device == "GPU":
        gpu = tf.config.experimental.get_memory_info("GPU:0")["current"]
    ops = len(tf.compat.v1.get_default_graph().get_operations())
    return {
        "graph_ops": ops,
        "graphs": graphs,
        "variables": variables,
        "tensors": tensors,
        "traces": traces,
        "sessions": sessions,
        "gpu_bytes": gpu,
    }


@contextmanager
def made() -> Iterator[dict[str, Any]]:
    """What the calls inside make of TensorFlow's: tf.function objects (`functions`, and
    `functions_at`, the step's line that made the most) and graphs traced (`graphs`: every
    FuncGraph built), counted where each is constructed; nothing where TensorFlow is not
    imported."""
    found: dict[str, Any] = {"functions": 0, "graphs": 0, "functions_at": None}
    tf = sys.modules.get("tensorflow")
    if tf is None:
        yield found
        return
    from tensorflow.python.framework import func_graph

    sites = Counter[str]()

    def counting(kind: type, key: str) -> None:
        original = getattr(kind, "__init__")  # noqa: B009 (mypy: no __init__ of a type)

        def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
            if type(self) is kind:  # not a subclass's: a cond's branch is no trace
                found[key] += 1
                if key == "functions":
                    sites[_steps_frame(_stack(sys._getframe(1)))] += 1
            original(self, *args, **kwargs)

        setattr(kind, "__init__", __init__)  # noqa: B010 (as above)

    kinds = {"functions": type(tf.function(lambda: None)), "graphs": func_graph.FuncGraph}
    own = {key: vars(kind).get("__init__") for key, kind in kinds.items()}
    for key, kind in kinds.items():
        counting(kind, key)
    try:
        yield found
    finally:
        for key, kind in kinds.items():
            if own[key] is None:
                delattr(kind, "__init__")  # it was inherited
            else:
                setattr(kind, "__init__", own[key])  # noqa: B010 (as above)
        found["functions_at"] = sites.most_common(1)[0][0] if sites else None


def _stack(frame: types.FrameType | None) -> list[tuple[str, int]]:
    """(file, line) of a frame and those that called it, innermost first (no source read:
    linecache's copies would be allocations of the step's)."""
    frames = []
    while frame is not None:
        frames.append((frame.f_code.co_filename, frame.f_lineno))
        frame = frame.f_back
    return frames


def _owner(found: dict[int, Any], before: set[int]) -> Any:
    """One of the objects that survived the calls, to look for what holds it: a graph, a
    variable, an operation or an eager tensor, where one survived, else one of the type
    whose new objects are the largest."""
    new = [o for k, o in found.items() if k not in before]
    tf = sys.modules.get("tensorflow")
    if tf is not None:
        for kind in (tf.Graph, tf.Variable, tf.Operation, tf.Tensor):
            mine = [o for o in new if kind in type(o).__mro__]
            if kind is tf.Tensor:  # a graph's tensors are its own: eager ones only
                mine = [o for o in mine if type(o).__name__ == "EagerTensor"]
            if mine:
                return mine[-1]
    sizes = Counter[type]()
    for o in new:
        sizes[type(o)] += sys.getsizeof(o)
    if not sizes:
        return None
    largest = sizes.most_common(1)[0][0]
    return next(o for o in reversed(new) if type(o) is largest)


def holder(found: dict[int, Any], before: set[int]) -> dict[str, str] | None:
    """What holds a surviving object: its type and the path of references from a module
    (tfbench.explain.holders), or None where nothing new survived."""
    sample = _owner(found, before)
    if sample is None:
        return None
    path = holders.Index(leave_out=[found, before]).holder(sample)
    return {"type": type(sample).__qualname__, "path": path or "no module reaches it"}


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
    """Objects, allocation sites, TensorFlow's state and what the calls make, before and
    after `calls` calls (PYTHON_CALLS at most); what holds the objects that survive."""
    calls = min(calls, PYTHON_CALLS)
    state = tf_state(device)  # first: a first reading makes the default graph, not the step
    found = live()
    counted, before = _census(found), set(found)
    del found
    tracemalloc.start(FRAMES)
    try:
        first = tracemalloc.take_snapshot()
        with made() as making:
            for _ in range(calls):
                step()
        gc.collect()
        last = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    total, by_site = _sites(first, last)
    del first, last  # their traces are objects too, not the step's: gone before the census
    found = live(before, counted, by_site)
    grown = _census(found) - counted
    kept = holder(found, before) if grown else None
    del found, before
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
        "made": {
            "functions": making["functions"] / calls,
            "graphs": making["graphs"] / calls,
            "functions_at": making["functions_at"],
        },
        "holder": kept,
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


def _python_object(natives: list[str]) -> bool:
    """Whether an allocation's native stack (innermost first) is a Python object's: one of
    the allocating frames, before the first that allocates nothing, is Python's allocator.
    Frames further out are the interpreter calling into a library, which says nothing of
    whose memory it is."""
    for symbol in natives:
        if symbol.startswith(PYTHON_ALLOCATORS):
            return True
        if not _allocator(symbol):
            return False
    return False


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
                if _python_object(natives):
                    continue  # a Python object's memory: tracemalloc's layer
                stack = r.stack_trace(max_stacks=NATIVE_FRAMES)
                code = [(file, line) for _, file, line in stack]
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
        k: v for k, v in targets.describe(target).items() if k not in record.CARRIED
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
        say(f"window 1 of 4: {calls} calls untraced (what is kept, garbage, RSS)")
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
        say(
            f"window 2 of 4: {min(calls, PYTHON_CALLS)} calls under tracemalloc (Python "
            "objects, TensorFlow's state, what holds them)"
        )
        result.update(python_window(ready.step, calls, ready.device))
        if (reading.garbage_bytes_per_iteration or 0) >= layers.NOTABLE:
            say(f"window 3 of 4: {min(calls, NATIVE_CALLS)} calls keeping their garbage")
            result["garbage"] = garbage_window(ready.step, calls)
        say(f"window 4 of 4: {min(calls, NATIVE_CALLS)} calls under memray (native stacks)")
        native = native_window(ready.step, calls, memray_path)
        say("read")
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
