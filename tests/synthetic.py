"""Step functions with known memory behaviour, measured by tfbench like a user's own file."""

import ctypes
import functools
import itertools
import time

import numpy as np

MiB = 1 << 20
_kept = []


def leak_1mib():
    _kept.append(np.ones(MiB // 8))  # 1 MiB of touched float64 kept alive per call


def leak_4kib():
    _kept.append(np.ones(4096 // 8))


def transient_64mib():
    np.ones(64 * MiB // 8).sum()  # 64 MiB touched, then freed


def flat():
    np.ones(100_000).sum()  # allocates and frees the same 800 KB every call


def leak_16mib():
    _kept.append(np.ones(16 * MiB // 8))


def hold_512mib():
    block = np.ones(512 * MiB // 8)
    time.sleep(30)  # inside one iteration: only the watchdog can stop this
    return block


def keep_objects():
    _kept.append([object() for _ in range(10)])  # Python objects only: ~0.5 KiB a call


_grown = [0]
_top = [bytearray(8)]


def rss_without_heap():
    """RSS grows 64 KiB a call while the heap keeps nothing: each call's blocks, freed, lie
    below the one small block it keeps in place of the last call's, so glibc cannot give
    them back."""
    _grown[0] += 64
    blocks = [bytearray(1024) for _ in range(_grown[0])]  # written: resident
    _top[0] = bytearray(8)  # above them; the last call's, freed, lies among them
    del blocks


def fails():
    raise RuntimeError("boom")


def _helper(code: str) -> None:
    """Start a helper process that outlives this call; its pid goes to $TFBENCH_TEST_PIDS."""
    import os
    import subprocess
    import sys

    helper = subprocess.Popen([sys.executable, "-c", code])
    with open(os.environ["TFBENCH_TEST_PIDS"], "a") as f:
        f.write(f"{helper.pid}\n")


def hungry_helper():
    """A helper that takes 2.5 GiB, 100 MiB at a time, and holds it; the step stays small."""
    if not _kept:
        _kept.append(True)
        _helper(
            "import time\nb = []\nfor _ in range(25):\n"
            "    b.append(bytearray(100 << 20)); time.sleep(0.05)\ntime.sleep(60)"
        )
    time.sleep(0.05)


def sleeping_helper():
    """A helper that sleeps 45 s, started once; the step itself takes 10 ms."""
    if not _kept:
        _kept.append(True)
        _helper("import time; time.sleep(45)")
    time.sleep(0.01)


class _Cycle:
    """Holds 64 KiB in a reference cycle: only Python's cyclic collector frees it."""

    def __init__(self) -> None:
        self.me = self
        self.block = bytearray(64 << 10)


def cycle_64kib():
    """Leaves one reference cycle holding 64 KiB a call: garbage, kept for nothing."""
    _Cycle()


def leak_64kib():
    _kept.append(bytearray(64 << 10))  # 64 KiB kept for good


# Planted leaks of an exact size: a block of glibc's heap that no Python object owns, never
# freed. glibc's chunk of a malloc(n) is n + 8 bytes rounded up to 16, so malloc(size - 8)
# keeps exactly `size` bytes a call (a multiple of 16): the leak verdict's sensitivity.
_LIBC = ctypes.CDLL(None)
_LIBC.malloc.restype, _LIBC.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]


def _planted(size: int) -> None:
    _LIBC.malloc(size - 8)


def planted_64b():
    _planted(64)


def planted_512b():
    _planted(512)


def planted_4kib():
    _planted(4 << 10)


def planted_64kib():
    _planted(64 << 10)


_calls = itertools.count()


@functools.lru_cache(maxsize=64)
def _cached(key: int) -> bytearray:
    return bytearray(4 << 10)


def cache_fills():
    """A cache that fills once and stops: 4 KiB a call for its first 64 calls (10 of warm-up
    and about half of a 100-call window), then every call a hit."""
    _cached(next(_calls) % 64)
