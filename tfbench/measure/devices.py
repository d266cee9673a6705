"""Devices as a benchmark parameter: which are usable here, and their allocator peaks."""

from __future__ import annotations

import os
from importlib import metadata

DEVICES = ("CPU", "GPU")


class Unsupported(NotImplementedError):
    """A case that cannot run here or makes no sense; asv shows NotImplementedError as a skip."""


def skip_reason(device: str) -> str | None:
    """Why `device` cannot run here, or None. Cheap checks come before importing TensorFlow."""
    if device not in DEVICES:
        raise ValueError(f"unknown device {device!r}; choose from {', '.join(DEVICES)}")
    if device == "CPU":
        return None
    if _installed("tensorflow-cpu") and not _installed("tensorflow"):
        return "tensorflow-cpu is installed: it has no GPU support"
    if not os.path.exists("/dev/nvidiactl"):
        return "no NVIDIA GPU on this machine"
    import tensorflow as tf

    if not tf.config.list_physical_devices("GPU"):
        return "TensorFlow sees no GPU (driver or CUDA libraries missing?)"
    return None


def require(device: str) -> None:
    reason = skip_reason(device)
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
