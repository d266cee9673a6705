"""Which layer holds a step's growth, from what an explaining run read (tfbench.explain.probe):
Python objects (tracemalloc's sites), TensorFlow's state (graph operations, tf.function
traces, open Sessions), native memory no Python object owns (what the step keeps after a
full collection that tracemalloc does not account for; memray's stacks say where), garbage
(cycles awaiting Python's collector: what a full collection frees, kept by nothing), or none
of them while RSS grows (the heap not given back). Pure: tested on hand-made figures.
"""

from __future__ import annotations

from typing import Any

from tfbench.units import format_bytes

# What a user's loop can do where garbage piles until a full collection (the other way, a
# step that leaves none, is named where it is known: model(x) for model.predict).
ADVICE = "gc.collect() every few hundred calls bounds it"

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
    """python | tf-graph_ops | tf-traces | tf-sessions | native | garbage | heap | none:
    where the growth is. TensorFlow's own state comes first (its memory shows as native and
    Python allocations alike, but its cause is the state); then whichever of Python objects
    and native memory holds more bytes per call; where the step keeps nothing, garbage when
    it leaves cycles a collection frees, heap when RSS grows (the allocator did not give
    freed memory back)."""
    whole, _ = kept(figures)
    unreturned = figures.get("unreturned_bytes_per_call") or 0.0
    if not figures["leak"] and whole < NOTABLE:
        if (figures.get("garbage_bytes_per_call") or 0.0) >= NOTABLE:
            return "garbage"
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
    """One line: how much the step grows, which layer holds it, and the evidence; the
    garbage it leaves beside what it keeps."""
    text = _owner(figures)
    if layer(figures) != "garbage" and (figures.get("garbage_bytes_per_call") or 0) >= NOTABLE:
        text += f"; and {garbage(figures)}"
    return text


def _owner(figures: dict[str, Any]) -> str:
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
    if found == "garbage":
        return f"{head}: {garbage(figures)}"
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


def garbage(figures: dict[str, Any]) -> str:
    """The garbage a step leaves: how much, in what, made where, how high a loop piles it
    before a collection frees it, and what a user can do."""
    text = (
        f"garbage: cycles awaiting the collector, {_per_call(figures['garbage_bytes_per_call'])}"
        f" in {figures.get('garbage_objects_per_call') or 0:.3g} objects/call"
    )
    found = figures.get("garbage") or {}
    if found.get("types"):
        text += " (" + ", ".join(t["type"] for t in found["types"][:3]) + ")"
    if found.get("sites"):
        text += f" made at {found['sites'][0]['where']}"
    collector = figures.get("collector") or {}
    if collector.get("full_every") and collector.get("pile_bytes"):
        text += (
            f"; a loop holds {format_bytes(collector['pile_bytes'])} of it before Python's full "
            f"collection frees it, every ~{collector['full_every']:,.0f} calls: {ADVICE}"
        )
    return text
