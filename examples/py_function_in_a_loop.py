"""tf.py_function called eagerly in a loop (tensorflow/tensorflow#51839): the reported code
at 1/100 of its array sizes (two 100x100x20 arrays returned a call instead of 1000x1000x20,
whose 160 MB each would reach any budget within a few calls).

    tfbench measure examples/py_function_in_a_loop.py::step
    tfbench explain examples/py_function_in_a_loop.py::step
"""

import numpy as np
import tensorflow as tf


def test(xyz_batch, k):
    indices = np.zeros((100, 100, 20), dtype=np.int64)
    dist = np.zeros((100, 100, 20), dtype=np.float32)
    return indices, dist


def step():
    tf.py_function(test, [0, 0], [tf.int64, tf.int64])
