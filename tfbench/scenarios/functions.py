"""tf.function, from "Does custom TensorFlow training using @tf.function exhibit memory leaks?".

Accumulation: every variant computes the values 2*i for i < count (the accumulator only
their sum). Retracing: every variant computes 2*x + 1 for the iteration's x; what differs is
how x reaches the function, and so how many traces (concrete graphs) pile up.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

from tfbench.measure.devices import require, tf_name
from tfbench.scenarios import register_family

COUNTS = (100, 1000)


def _traced(step: Callable[[], Any], function, **extra: Callable[[], int]) -> Callable[[], Any]:
    step.counters = lambda: {  # type: ignore[attr-defined]  # read by the probe
        "traces": function.experimental_get_tracing_count(),
        **{k: f() for k, f in extra.items()},
    }
    return step


def _on(device: str, tf, call: Callable[[], Any]) -> Callable[[], Any]:
    def step():
        with tf.device(tf_name(device)):
            return call().numpy()

    return step


def list_in_tf_range(count: int, device: str) -> Callable[[], Any]:
    """The article's example 1 as written: a Python list appended to inside tf.range."""
    require(device)
    import tensorflow as tf

    @tf.function
    def values(n):
        out = []
        for i in tf.range(n):
            out.append(tf.cast(i, tf.float32) * 2.0)
        return tf.stack(out)

    n = tf.constant(count)
    return _traced(_on(device, tf, lambda: values(n)), values)


def unrolled_python_range(count: int, device: str) -> Callable[[], Any]:
    """A Python range unrolls into `count` ops in the graph: it works, at a trace cost."""
    require(device)
    import tensorflow as tf

    @tf.function
    def values():
        return tf.stack([tf.cast(i, tf.float32) * 2.0 for i in range(count)])

    return _traced(_on(device, tf, values), values)


def tensorarray(count: int, device: str) -> Callable[[], Any]:
    require(device)
    import tensorflow as tf

    @tf.function
    def values(n):
        out = tf.TensorArray(tf.float32, size=n)
        for i in tf.range(n):
            out = out.write(i, tf.cast(i, tf.float32) * 2.0)
        return out.stack()

    n = tf.constant(count)
    return _traced(_on(device, tf, lambda: values(n)), values)


def accumulator(count: int, device: str) -> Callable[[], Any]:
    """The article's example 3: a tensor accumulated in the loop (only the sum is kept)."""
    require(device)
    import tensorflow as tf

    @tf.function
    def total(n):
        acc = tf.constant(0.0)
        for i in tf.range(n):
            acc += tf.cast(i, tf.float32) * 2.0
        return acc

    n = tf.constant(count)
    return _traced(_on(device, tf, lambda: total(n)), total)


def _affine(tf, **options):
    return tf.function(lambda x: 2 * x + 1, **options)


def retrace_python_scalar(device: str) -> Callable[[], Any]:
    """A new Python int every call: a new trace (and concrete graph) every call."""
    require(device)
    import tensorflow as tf

    f, counter = _affine(tf), itertools.count()
    return _traced(_on(device, tf, lambda: f(next(counter))), f)


def tensor_argument(device: str) -> Callable[[], Any]:
    require(device)
    import tensorflow as tf

    f, counter = _affine(tf), itertools.count()
    return _traced(_on(device, tf, lambda: f(tf.constant(next(counter)))), f)


def input_signature(device: str) -> Callable[[], Any]:
    require(device)
    import tensorflow as tf

    f = _affine(tf, input_signature=[tf.TensorSpec([], tf.int32)])
    counter = itertools.count()
    return _traced(_on(device, tf, lambda: f(next(counter))), f)


def captured_state(device: str) -> Callable[[], Any]:
    """The article's example 2: a Python dict changed inside tf.function runs at trace time
    only; the counter `python_side_effects` shows how often it really ran."""
    require(device)
    import tensorflow as tf

    state = {"calls": 0}

    @tf.function
    def f(x):
        state["calls"] += 1
        return x + state["calls"]

    x = tf.constant(1.0)
    return _traced(_on(device, tf, lambda: f(x)), f, python_side_effects=lambda: state["calls"])


COUNTED = {
    "function.list_in_tf_range": (
        list_in_tf_range,
        "a Python list appended to inside a "
        "tf.range loop in tf.function (the article's example 1)",
    ),
    "function.unrolled_python_range": (
        unrolled_python_range,
        "values collected over a Python range: unrolled into the graph",
    ),
    "function.tensorarray": (tensorarray, "values written to a tf.TensorArray in a tf.range loop"),
    "function.accumulator": (
        accumulator,
        "a tensor accumulated in a tf.range loop (the article's example 3)",
    ),
}
PLAIN = {
    "function.retrace_python_scalar": (
        retrace_python_scalar,
        "a new Python int argument every call: one trace per distinct value",
    ),
    "function.tensor_argument": (tensor_argument, "the value passed as a tensor: one trace"),
    "function.input_signature": (
        input_signature,
        "a Python int through an input_signature: one trace",
    ),
    "function.captured_state": (
        captured_state,
        "a Python dict captured and changed at trace time (the article's example 2)",
    ),
}

register_family(COUNTED, {"count": COUNTS, "device": ("CPU", "GPU")}, iterations=100, warmup=10)
register_family(PLAIN, {"device": ("CPU", "GPU")}, iterations=300, warmup=20)
