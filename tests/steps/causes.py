"""Steps whose cause of growth is known, for `tfbench explain`'s calibration
(tests/test_explain.py): each holds about 64 KiB a call in one layer, or nothing."""

import ctypes

import numpy as np

KEPT: list = []
LIBC = ctypes.CDLL(None)
LIBC.malloc.restype = ctypes.c_void_p
SIZE = 64 * 1024


def arrays():
    KEPT.append(np.ones(SIZE // 8))  # Python objects: a list of NumPy arrays


def native():
    block = LIBC.malloc(SIZE)  # native memory no Python object owns, never freed
    ctypes.memset(block, 1, SIZE)


def flat():
    np.ones(SIZE // 8).sum()


def graph_ops():
    import tensorflow as tf

    tf.compat.v1.disable_eager_execution()  # TF1: ops added to the default graph each call
    tf.constant(1.0) + tf.constant(2.0)


CALLS = [0]


def retrace():
    import tensorflow as tf

    global double
    if "double" not in globals():
        double = tf.function(lambda x: x * 2)
    CALLS[0] += 1
    double(CALLS[0])  # a new Python scalar: a new trace each call


class Node:
    """One half of a reference cycle."""

    def __init__(self) -> None:
        self.other: Node | None = None
        self.block = np.ones(SIZE // 8)


def cycles():
    a, b = Node(), Node()  # garbage: a cycle holding 128 KiB, freed only by the collector
    a.other, b.other = b, a


FUNCTIONS: list = []


def new_function():
    import tensorflow as tf

    @tf.function  # a new function every call, kept: its graph stays alive
    def double(x):
        return x * 2

    double(tf.constant(1.0))
    FUNCTIONS.append(double)


VARIABLES: list = []


def variables():
    import tensorflow as tf

    VARIABLES.append(tf.Variable(tf.zeros(SIZE // 4)))  # a new 64 KiB variable every call


TENSORS: list = []


def tensors():
    import tensorflow as tf

    TENSORS.append(tf.ones(SIZE // 4))  # an eager tensor kept every call: 64 KiB of TF's
