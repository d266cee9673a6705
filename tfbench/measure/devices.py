"""Devices as a benchmark parameter: which are usable here, and their allocator peaks."""

from __future__ import annotations

import os
from importlib import metadata

DEVICES = ("CPU", "GPU")


class Unsupported(NotImplementedError):
    """A case that cannot run here or makes no sense; asv shows NotImplementedError as a skip."""


def skip_reason(device: str, tensorflow: bool = True) -> str | None:
    """Why `device` cannot run here, or None. Cheap checks come before importing TensorFlow;
    without `tensorflow`, only they are made."""
    if device not in DEVICES:
        raise ValueError(f"unknown device {device!r}; choose from {', '.join(DEVICES)}")
    if device == "CPU":
        return None
    if _installed("tensorflow-cpu") and not _installed("tensorflow"):
        return "tensorflow-cpu is installed: it has no GPU support"
    if not os.path.exists("/dev/nvidiactl"):
        return "no NVIDIA GPU on this machine"
    if not tensorflow:
        return None
    import tensorflow as tf

    if not tf.config.list_physical_devices("GPU"):
        return "TensorFlow sees no GPU (driver or CUDA libraries missing?)"
    return None


def require(device: str, tensorflow: bool = True) -> None:
    reason = skip_reason(device, tensorflow)
    if reason:
        raise Unsupported(reason)


def _installed(distribution: str) -> bool:
    try:
        metadata.version(distribution)
        return True
    except metadata.PackageNotFoundError:
        return False


def tf_name(device: str) -> str:
    return f"/{device}:0"


def start_runtime(device: str) -> None:
    """Start TensorFlow's runtime on the device, where the step's process has imported it:
    one trivial eager op, and one trivial graph run in a Session that is then closed. A
    baseline taken after this leaves TensorFlow's own start-up (thread pools, allocators,
    the session machinery) out of the pattern's memory."""
    import sys

    if "tensorflow" not in sys.modules:
        return  # a step without TensorFlow: nothing to start
    import tensorflow as tf

    name = tf_name(device if device in DEVICES else "CPU")
    if tf.executing_eagerly():  # not where the step put this process in TF1's graph mode
        with tf.device(name):
            tf.reduce_sum(tf.ones((8, 8)) @ tf.ones((8, 8))).numpy()
    graph = tf.Graph()
    with graph.as_default(), graph.device(name):
        total = tf.reduce_sum(tf.ones((8, 8)))
    with tf.compat.v1.Session(graph=graph) as session:
        session.run(total)


def reset_allocator_peak(device: str) -> None:
    """Start a new allocator-peak region (GPU only: CPU allocator stats are not kept)."""
    if device == "GPU":
        import tensorflow as tf

        tf.config.experimental.reset_memory_stats("GPU:0")


def allocator_peak(device: str) -> int | None:
    """Peak bytes held by TensorFlow's allocator since the reset; None where not supported."""
    if device != "GPU":
        return None
    import tensorflow as tf

    return int(tf.config.experimental.get_memory_info("GPU:0")["peak"])
