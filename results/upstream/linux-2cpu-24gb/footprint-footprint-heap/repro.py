"""Standalone reproducer (tfbench upstream): TensorFlow's footprint after import.

Needs TensorFlow and psutil; run `python repro.py` (it runs itself a second time with
PYTHONMALLOC=malloc, so that Python's objects are counted in the heap).
"""

import ctypes
import os
import sys

import psutil

FIELDS = "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost"


class Mallinfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in FIELDS.split()]


def main():
    import tensorflow as tf

    with tf.device('/CPU:0'):
        tf.reduce_sum(tf.ones((8, 8)) @ tf.ones((8, 8))).numpy()
    rss = psutil.Process().memory_info().rss
    version = f"{tf.__version__} ({tf.version.GIT_VERSION})"
    line = f"TensorFlow {version}: RSS {rss / 2**20:.1f} MiB"
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallinfo2.restype = Mallinfo2
        info = libc.mallinfo2()
        line += f", heap in use {(info.uordblks + info.hblkhd) / 2**20:.1f} MiB"
    except (OSError, AttributeError):
        pass
    print(line + f" (PYTHONMALLOC={os.environ.get('PYTHONMALLOC', 'default')})", flush=True)


if __name__ == "__main__":
    main()
    if os.environ.get("PYTHONMALLOC") != "malloc":
        env = {**os.environ, "PYTHONMALLOC": "malloc"}
        os.execve(sys.executable, [sys.executable, *sys.argv], env)
