"""Which layer holds a step's growth, from what an explaining run read (tfbench.explain.probe):
Python objects (tracemalloc's sites), TensorFlow's state (graph operations, graphs and
variables alive, tf.function traces, open Sessions: the objects that own the native memory
behind them), native memory no Python object owns (what the step keeps after a full
collection that tracemalloc does not account for and no TensorFlow object holds; memray's
stacks say where), garbage (cycles awaiting Python's collector: what a full collection
frees, kept by nothing), or none of them while RSS grows (the heap not given back); what
holds the objects that survive; and the cause users hit most behind it, with its fix. Pure:
tested on hand-made figures.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from tfbench.units import format_bytes

# A TensorFlow count that rises by half a unit or more per call is that state growing
# (the report's findings use the same threshold for graph operations).
TF_GROWTH = 0.5
# Below this, a layer's bytes per call are not named as holding the growth.
NOTABLE = 1024
# TensorFlow's state, in the order it is named when several grow (the most specific cause
# first: a graph of a retraced function is alive too): count -> (what grows, its unit).
TF_STATE = {
    "graph_ops": ("the default graph grows", "ops"),
    "traces": ("tf.function retraces", "traces"),
    "sessions": ("Sessions stay open", "Sessions"),
    "variables": ("variables stay alive", "variables"),
    "graphs": ("graphs stay alive", "graphs"),
    "tensors": ("eager tensors stay alive", "tensors"),
}
# The causes users hit most, each with its fix: cause -> (what the step does, the fix).
CAUSES = {
    "new-function": (
        "a new tf.function every call",
        "define it once, outside the step, and call that one",
    ),
    "retracing": (
        "tf.function retraces every call (a new Python value or shape)",
        "pass tensors, not Python values, or give it an input_signature",
    ),
    "graph-ops": (
        "ops added to the default graph every call",
        "build the ops once, outside the loop, and run them (Graph.finalize() makes adding "
        "one an error)",
    ),
    "variables": (
        "a new tf.Variable every call",
        "create it once, outside the step, and assign() to it",
    ),
    "tensors": (
        "a tensor kept every call",
        "keep what you need as NumPy (`.numpy()`) or a number, and let the tensor go",
    ),
    "sessions": (
        "a Session left open every call",
        "close it (`with tf.compat.v1.Session() as s:`) or run one for the whole loop",
    ),
}
# A full collection with TensorFlow imported walks ~300,000 objects (~0.2 s); after
# gc.freeze() it walks only what was made since (~2 ms, docs/measuring.md).
FREEZE = "gc.freeze() after setting up makes each one milliseconds"


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
    """The part's share of what the step keeps (tracemalloc's window is its own: a share
    above all of it is said as all of it)."""
    whole, what = kept(figures)
    return f"{min(part / whole, 1.0):.0%} of {what}" if whole > 0 else f"{what}: nothing"


def growing(figures: dict[str, Any]) -> list[str]:
    """TensorFlow's counts that grow by TF_GROWTH or more a call, in TF_STATE's order."""
    tf = figures.get("tf") or {}
    return [k for k in TF_STATE if (tf.get(k) or 0) >= TF_GROWTH]


def cause(figures: dict[str, Any]) -> str | None:
    """Which of CAUSES the figures show (what each call makes, and TensorFlow's state that
    grows), or None."""
    made = figures.get("made") or {}
    state = growing(figures)
    if (made.get("functions") or 0) >= TF_GROWTH:
        return "new-function"
    if "traces" in state or (made.get("graphs") or 0) >= TF_GROWTH:
        return "retracing"
    for key, found in (
        ("graph_ops", "graph-ops"),
        ("variables", "variables"),
        ("sessions", "sessions"),
        ("tensors", "tensors"),
    ):
        if key in state:
            return found
    return None


def cause_text(figures: dict[str, Any]) -> str:
    """The cause and its fix, in words ('' where none is known)."""
    found = cause(figures)
    if found is None:
        return ""
    what, fix = CAUSES[found]
    at = (figures.get("made") or {}).get("functions_at")
    where = f", made at {at}" if found == "new-function" and at else ""
    return f"cause: {what}{where}: {fix}"


def _nice(n: float) -> int:
    """The largest of 1, 2, 5 times a power of ten not above n (at least 1)."""
    if n < 1:
        return 1
    power = 10 ** math.floor(math.log10(n))
    return max(k * power for k in (1, 2, 5) if k * power <= n)


def advice(collector: Mapping[str, Any]) -> str:
    """What a loop can do about the garbage it piles until its full collection, fitting the
    period measured: gc.collect() a tenth as often holds a tenth of the pile."""
    every, pile = collector.get("full_every"), collector.get("pile_bytes")
    if not every or not pile:
        return "Python's young collections free it"
    n = _nice(every / 10)
    held = format_bytes(n * pile / every)
    return f"gc.collect() every {n:,} calls holds it under {held} ({FREEZE})"


def layer(figures: dict[str, Any]) -> str:
    """python | tf-<count of TF_STATE> | native | garbage | heap | none: where the growth is.
    TensorFlow's own state comes first (its memory shows as native and Python allocations
    alike, but its cause is the state: graphs alive own the native graphs and functions
    behind them); then whichever of Python objects and native memory holds more bytes per
    call; where the step keeps nothing, garbage when it leaves cycles a collection frees,
    heap when RSS grows (the allocator did not give freed memory back)."""
    whole, _ = kept(figures)
    unreturned = figures.get("unreturned_bytes_per_call") or 0.0
    if not figures["leak"] and whole < NOTABLE:
        if (figures.get("garbage_bytes_per_call") or 0.0) >= NOTABLE:
            return "garbage"
        return "heap" if unreturned >= NOTABLE and figures["rss_bytes_per_call"] > 0 else "none"
    state = growing(figures)
    if state and cause(figures) == "new-function" and "graphs" in state:
        return "tf-graphs"  # each new function's one trace, its graph alive: no retrace
    if state:
        return f"tf-{state[0]}"
    python, native = figures["python_bytes_per_call"], figures["native_bytes_per_call"]
    if max(python, native) < NOTABLE:
        return "none"
    return "python" if python >= native else "native"


def conclusion(figures: dict[str, Any]) -> str:
    """One line: how much the step grows, which layer holds it, and the evidence; what
    holds it and the cause, with its fix; the garbage it leaves beside what it keeps."""
    text = _owner(figures)
    found = layer(figures)
    if found not in ("none", "heap", "garbage"):
        held = (figures.get("holder") or {}).get("path")
        text += f"; held by {held}" if held else ""
        said = cause_text(figures)
        text += f"; {said}" if said else ""
    if found != "garbage" and (figures.get("garbage_bytes_per_call") or 0) >= NOTABLE:
        text += f"; and {garbage(figures)}"
    return text


def _owner(figures: dict[str, Any]) -> str:
    rss, (whole, _) = figures["rss_bytes_per_call"], kept(figures)
    # what the verdict rests on first (what the step keeps, the garbage it leaves), then RSS
    head = "LEAK" if figures["leak"] else "flat"
    if figures.get("retained_bytes_per_call") is not None:
        head += f", keeps {_per_call(whole)}"
    if (figures.get("garbage_bytes_per_call") or 0) >= NOTABLE:
        head += f", garbage {_per_call(figures['garbage_bytes_per_call'])}"
    head += f", RSS {_per_call(rss)}"
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
        text = f"{head}: {what}, {_count(figures['tf'][key])} {unit}/call"
        if native >= NOTABLE:
            text += f", owning {_per_call(native)} of native memory ({_share(native, figures)})"
    elif found == "python":
        text = f"{head}: Python objects hold it, {_per_call(python)} ({_share(python, figures)})"
        if sites:
            text += f" at {sites[0]['where']}"
    else:
        text = f"{head}: {_unowned(native, figures)}"
    if objects:
        text += "; " + ", ".join(f"{_count(o['per_call'])} {o['type']}/call" for o in objects[:3])
    if not memray.get("available"):
        text += f"; native stacks unavailable ({memray.get('why', 'not measured')})"
    return text


def _count(per_call: float) -> str:
    """A count a call, signed: whole from ten up (+641, not +6.4e+02), else two figures."""
    return f"{per_call:+,.0f}" if abs(per_call) >= 10 else f"{per_call:+.2g}"


def _unowned(native: float, figures: dict[str, Any]) -> str:
    """Native memory no Python object owns, and where memray saw it made: its stack, or
    that memray saw none of it (never both: memray's own figure decides)."""
    memray = figures.get("native") or {}
    text = (
        f"native memory no Python object owns holds it, {_per_call(native)} "
        f"({_share(native, figures)})"
    )
    if memray.get("stacks"):
        return text + f" at {memray['stacks'][0]['where']}"
    if memray.get("available") and (memray.get("bytes_per_call") or 0.0) < NOTABLE:
        return text + (
            " (memray saw no native allocation of it: made through a pointer it cannot hook?)"
        )
    return text


def garbage(figures: dict[str, Any]) -> str:
    """The garbage a step leaves: how much, in what, made where, how high a loop piles it
    before a collection frees it, and what a user can do."""
    text = (
        f"garbage: cycles awaiting the collector, {_per_call(figures['garbage_bytes_per_call'])}"
        f" in {_count(figures.get('garbage_objects_per_call') or 0.0).lstrip('+')} objects/call"
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
            f"collection frees it, every ~{collector['full_every']:,.0f} calls: "
            + advice(collector)
        )
    return text
