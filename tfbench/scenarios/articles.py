"""The five articles' fifteen Python examples, as written (the report's "Articles" section).

Each scenario runs one example's code: its prologue (imports, definitions, models, sessions)
in `prepare`, its loop body as the step; the probe supplies the iterations. The only
changes, each stated in the scenario's description:
- TF1 names through tf.compat.v1, and TF1's graph mode (disable_eager_execution) for TF1
  code; graph mode stays in the example's own process (the probe's fresh child, asv's
  benchmark process), never in a caller's;
- the loop body is the step: the article's iteration count is the probe's;
- print() writes to a sink (the tensor is still formatted), not to the probe's output;
- a size reduced where the literal one cannot fit the memory budget or time (the factor
  is stated);
- exceptions raised in an example's threads fail the step (Python would only print them).
An example that raises on a release is measured as such: its error is the result there.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any

from tfbench.scenarios import register_family

SINK = open(os.devnull, "w")  # noqa: SIM115 - the examples' print() target, for the process
# 001's examples 1 and 2 build two constants of 10,000,000 floats per call, into the default
# graph, and open a new Session (which copies the whole graph) per call: N calls hold
# N x 80 MB and copy O(N^2) bytes. At 1/100 of the size the probe's 50 calls take seconds.
SESSION_FLOATS = 10_000_000 // 100


def _graph_mode():
    """TF1's default: graph mode, for this process only (see the module's note)."""
    import tensorflow as tf

    tf.compat.v1.disable_eager_execution()
    return tf


def _counted(
    step: Callable[[], Any], graph: Callable[[], Any] | None = None, function: Any = None
) -> Callable[[], Any]:
    """The step with counters: the graph's operations (in all, and added per call) and the
    tf.function's traces, read after the run."""
    state = {"calls": 0, "ops": len(graph().get_operations()) if graph else 0}

    def counted():
        state["calls"] += 1
        return step()

    def counters() -> dict[str, float]:
        found: dict[str, float] = {}
        if graph:
            ops = len(graph().get_operations())
            found["graph_ops"] = ops
            found["graph_ops_per_call"] = (ops - state["ops"]) / max(1, state["calls"])
        if function is not None:
            found["traces"] = function.experimental_get_tracing_count()
        return found

    counted.counters = counters  # type: ignore[attr-defined]
    return counted


def _default_graph():
    import tensorflow as tf

    return tf.compat.v1.get_default_graph()


def _threads_raise(body: Callable[[], None]) -> Callable[[], None]:
    """`body` (which starts and joins threads), raising the first exception of a thread."""

    def step():
        errors: list[BaseException | None] = []
        previous = threading.excepthook
        threading.excepthook = lambda args: errors.append(args.exc_value)
        try:
            body()
        finally:
            threading.excepthook = previous
        if errors:
            raise errors[0]

    return step


# 000: "Does TensorFlow's graph construction in a loop cause memory leaks?"


def graphs_ex1() -> Callable[[], Any]:
    tf = _graph_mode()  # the example's own first line

    def step():
        with tf.compat.v1.Session() as sess:
            x = tf.constant(list(range(10000)))  # Large tensor created in each iteration
            y = tf.square(x)
            result = sess.run(y)  # Result is used, but x and y remain in memory
        return result

    return _counted(step, _default_graph)


def graphs_ex2() -> Callable[[], Any]:
    import tensorflow as tf

    tf.compat.v1.enable_eager_execution()  # Using eager execution

    def step():
        x = tf.constant(list(range(10000)))
        y = tf.square(x)
        result = y.numpy()  # Explicit conversion to NumPy array releases Tensor memory
        del x, y  # Explicitly delete tensors from memory
        return result

    return step


def graphs_ex3() -> Callable[[], Any]:
    import tensorflow as tf

    tf.compat.v1.enable_eager_execution()

    def step():
        with tf.GradientTape() as tape:  # Tape is used and then garbage collected.
            var = tf.Variable(tf.random.normal([100, 100]))  # Variable created in each iteration
            loss = tf.reduce_sum(var)
            grads = tape.gradient(loss, var)
        return grads

    return step


# 001: "What causes TensorFlow 1 CPU memory leaks?"


def sessions_ex1() -> Callable[[], Any]:
    tf = _graph_mode()

    def leaky_function():
        with tf.compat.v1.Session() as sess:
            a = tf.constant([1.0] * SESSION_FLOATS)  # Large tensor
            b = tf.constant([2.0] * SESSION_FLOATS)
            c = tf.add(a, b)
            sess.run(c)  # This runs but the session remains open.

    return _counted(leaky_function, _default_graph)


def sessions_ex2() -> Callable[[], Any]:
    tf = _graph_mode()

    def non_leaky_function():
        with tf.compat.v1.Session() as sess:
            a = tf.constant([1.0] * SESSION_FLOATS)
            b = tf.constant([2.0] * SESSION_FLOATS)
            c = tf.add(a, b)
            sess.run(c)
            # Explicitly closing the session releases allocated memory
            sess.close()  # this is crucial

    return _counted(non_leaky_function, _default_graph)


def sessions_ex3() -> Callable[[], Any]:
    tf = _graph_mode()
    sess = tf.compat.v1.Session().__enter__()  # the example's with block, open for the loop
    results = []
    a = [tf.constant([1.0])]

    def step():  # one pass of `for i in range(1000000)`
        a[0] = tf.add(a[0], tf.constant([1.0]))
        results.append(sess.run(a[0]))  # each iteration adds to memory usage

    return _counted(step, _default_graph)


# 002: "Does custom TensorFlow training using @tf.function exhibit memory leaks?"


def functions_ex1() -> Callable[[], Any]:
    import tensorflow as tf

    @tf.function
    def accumulate_tensors(x, count):
        results = []
        for i in tf.range(count):
            results.append(x + i)
        return tf.stack(results)

    x = tf.constant([1.0, 2.0])

    def step():
        y = accumulate_tensors(x, 10000)
        print(tf.reduce_sum(y), file=SINK)

    return _counted(step, function=accumulate_tensors)


def functions_ex2() -> Callable[[], Any]:
    import tensorflow as tf

    external_state = {"counter": 0}

    @tf.function
    def increment_state(x):
        external_state["counter"] += 1
        return x + external_state["counter"]

    x = tf.constant(1.0)

    def step():
        y = increment_state(x)
        print(y, file=SINK)
        return y

    return _counted(step, function=increment_state)


def functions_ex3() -> Callable[[], Any]:
    import tensorflow as tf

    @tf.function
    def process_data(x, n):
        acc = tf.constant(0.0)
        for _ in tf.range(n):
            acc = acc + x
        return acc

    x = tf.constant(1.0)

    def step():
        y = process_data(x, 100)
        print(y, file=SINK)
        return y

    return _counted(step, function=process_data)


# 003: "How can I optimize TensorFlow loop memory usage?" Each example is one timed call.
LOOP_MATRIX_SIZE, LOOP_ITERATIONS = 100, 100


def loops_ex1() -> Callable[[], Any]:
    import tensorflow as tf

    def naive_loop(iterations, matrix_size):
        a = tf.random.normal((matrix_size, matrix_size))
        res = a
        for i in range(iterations):  # noqa: B007 - as written
            res = tf.matmul(res, a)
        return res

    return lambda: naive_loop(LOOP_ITERATIONS, LOOP_MATRIX_SIZE)


def loops_ex2() -> Callable[[], Any]:
    import tensorflow as tf

    def optimized_loop(iterations, matrix_size):
        a = tf.random.normal((matrix_size, matrix_size))
        initial_res = tf.identity(a)

        def condition(i, res):
            return i < iterations

        def body(i, res):
            return i + 1, tf.matmul(res, a)

        _, result = tf.while_loop(
            cond=condition,
            body=body,
            loop_vars=[tf.constant(0), initial_res],
            shape_invariants=[tf.TensorShape([]), tf.TensorShape((matrix_size, matrix_size))],
        )
        return result

    return lambda: optimized_loop(LOOP_ITERATIONS, LOOP_MATRIX_SIZE)


def loops_ex3() -> Callable[[], Any]:
    import numpy as np
    import tensorflow as tf

    def numpy_loop(iterations, matrix_size):
        a = np.random.normal(size=(matrix_size, matrix_size))
        res = a
        for i in range(iterations):  # noqa: B007 - as written
            res = np.dot(res, a)
        return tf.constant(res)  # Wrap in tf.constant once the numpy computation is complete.

    def step():
        with np.errstate(over="ignore", invalid="ignore"):  # the products overflow, silently
            return numpy_loop(LOOP_ITERATIONS, LOOP_MATRIX_SIZE)

    return step


# 004: "Why is my TensorFlow model experiencing memory leaks during prediction?"


def predict_ex1() -> Callable[[], Any]:
    import tensorflow as tf

    class StatefulModel(tf.keras.Model):
        def __init__(self):
            super(StatefulModel, self).__init__()  # noqa: UP008 - as written
            self.dense = tf.keras.layers.Dense(10)

        def call(self, inputs):
            noise = tf.random.normal(inputs.shape, mean=0.0, stddev=1.0)
            return self.dense(inputs + noise)

    model = StatefulModel()
    input_data = tf.random.normal((1, 5))
    return lambda: model(input_data)  # Prediction call within a loop


def predict_ex2() -> Callable[[], Any]:
    import tensorflow as tf

    def leaky_prediction(model, inputs):
        intermediate_tensor = model(inputs)
        return intermediate_tensor  # This reference can cause issues if returned

    class SimpleModel(tf.keras.Model):
        def __init__(self):
            super(SimpleModel, self).__init__()  # noqa: UP008 - as written
            self.dense = tf.keras.layers.Dense(10)

        def call(self, inputs):
            return self.dense(inputs)

    model = SimpleModel()
    input_data = tf.random.normal((1, 5))
    return lambda: leaky_prediction(model, input_data)


def predict_ex3() -> Callable[[], Any]:
    tf = _graph_mode()
    v1 = tf.compat.v1
    graph = tf.Graph()
    with graph.as_default():
        input_placeholder = v1.placeholder(tf.float32, shape=(1, 5))
        dense_layer = v1.layers.dense(input_placeholder, 10)
        output = dense_layer
        sess = v1.Session()
        sess.run(v1.global_variables_initializer())

    def prediction_task():
        input_data = v1.random_normal((1, 5), dtype=tf.float32)
        for _ in range(100):
            sess.run(output, feed_dict={input_placeholder: input_data.eval(session=sess)})
            # Problematic in TF1: sess is shared between threads

    def run_threads():
        threads = []
        for _ in range(10):
            thread = threading.Thread(target=prediction_task)
            threads.append(thread)
            thread.start()
        for thread in threads:
            thread.join()

    return _counted(_threads_raise(run_threads), _default_graph)


GRAPH_MODE = "TF1 graph mode (disable_eager_execution) in its own process"
TF1 = f"tf.compat.v1 names; {GRAPH_MODE}"
SINKED = "print() to a sink"
EXAMPLES = {
    "article.graphs.ex1": (
        graphs_ex1,
        f"000 ex1: a Session, a 10,000-int constant and tf.square per iteration ({GRAPH_MODE})",
    ),
    "article.graphs.ex2": (graphs_ex2, "000 ex2: eager constant, tf.square, .numpy(), del"),
    "article.graphs.ex3": (graphs_ex3, "000 ex3: a new 100x100 tf.Variable under a tape"),
    "article.sessions.ex1": (
        sessions_ex1,
        f"001 ex1: with tf.Session(), two constants, tf.add, run ({TF1}; constants of "
        f"{SESSION_FLOATS:,} floats, 1/100 of the article's: see SESSION_FLOATS)",
    ),
    "article.sessions.ex2": (
        sessions_ex2,
        f"001 ex2: as ex1 with sess.close() in the block ({TF1}; 1/100 size as ex1)",
    ),
    "article.sessions.ex3": (
        sessions_ex3,
        f"001 ex3: a = tf.add(a, tf.constant([1.0])); sess.run(a), one loop pass ({TF1})",
    ),
    "article.functions.ex1": (
        functions_ex1,
        f"002 ex1: Python list appended in a tf.range loop, stacked ({SINKED})",
    ),
    "article.functions.ex2": (
        functions_ex2,
        f"002 ex2: a tf.function incrementing a captured dict ({SINKED})",
    ),
    "article.functions.ex3": (
        functions_ex3,
        f"002 ex3: acc = acc + x over tf.range(100) ({SINKED})",
    ),
    "article.loops.ex1": (loops_ex1, "003 ex1: naive_loop(100, 100), 100 eager tf.matmul"),
    "article.loops.ex2": (loops_ex2, "003 ex2: optimized_loop(100, 100), tf.while_loop eagerly"),
    "article.loops.ex3": (
        loops_ex3,
        "003 ex3: numpy_loop(100, 100), np.dot then tf.constant (overflow warnings muted)",
    ),
    "article.predict.ex1": (
        predict_ex1,
        "004 ex1: model(x) of a Keras model with tf.random.normal in call()",
    ),
    "article.predict.ex2": (predict_ex2, "004 ex2: leaky_prediction(model, x) returns model(x)"),
    "article.predict.ex3": (
        predict_ex3,
        f"004 ex3: 10 threads x 100 sess.run of a tf.layers.dense graph ({TF1}; a thread's "
        "exception fails the step)",
    ),
}

register_family(EXAMPLES, {}, iterations=40, warmup=10)
