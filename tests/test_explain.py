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
        "LEAK, RSS 200 KiB/call, keeps 48 KiB/call: native memory no Python object owns "
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
        "flat, RSS 0 B/call, keeps 100 B/call: garbage: cycles awaiting the collector, "
        "176 KiB/call in 302 objects/call (list); a loop holds 24 MiB of it before Python's "
        "full collection frees it, every ~1,300 calls: gc.collect() every few hundred calls "
        "bounds it"
    )
    both = dict(found, leak=True, retained_bytes_per_call=64 * KiB, native_bytes_per_call=64 * KiB)
    assert layers.layer(both) == "native"
    assert layers.conclusion(both).endswith("; and " + layers.garbage(found))


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
