"""Prediction, from "Why is my TensorFlow model experiencing memory leaks during prediction?".

One small Keras model (32 -> 64 relu -> 10), seeded, on a batch of 256: the four ways to
run it give the same outputs. Written against tf.keras, so Keras 2 (TensorFlow before 2.16)
and Keras 3 (2.16 on) both run it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from tfbench.measure.devices import require, tf_name
from tfbench.scenarios import register_family

BATCH, FEATURES = 256, 32


def batch() -> np.ndarray:
    return np.random.default_rng(2).standard_normal((BATCH, FEATURES)).astype(np.float32)


def _model(tf):
    tf.keras.utils.set_random_seed(0)
    layers = tf.keras.layers
    return tf.keras.Sequential(
        [tf.keras.Input(shape=(FEATURES,)), layers.Dense(64, activation="relu"), layers.Dense(10)]
    )


def _prediction(device: str, run: Callable[[Any, Any, Any], Any]) -> Callable[[], Any]:
    """A step that predicts on the batch with `run(tf, model, x)`, returning NumPy."""
    require(device)
    import tensorflow as tf

    with tf.device(tf_name(device)):
        model, x = _model(tf), tf.constant(batch())

    def step():
        with tf.device(tf_name(device)):
            return np.asarray(run(tf, model, x))

    return step


def model_call(device: str) -> Callable[[], Any]:
    return _prediction(device, lambda tf, model, x: model(x, training=False))


def model_predict(device: str) -> Callable[[], Any]:
    return _prediction(device, lambda tf, model, x: model.predict(x, verbose=0))


def predict_on_batch(device: str) -> Callable[[], Any]:
    return _prediction(device, lambda tf, model, x: model.predict_on_batch(x))


def tf_function_call(device: str) -> Callable[[], Any]:
    served: dict[str, Any] = {}

    def run(tf, model, x):
        if not served:
            served["f"] = tf.function(lambda x: model(x, training=False))
        return served["f"](x)

    return _prediction(device, run)


def random_noise_model(device: str) -> Callable[[], Any]:
    """The article's example 1: tf.random.normal inside call(), run by model.predict."""
    require(device)
    import tensorflow as tf

    class Noisy(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.inner = _model(tf)

        def call(self, x):
            return self.inner(x + tf.random.normal(tf.shape(x), stddev=0.01))

    with tf.device(tf_name(device)):
        model, x = Noisy(), tf.constant(batch())

    def step():
        with tf.device(tf_name(device)):
            return model.predict(x, verbose=0)

    return step


def returned_tensor(device: str) -> Callable[[], Any]:
    """The article's example 2: the loop keeps every returned output tensor."""
    kept = []

    def run(tf, model, x):
        kept.append(model(x, training=False))
        return kept[-1]

    return _prediction(device, run)


PREDICT = {
    "predict.model_call": (model_call, "model(x, training=False) per call"),
    "predict.model_predict": (model_predict, "model.predict(x) per call in a loop"),
    "predict.predict_on_batch": (predict_on_batch, "model.predict_on_batch(x) per call"),
    "predict.tf_function_call": (tf_function_call, "the model called through one tf.function"),
    "predict.random_noise_model": (
        random_noise_model,
        "tf.random.normal inside call(), model.predict per call (the article's example 1)",
    ),
    "predict.returned_tensor": (
        returned_tensor,
        "every returned output tensor kept (the article's example 2)",
    ),
}

register_family(PREDICT, {"device": ("CPU", "GPU")}, iterations=100, warmup=10)
