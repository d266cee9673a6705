"""Steps whose behaviour depends on the TensorFlow release they run on (tests/test_sweep.py).

TensorFlow is imported here, at module level, as a user's file would: before the measured
steps, so its import is not part of their memory.
"""

import numpy as np
import tensorflow as tf

MiB = 1 << 20
OLDER_THAN_2_15, OLDER_THAN_2_16 = (
    tuple(map(int, tf.__version__.split(".")[:2])) < v for v in ((2, 15), (2, 16))
)
_kept = []


def leak_before_2_16():
    """1 MiB kept per call where TensorFlow is older than 2.16; flat from 2.16 on."""
    if OLDER_THAN_2_16:
        _kept.append(np.ones(MiB // 8))


def fails_before_2_15():
    """An API missing before 2.15, as it were: raises there, runs from 2.15 on."""
    if OLDER_THAN_2_15:
        raise AttributeError("no such API before 2.15")
