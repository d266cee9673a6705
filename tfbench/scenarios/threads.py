"""Sessions and threads, from "Why is my TensorFlow model experiencing memory leaks during
prediction?" (example 3).

A step starts `threads` threads that each run sum(x @ x) RUNS_PER_THREAD times, and joins
them; a thread still running after JOIN_TIMEOUT_S fails the step instead of hanging it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from tfbench.measure.devices import require, tf_name
from tfbench.scenarios import register_family
from tfbench.scenarios.graphs import matrix, with_graph_ops

THREADS = (1, 2, 4, 8)
RUNS_PER_THREAD = 2  # new_op_per_run costs more with every op it has added: keep steps short
JOIN_TIMEOUT_S = 60.0


def _run_threads(threads: int, work: Callable[[], float]) -> list[float]:
    results: list[float] = []
    errors: list[BaseException] = []

    def body():
        try:
            for _ in range(RUNS_PER_THREAD):
                value = work()
                results.append(value)
        except BaseException as e:  # reported by the step, not lost in the thread
            errors.append(e)

    pool = [threading.Thread(target=body, daemon=True) for _ in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join(JOIN_TIMEOUT_S)
        if t.is_alive():
            raise TimeoutError(f"a thread did not finish within {JOIN_TIMEOUT_S:.0f} s")
    if errors:
        raise errors[0]
    return sorted(results)


def _graph(device: str):
    require(device)
    import tensorflow as tf

    v1 = tf.compat.v1
    graph = tf.Graph()
    with graph.as_default(), graph.device(tf_name(device)):
        feed = v1.placeholder(tf.float32, shape=matrix().shape)
        out = tf.reduce_sum(tf.matmul(feed, feed))
    return tf, v1, graph, feed, out


def shared_session(threads: int, device: str) -> Callable[[], Any]:
    """One op built with a placeholder, run by every thread in one Session: the fix for
    new_op_per_run (the graph stays at its first ops)."""
    tf, v1, graph, feed, out = _graph(device)
    sess, x = v1.Session(graph=graph), matrix()
    return with_graph_ops(
        lambda: _run_threads(threads, lambda: sess.run(out, {feed: x})), lambda: graph
    )


def session_per_thread(threads: int, device: str) -> Callable[[], Any]:
    tf, v1, graph, feed, out = _graph(device)
    x = matrix()

    def work():
        with v1.Session(graph=graph) as sess:
            return sess.run(out, {feed: x})

    return with_graph_ops(lambda: _run_threads(threads, work), lambda: graph)


def new_op_per_run(threads: int, device: str) -> Callable[[], Any]:
    """The article's pattern: ops built and .eval()'d inside the thread loop."""
    tf, v1, graph, _, _ = _graph(device)
    sess, x = v1.Session(graph=graph), matrix()

    def work():
        with graph.as_default(), graph.device(tf_name(device)), sess.as_default():
            c = tf.constant(x)
            return tf.reduce_sum(tf.matmul(c, c)).eval()

    return with_graph_ops(lambda: _run_threads(threads, work), lambda: graph)


THREADED = {
    "threads.shared_session": (shared_session, "one Session shared by every thread"),
    "threads.session_per_thread": (session_per_thread, "each run in its own Session"),
    "threads.new_op_per_run": (
        new_op_per_run,
        "ops built and .eval()'d inside the thread loop (the article's example 3)",
    ),
}

register_family(THREADED, {"threads": THREADS, "device": ("CPU", "GPU")}, iterations=40, warmup=5)
