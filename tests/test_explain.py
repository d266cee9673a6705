"""`tfbench explain`: the layer rules on hand-made figures, and calibration on steps whose
cause is known (tests/steps/causes.py): each attributed to its layer and site, a flat step
to nothing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tfbench.explain import explain_isolated, layers
from tfbench.paths import ROOT
from tfbench.targets import FunctionTarget, Limits
from tfbench.units import KiB

CAUSES = Path(__file__).parent / "steps" / "causes.py"


def figures(**given) -> dict:
    base = {
        "leak": True,
        "rss_bytes_per_call": 64 * KiB,
        "python_bytes_per_call": 0.0,
        "native_bytes_per_call": 0.0,
        "tf": {},
        "sites": [],
        "objects": [],
        "native": {"available": True, "bytes_per_call": 0.0, "stacks": []},
    }
    return {**base, **given}


def test_the_layer_holding_the_most_is_named_tensorflows_state_first():
    python = figures(python_bytes_per_call=60 * KiB, native_bytes_per_call=4 * KiB)
    assert layers.layer(python) == "python"
    assert (
        layers.layer(figures(python_bytes_per_call=2 * KiB, native_bytes_per_call=62 * KiB))
        == "native"
    )
    graph = figures(python_bytes_per_call=60 * KiB, tf={"graph_ops": 3.0, "traces": 0.0})
    assert layers.layer(graph) == "tf-graph_ops"
    assert layers.layer(figures(tf={"graph_ops": 0.2, "traces": 1.0})) == "tf-traces"
    flat = figures(leak=False, rss_bytes_per_call=0.0, python_bytes_per_call=10.0)
    assert layers.layer(flat) == "none"
    assert "nothing grows" in layers.conclusion(flat)


def test_the_heap_splits_rss_growth_into_what_is_kept_and_what_is_not_given_back():
    """seed ex1's shape: RSS +200 KiB/call, the heap +48 KiB/call of which 1 KiB Python."""
    from tfbench.explain.probe import split

    read = figures(
        rss_bytes_per_call=200 * KiB, retained_bytes_per_call=48 * KiB, python_bytes_per_call=KiB
    )
    read.update(split(read))
    assert read["native_bytes_per_call"] == 47 * KiB
    assert read["unreturned_bytes_per_call"] == 152 * KiB
    assert layers.layer(read) == "native"
    assert layers.conclusion(read).startswith(
        "LEAK, keeps 48 KiB/call, RSS 200 KiB/call: native memory no Python object owns "
        "holds it, 47 KiB/call (98% of what the step keeps)"
    )
    grows = figures(leak=False, rss_bytes_per_call=64 * KiB, retained_bytes_per_call=50.0)
    grows.update(split(grows))
    assert layers.layer(grows) == "heap"
    assert "RSS grows, nothing retained" in layers.conclusion(grows)
    no_heap = figures(rss_bytes_per_call=64 * KiB, python_bytes_per_call=4 * KiB)
    assert split(no_heap) == {
        "native_bytes_per_call": 60 * KiB,
        "unreturned_bytes_per_call": None,
    }


def test_the_conclusion_names_the_share_the_site_and_the_objects():
    text = layers.conclusion(
        figures(
            python_bytes_per_call=64 * KiB,
            sites=[{"where": "mine.py:12", "bytes_per_call": 64 * KiB}],
            objects=[{"type": "ndarray", "per_call": 1.0}],
        )
    )
    assert text == (
        "LEAK, RSS 64 KiB/call: Python objects hold it, 64 KiB/call (100% of the RSS "
        "growth) at mine.py:12; +1 ndarray/call"
    )
    unavailable = figures(
        native_bytes_per_call=64 * KiB, native={"available": False, "why": "no memray"}
    )
    assert layers.conclusion(unavailable).endswith("native stacks unavailable (no memray)")


def test_cycles_a_collection_frees_are_garbage_not_native_memory():
    """What a full collection frees is its own owner, with what a loop piles up and the
    advice; a step that keeps memory and leaves garbage names both."""
    collector = {"full_every": 1300.0, "pile_bytes": 24 * 2**20}
    found = figures(
        leak=False,
        rss_bytes_per_call=0.0,
        retained_bytes_per_call=100.0,
        garbage_bytes_per_call=176 * KiB,
        garbage_objects_per_call=302.0,
        garbage={"types": [{"type": "list", "per_call": 88.0}], "sites": []},
        collector=collector,
    )
    assert layers.layer(found) == "garbage"
    assert layers.conclusion(found) == (
        "flat, keeps 100 B/call, garbage 176 KiB/call, RSS 0 B/call: garbage: cycles "
        "awaiting the collector, 176 KiB/call in 302 objects/call (list); a loop holds 24 MiB "
        "of it before Python's full collection frees it, every ~1,300 calls: gc.collect() "
        "every 100 calls holds it under 1.85 MiB (gc.freeze() after setting up makes each one "
        "milliseconds)"
    )
    both = dict(found, leak=True, retained_bytes_per_call=64 * KiB, native_bytes_per_call=64 * KiB)
    assert layers.layer(both) == "native"
    assert layers.conclusion(both).endswith("; and " + layers.garbage(found))


def test_advice_fits_the_period_measured():
    """A tenth of the loop's own period, rounded down to 1, 2 or 5 times a power of ten:
    the ~224-call collection of a step that traces a new tf.function every call is advised
    every 20 calls, not every few hundred."""
    assert layers.advice({"full_every": 224.0, "pile_bytes": 46.5 * 2**20}).startswith(
        "gc.collect() every 20 calls holds it under 4.15 MiB"
    )
    assert layers.advice({"full_every": 8.0, "pile_bytes": 80 * KiB}).startswith(
        "gc.collect() every 1 calls holds it under 10 KiB"
    )
    assert layers.advice({"full_every": None, "pile_bytes": None}) == (
        "Python's young collections free it"
    )


def test_graphs_alive_own_the_native_memory_and_a_new_function_a_call_is_the_cause():
    """The issue's step (a @tf.function defined inside step()) on 2.21.0: one graph a call
    survives, held by the gradient registry; its native memory is the graphs', not
    'unowned', and the cause is named with the line that made the function and its fix."""
    found = figures(
        rss_bytes_per_call=887 * KiB,
        retained_bytes_per_call=887 * KiB,
        python_bytes_per_call=240 * KiB,
        native_bytes_per_call=647 * KiB,
        tf={"graph_ops": 0.0, "graphs": 1.0, "traces": 0.0, "sessions": 0.0},
        made={"functions": 1.0, "graphs": 1.0, "functions_at": "mystep.py:12"},
        holder={"type": "FuncGraph", "path": "ops.gradient_registry._registry['G-1']"},
    )
    assert layers.layer(found) == "tf-graphs"
    assert layers.cause(found) == "new-function"
    text = layers.conclusion(found)
    assert text.startswith(
        "LEAK, keeps 887 KiB/call, RSS 887 KiB/call: graphs stay alive, +1 graphs/call, "
        "owning 647 KiB/call of native memory (73% of what the step keeps)"
    )
    assert "no Python object owns" not in text
    assert "held by ops.gradient_registry._registry['G-1']" in text
    assert text.endswith(
        "cause: a new tf.function every call, made at mystep.py:12: define it once, outside "
        "the step, and call that one"
    )


def test_each_cause_from_what_a_call_makes_and_the_state_that_grows():
    def cause(made=None, **tf):
        return layers.cause(figures(tf=tf, made=made or {}))

    assert cause({"functions": 0.0, "graphs": 1.0}) == "retracing"
    assert cause(traces=1.0, graphs=1.0) == "retracing"  # the traced graphs are alive too
    assert cause(graph_ops=3.0) == "graph-ops"
    assert cause(variables=1.0) == "variables"
    assert cause(sessions=1.0) == "sessions"
    assert cause(tensors=1.0) == "tensors"
    assert cause(graphs=0.2, traces=0.1) is None
    assert layers.cause_text(figures()) == ""


def test_memrays_figure_and_the_conclusion_never_contradict():
    """memray saw native memory never freed but no stack above the floor: the conclusion
    does not say it saw none."""
    seen = figures(
        native_bytes_per_call=64 * KiB,
        native={"available": True, "bytes_per_call": 60 * KiB, "stacks": []},
    )
    assert "memray saw no native allocation" not in layers.conclusion(seen)
    unseen = figures(
        native_bytes_per_call=64 * KiB,
        native={"available": True, "bytes_per_call": 0.0, "stacks": []},
    )
    assert "memray saw no native allocation" in layers.conclusion(unseen)


def test_a_python_share_is_never_above_all_of_what_is_kept():
    more = figures(retained_bytes_per_call=4 * KiB, python_bytes_per_call=16 * KiB)
    assert "(100% of what the step keeps)" in layers.conclusion(more)


def test_a_python_objects_stack_is_told_by_its_allocating_frames_only():
    """The interpreter calling into TensorFlow (an allocation made under _PyObject_Call) is
    no Python object's memory; an allocation made by PyObject_Malloc is."""
    from tfbench.explain.probe import _python_object

    assert _python_object(["malloc", "_PyMem_RawMalloc", "PyObject_Malloc", "list_new"])
    assert not _python_object(
        ["malloc", "operator new", "tensorflow::Graph::AddNode", "_PyObject_MakeTpCall"]
    )


def _explain(function: str) -> dict:
    found = explain_isolated(
        FunctionTarget(str(CAUSES), function), Limits(timeout_s=300, quiet=True)
    )
    assert found["status"] == "ok", found.get("error")
    return found


@pytest.mark.slow
def test_a_list_of_arrays_is_python_objects_at_the_users_line():
    found = _explain("arrays")
    assert found["layer"] == "python"
    assert found["python_bytes_per_call"] == pytest.approx(64 * KiB, rel=0.05)
    where = f"{CAUSES.relative_to(ROOT)}:15"  # the step's own line, not NumPy's
    assert found["sites"][0]["where"] == where
    assert {"type": "ndarray", "per_call": 1.0} in found["objects"]
    assert found["native_bytes_per_call"] < 4 * KiB


@pytest.mark.slow
def test_a_malloc_no_object_owns_is_native():
    found = _explain("native")
    assert found["layer"] == "native"
    assert found["native_bytes_per_call"] == pytest.approx(64 * KiB, rel=0.05)
    assert found["python_bytes_per_call"] < 1 * KiB


@pytest.mark.slow
def test_cycles_are_garbage_with_their_type_and_line():
    found = _explain("cycles")
    assert found["layer"] == "garbage" and found["leak"] is False
    assert found["garbage_bytes_per_call"] == pytest.approx(128 * KiB, rel=0.05)
    assert found["native_bytes_per_call"] < 4 * KiB
    assert {"type": "Node", "per_call": 2.0} in found["garbage"]["types"]
    assert found["garbage"]["sites"][0]["where"].startswith(f"{CAUSES.relative_to(ROOT)}:")
    assert "garbage: cycles awaiting the collector" in found["conclusion"]


@pytest.mark.slow
def test_ops_added_to_the_default_graph_are_the_graph():
    found = _explain("graph_ops")
    assert found["layer"] == "tf-graph_ops"
    assert found["tf"]["graph_ops"] == pytest.approx(3.0)  # two constants and their sum


@pytest.mark.slow
def test_a_new_python_scalar_each_call_is_traces():
    found = _explain("retrace")
    assert found["layer"] == "tf-traces"
    assert found["tf"]["traces"] == pytest.approx(1.0)


def _line(marker: str) -> str:
    """causes.py:N, N the line holding `marker`."""
    lines = CAUSES.read_text().splitlines()
    return f"{CAUSES.relative_to(ROOT)}:{next(k for k, t in enumerate(lines, 1) if marker in t)}"


@pytest.mark.slow
def test_a_new_function_kept_every_call_is_live_graphs_made_at_the_users_line():
    """A @tf.function defined in the step and kept in a list: a graph a call stays alive,
    the cause named at the line that defines it, held by the module's list."""
    found = _explain("new_function")
    assert found["layer"] == "tf-graphs" and found["leak"] is True
    assert found["tf"]["graphs"] == pytest.approx(1.0, abs=0.1)
    assert found["made"]["functions"] == pytest.approx(1.0)
    assert found["made"]["functions_at"] == _line("@tf.function  # a new function")
    assert found["holder"]["path"].startswith("causes.FUNCTIONS[")
    assert "cause: a new tf.function every call, made at" in found["conclusion"]


@pytest.mark.slow
@pytest.mark.parametrize(
    "step, state, held, cause",
    [
        ("variables", "variables", "VARIABLES", "a new tf.Variable every call"),
        ("tensors", "tensors", "TENSORS", "a tensor kept every call"),
    ],
)
def test_tensorflow_objects_kept_in_a_list_are_its_state_not_unowned(step, state, held, cause):
    """64 KiB variables, or 64 KiB eager tensors (the article's returned tensors), kept in a
    list: their native memory is theirs, not 'no Python object owns', with the cause and the
    list that holds them."""
    found = _explain(step)
    assert found["layer"] == f"tf-{state}" and found["leak"] is True
    assert found["tf"][state] == pytest.approx(1.0, abs=0.1)
    assert found["retained_bytes_per_call"] == pytest.approx(64 * KiB, rel=0.1)
    assert "no Python object owns" not in found["conclusion"]
    assert found["holder"]["path"].startswith(f"causes.{held}[")
    assert f"cause: {cause}" in found["conclusion"]


@pytest.mark.slow
def test_a_flat_step_is_explained_by_nothing():
    run = subprocess.run(
        [sys.executable, "-m", "tfbench", "explain", f"{CAUSES}::flat"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    assert "-> flat" in run.stdout and "nothing grows" in run.stdout


class Kept:
    """An object a module's list holds."""


class Slotted:
    __slots__ = ("held",)

    def __init__(self, held: object) -> None:
        self.held = held


def test_the_holder_is_spelled_from_the_nearest_module_down(monkeypatch):
    """A module's list, a dict's key, an object's attribute and slot, a closure's cell: each
    step as Python spells it."""
    import types

    from tfbench.explain.holders import Index

    module = types.ModuleType("cache_module")
    target = Kept()

    def make():
        inner = Slotted({"key": [target]})
        return lambda: inner

    holder = Kept()
    holder.registry = {"fn": make()}
    module.CACHE = [None, holder]
    monkeypatch.setitem(__import__("sys").modules, "cache_module", module)
    path = Index().holder(target)
    assert path == (
        "cache_module.CACHE[1].registry['fn'] (<lambda>).__closure__[0].cell_contents"
        ".held['key'][0] (Kept)"
    )
    assert Index().holder(Kept()) is None  # nothing holds a temporary: no path


def test_a_users_file_loaded_by_path_is_spelled_by_its_name():
    """A step's module is loaded from its path under a name of tfbench's, in no
    sys.modules: its globals are spelled by the file's stem."""
    import types

    from tfbench.explain.holders import Index

    target = Kept()
    module = types.ModuleType("tfbench_user_mystep")
    module.__file__ = "/home/me/mystep.py"
    module.KEPT = [target]
    assert Index().holder(target) == "mystep.KEPT[0] (Kept)"


def test_counts_read_whole_from_ten_up():
    """+641 dict/call, 1,370 objects/call: not +6.4e+02, 1.37e+03."""
    found = figures(
        leak=False,
        retained_bytes_per_call=0.0,
        garbage_bytes_per_call=905 * KiB,
        garbage_objects_per_call=1370.4,
        objects=[{"type": "dict", "per_call": 641.0}, {"type": "cell", "per_call": 0.5}],
        garbage={"types": [], "sites": []},
        collector={},
    )
    assert "in 1,370 objects/call" in layers.garbage(found)
    kept = figures(
        python_bytes_per_call=64 * KiB,
        objects=[{"type": "dict", "per_call": 641.0}, {"type": "cell", "per_call": 0.5}],
    )
    assert "+641 dict/call, +0.5 cell/call" in layers.conclusion(kept)


def test_the_tensorflow_line_names_every_state_a_layer_can_be():
    """Each of TF_STATE's counts is on the explanation's TensorFlow line: the layer named
    in the conclusion has its figure beside it."""
    from tfbench.cli import output

    tf = {key: 1.0 for key in layers.TF_STATE}
    line = output._tf({"tf": tf})
    assert line.count("+1") == len(layers.TF_STATE) and "eager tensors +1" in line
