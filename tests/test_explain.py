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
