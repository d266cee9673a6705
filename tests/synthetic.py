"""Step functions with known memory behaviour, measured by tfbench like a user's own file."""

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


def fails():
    raise RuntimeError("boom")
