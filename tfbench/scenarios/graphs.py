"""Graph construction vs eager, from "Does TensorFlow's graph construction in a loop cause
memory leaks?", and TF1 sessions, from "What causes TensorFlow 1 CPU memory leaks?".

Every graph-mode step computes sum(x @ x) for the same x, so the leaky patterns and their
fixes can be checked against each other. Graph-mode code runs in explicit graph contexts
with eager execution left on: nothing here changes process-wide state.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from tfbench.measure.devices import Unsupported, require, tf_name
from tfbench.scenarios import register_family

SIZE = 64
DEVICE_PARAMS = {"device": ("CPU", "GPU"), "allow_growth": ("off", "on")}


def matrix(size: int = SIZE, seed: int = 1) -> np.ndarray:
    """A seeded float32 input, scaled so that sums stay small."""
    return (np.random.default_rng(seed).standard_normal((size, size)) / size).astype(np.float32)


def _v1(device: str, allow_growth: str):
    """tf.compat.v1 and a session config for the device; allow_growth is a GPU setting."""
    require(device)
    if device == "CPU" and allow_growth == "on":
        raise Unsupported("allow_growth applies to GPU memory only")
    import tensorflow as tf

    v1 = tf.compat.v1
    config = v1.ConfigProto()
    config.gpu_options.allow_growth = allow_growth == "on"
    return tf, v1, config


def _work(graph, x: np.ndarray, device: str):
    """Add this iteration's ops to `graph`: sum(x @ x)."""
    import tensorflow as tf

    with graph.as_default(), graph.device(tf_name(device)):
        a = tf.constant(x)
        return tf.reduce_sum(tf.matmul(a, a))


def with_graph_ops(step: Callable[[], Any], graph_of: Callable[[], Any]) -> Callable[[], Any]:
    """Give `step` a `graph_ops` counter: the operations in the graph it builds on."""
    step.counters = lambda: {"graph_ops": len(graph_of().get_operations())}  # type: ignore[attr-defined]
    return step


def _graph_per_iteration(
    device: str, allow_growth: str, graph_for: Callable[[Any, Any], Any]
) -> Callable[[], Any]:
    """Each step builds its ops on `graph_for(tf, v1)` and runs them in a new Session."""
    tf, v1, config = _v1(device, allow_growth)
    x = matrix()
    last = [v1.get_default_graph()]

    def step():
        last[0] = graph = graph_for(tf, v1)
        out = _work(graph, x, device)
        with v1.Session(graph=graph, config=config) as sess:
            return sess.run(out)

    return with_graph_ops(step, lambda: last[0])


def _reset_default(tf, v1):
    v1.reset_default_graph()
    return v1.get_default_graph()


def session_per_iteration(device: str, allow_growth: str) -> Callable[[], Any]:
    return _graph_per_iteration(device, allow_growth, lambda tf, v1: v1.get_default_graph())


def reset_default_graph(device: str, allow_growth: str) -> Callable[[], Any]:
    return _graph_per_iteration(device, allow_growth, _reset_default)


def fresh_graph(device: str, allow_growth: str) -> Callable[[], Any]:
    return _graph_per_iteration(device, allow_growth, lambda tf, v1: tf.Graph())


def build_once(device: str, allow_growth: str) -> Callable[[], Any]:
    tf, v1, config = _v1(device, allow_growth)
    graph = tf.Graph()
    out = _work(graph, matrix(), device)
    sess = v1.Session(graph=graph, config=config)
    return with_graph_ops(lambda: sess.run(out), lambda: graph)


def eager_loop(device: str) -> Callable[[], Any]:
    require(device)
    import tensorflow as tf

    x_np = matrix()

    def step():
        with tf.device(tf_name(device)):
            x = tf.constant(x_np)
            y = tf.reduce_sum(tf.matmul(x, x))
            result = y.numpy()
            del x, y
        return result

    return step


def _variable_grad(tf, v):
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.matmul(v, v))
    return loss.numpy(), tape.gradient(loss, v).numpy()


def variable_per_iteration(device: str) -> Callable[[], Any]:
    require(device)
    import tensorflow as tf

    x = matrix()

    def step():
        with tf.device(tf_name(device)):
            return _variable_grad(tf, tf.Variable(x))

    return step


def variable_reused(device: str) -> Callable[[], Any]:
    require(device)
    import tensorflow as tf

    x = matrix()
    with tf.device(tf_name(device)):
        v = tf.Variable(x)

    def step():
        with tf.device(tf_name(device)):
            v.assign(x)
            return _variable_grad(tf, v)

    return step


def _session_graph(device: str, allow_growth: str):
    tf, v1, config = _v1(device, allow_growth)
    graph = tf.Graph()
    return v1, config, graph, _work(graph, matrix(), device)


def session_unclosed(device: str, allow_growth: str) -> Callable[[], Any]:
    v1, config, graph, out = _session_graph(device, allow_growth)
    kept = []

    def step():
        kept.append(v1.Session(graph=graph, config=config))  # referenced, never closed
        return kept[-1].run(out)

    return step


def session_with_block(device: str, allow_growth: str) -> Callable[[], Any]:
    v1, config, graph, out = _session_graph(device, allow_growth)

    def step():
        with v1.Session(graph=graph, config=config) as sess:
            return sess.run(out)

    return step


def session_explicit_close(device: str, allow_growth: str) -> Callable[[], Any]:
    v1, config, graph, out = _session_graph(device, allow_growth)

    def step():
        sess = v1.Session(graph=graph, config=config)
        try:
            return sess.run(out)
        finally:
            sess.close()

    return step


def graph_accumulation(device: str, allow_growth: str) -> Callable[[], Any]:
    """`a = tf.add(a, c)` and `sess.run(a)` every iteration: the graph and each run grow."""
    tf, v1, config = _v1(device, allow_growth)
    graph = tf.Graph()
    with graph.as_default(), graph.device(tf_name(device)):
        c = tf.constant(matrix())
        state = [tf.zeros_like(c)]
    sess = v1.Session(graph=graph, config=config)

    def step():
        with graph.as_default(), graph.device(tf_name(device)):
            state[0] = tf.add(state[0], c)
        return sess.run(state[0])

    return with_graph_ops(step, lambda: graph)


def assign_in_place(device: str, allow_growth: str) -> Callable[[], Any]:
    """The fix: one variable and one update op, built once and run every iteration."""
    tf, v1, config = _v1(device, allow_growth)
    graph = tf.Graph()
    with graph.as_default(), graph.device(tf_name(device)):
        c = tf.constant(matrix())
        a = v1.Variable(tf.zeros_like(c), use_resource=True)
        update = v1.assign_add(a, c)
        init = v1.global_variables_initializer()
    sess = v1.Session(graph=graph, config=config)
    sess.run(init)
    return with_graph_ops(lambda: sess.run(update), lambda: graph)


GRAPH = {
    "graph.session_per_iteration": (
        session_per_iteration,
        "new ops and a new Session every iteration on the default graph (the article's example 1)",
    ),
    "graph.reset_default_graph": (
        reset_default_graph,
        "as session_per_iteration, with tf.compat.v1.reset_default_graph() first",
    ),
    "graph.fresh_graph": (fresh_graph, "as session_per_iteration, in a new tf.Graph each time"),
    "graph.build_once": (build_once, "ops and Session built once, run every iteration"),
    "session.unclosed": (session_unclosed, "a new Session per iteration, kept referenced"),
    "session.with_block": (session_with_block, "a new Session per iteration in a with block"),
    "session.explicit_close": (
        session_explicit_close,
        "a new Session per iteration, closed explicitly",
    ),
    "session.graph_accumulation": (
        graph_accumulation,
        "a = tf.add(a, c) and sess.run(a) every iteration (the article's example 3)",
    ),
    "session.assign_in_place": (
        assign_in_place,
        "one assign_add op built once, run every iteration",
    ),
}
EAGER = {
    "eager.loop": (
        eager_loop,
        "eager matmul, .numpy() and del every iteration (the article's example 2)",
    ),
    "eager.variable_per_iteration": (
        variable_per_iteration,
        "a new tf.Variable under GradientTape every iteration (example 3)",
    ),
    "eager.variable_reused": (variable_reused, "one tf.Variable, assigned every iteration"),
}

register_family(GRAPH, DEVICE_PARAMS, iterations=200, warmup=20)
register_family(EAGER, {"device": ("CPU", "GPU")}, iterations=200, warmup=20)
