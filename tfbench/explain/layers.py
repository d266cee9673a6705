"""Which layer holds a step's growth, from what an explaining run read (tfbench.explain.probe):
Python objects (tracemalloc's sites), TensorFlow's state (graph operations, tf.function
traces, open Sessions), native memory no Python object owns (what the step keeps that
tracemalloc does not account for; memray's stacks say where), or none of them while RSS
grows (the heap not given back). Pure: tested on hand-made figures.
"""

from __future__ import annotations

from typing import Any

from tfbench.units import format_bytes

# A TensorFlow count that rises by half a unit or more per call is that state growing
# (the report's findings use the same threshold for graph operations).
TF_GROWTH = 0.5
# Below this, a layer's bytes per call are not named as holding the growth.
NOTABLE = 1024
TF_STATE = {  # count -> (what grows, its unit)
    "graph_ops": ("the default graph grows", "ops"),
    "traces": ("tf.function retraces", "traces"),
    "sessions": ("Sessions stay open", "Sessions"),
}


def _per_call(bytes_: float) -> str:
    return f"{format_bytes(bytes_)}/call"


def kept(figures: dict[str, Any]) -> tuple[float, str]:
    """What the step keeps per call, and what it is: the heap's growth where it was read,
    else RSS's."""
    retained = figures.get("retained_bytes_per_call")
    if retained is None:
        return figures["rss_bytes_per_call"], "the RSS growth"
    return retained, "what the step keeps"


def _share(part: float, figures: dict[str, Any]) -> str:
    whole, what = kept(figures)
    return f"{part / whole:.0%} of {what}" if whole > 0 else f"{what}: nothing"


def layer(figures: dict[str, Any]) -> str:
    """python | tf-graph_ops | tf-traces | tf-sessions | native | heap | none: where the
    growth is. TensorFlow's own state comes first (its memory shows as native and Python
    allocations alike, but its cause is the state); then whichever of Python objects and
    native memory holds more bytes per call; heap when RSS grows and the step keeps
    nothing (the allocator did not give freed memory back)."""
    whole, _ = kept(figures)
    unreturned = figures.get("unreturned_bytes_per_call") or 0.0
    if not figures["leak"] and whole < NOTABLE:
        return "heap" if unreturned >= NOTABLE and figures["rss_bytes_per_call"] > 0 else "none"
    tf = figures["tf"]
    growing = [k for k in TF_STATE if (tf.get(k) or 0) >= TF_GROWTH]
    if growing:
        return f"tf-{max(growing, key=lambda k: tf[k])}"
    python, native = figures["python_bytes_per_call"], figures["native_bytes_per_call"]
    if max(python, native) < NOTABLE:
        return "none"
    return "python" if python >= native else "native"


def conclusion(figures: dict[str, Any]) -> str:
    """One line: how much the step grows, which layer holds it, and the evidence."""
    rss, (whole, _) = figures["rss_bytes_per_call"], kept(figures)
    head = f"{'LEAK' if figures['leak'] else 'flat'}, RSS {_per_call(rss)}"
    if figures.get("retained_bytes_per_call") is not None:
        head += f", keeps {_per_call(whole)}"
    found = layer(figures)
    python, native = figures["python_bytes_per_call"], figures["native_bytes_per_call"]
    memray = figures.get("native") or {}
    sites = figures.get("sites") or []
    objects = figures.get("objects") or []
    if found == "none":
        return f"{head}: nothing grows that a layer holds"
    if found == "heap":
        unreturned = _per_call(figures["unreturned_bytes_per_call"])
        return (
            f"{head}: RSS grows, nothing retained: the allocator keeps freed memory "
            f"resident (fragmentation or caching), {unreturned}"
        )
    if found.startswith("tf-"):
        key = found[3:]
        what, unit = TF_STATE[key]
        text = f"{head}: {what}, {figures['tf'][key]:+.2g} {unit}/call"
    elif found == "python":
        text = f"{head}: Python objects hold it, {_per_call(python)} ({_share(python, figures)})"
        if sites:
            text += f" at {sites[0]['where']}"
    else:
        text = (
            f"{head}: native memory no Python object owns holds it, {_per_call(native)} "
            f"({_share(native, figures)})"
        )
        if memray.get("stacks"):
            text += f" at {memray['stacks'][0]['where']}"
        elif memray.get("available"):
            text += (
                " (memray saw no native allocation of it: made through a pointer it cannot hook?)"
            )
    if objects:
        text += "; " + ", ".join(f"{o['per_call']:+.2g} {o['type']}/call" for o in objects[:3])
    if not memray.get("available"):
        text += f"; native stacks unavailable ({memray.get('why', 'not measured')})"
    return text
