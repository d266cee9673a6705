"""Loop family: matrix power, from "How can I optimize TensorFlow loop memory usage?".

Every variant computes x**loop_iterations by `loop_iterations` matrix products starting
from the identity (np.linalg.matrix_power squares instead). x is orthogonal, so every
power stays orthogonal and finite: a random normal matrix overflows to inf/NaN within
100 products, and timing inf/NaN is meaningless.

`gradient`: "none" computes the power only; "tape" records it under tf.GradientTape and
takes d sum(x**n) / dx, so the tape keeps every intermediate product alive until then;
"stop_gradient" does the same with tf.stop_gradient on the carried product, so only the
last product is differentiated.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from tfbench.measure.devices import require, tf_name
from tfbench.scenarios import Scenario, register

SIZES = (64, 256)
LOOP_ITERATIONS = (100,)
GRADIENTS = ("none", "tape", "stop_gradient")


def orthogonal(size: int, seed: int = 0) -> np.ndarray:
    """A seeded random orthogonal float32 matrix (Q of a QR factorisation)."""
    q, r = np.linalg.qr(np.random.default_rng(seed).standard_normal((size, size)))
    return (q * np.sign(np.diag(r))).astype(np.float32)


def _tf_step(
    variant: str, gradient: str, size: int, loop_iterations: int, device: str
) -> Callable[[], np.ndarray]:
    require(device)
    import tensorflow as tf

    n = loop_iterations
    carry = tf.stop_gradient if gradient == "stop_gradient" else tf.identity

    def python_loop(x):
        r = tf.eye(size, dtype=x.dtype)
        for _ in range(n):
            r = tf.matmul(carry(r), x)
        return r

    def while_loop(x):
        _, r = tf.while_loop(
            lambda i, r: i < n,
            lambda i, r: (i + 1, tf.matmul(carry(r), x)),
            (tf.constant(0), tf.eye(size, dtype=x.dtype)),
        )
        return r

    power = {
        "python_matmul": python_loop,
        "while_loop_eager": while_loop,
        "while_loop_function": tf.function(while_loop),
        "function_unrolled": tf.function(python_loop),  # range(n) unrolls: n matmul ops
    }[variant]
    with tf.device(tf_name(device)):
        x = tf.constant(orthogonal(size))

    def step() -> np.ndarray:
        with tf.device(tf_name(device)):
            if gradient == "none":
                return power(x).numpy()
            with tf.GradientTape() as tape:
                tape.watch(x)
                r = power(x)
                loss = tf.reduce_sum(r)
            tape.gradient(loss, x).numpy()
            return r.numpy()

    return step


def _numpy_step(
    variant: str, size: int, loop_iterations: int, **_: Any
) -> Callable[[], np.ndarray]:
    x = orthogonal(size)
    if variant == "numpy_matrix_power":
        return lambda: np.linalg.matrix_power(x, loop_iterations)

    def step() -> np.ndarray:
        r = np.eye(size, dtype=x.dtype)
        for _ in range(loop_iterations):
            r = r @ x
        return r

    return step


TF_VARIANTS = {
    "python_matmul": "naive Python for-loop of eager tf.matmul",
    "while_loop_eager": "tf.while_loop run eagerly",
    "while_loop_function": "tf.while_loop inside tf.function",
    "function_unrolled": "tf.function over a Python range (unrolled into the graph)",
}
NUMPY_VARIANTS = {
    "numpy": "Python for-loop of NumPy matmul",
    "numpy_matrix_power": "np.linalg.matrix_power (repeated squaring)",
}
VARIANTS = tuple(TF_VARIANTS) + tuple(NUMPY_VARIANTS)


def _params(gradients: tuple, devices: tuple) -> dict[str, tuple]:
    return {
        "gradient": gradients,
        "size": SIZES,
        "loop_iterations": LOOP_ITERATIONS,
        "device": devices,
    }


# TensorFlow's variants on either device and under any gradient; NumPy's on CPU, no tape
for _variants, _step, _axes in (
    (TF_VARIANTS, _tf_step, (GRADIENTS, ("CPU", "GPU"))),
    (NUMPY_VARIANTS, _numpy_step, (("none",), ("CPU",))),
):
    for _variant, _text in _variants.items():
        register(
            Scenario(
                id=f"loop.{_variant}",
                description=f"matrix power by {_text}",
                prepare=lambda _v=_variant, _s=_step, **p: _s(_v, **p),
                params=_params(*_axes),
            )
        )
