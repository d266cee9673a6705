"""Resident memory of the current process: now, and the peak since a reset.

On Linux the kernel keeps the peak itself (VmHWM) and resets it when 5 is written to
/proc/self/clear_refs, so a region's peak is exact, with no sampling thread and no missed
spike. Elsewhere a psutil thread samples RSS every millisecond, which can miss short peaks.
"""

from __future__ import annotations

import os
import re
import threading

PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
_HWM = re.compile(rb"VmHWM:\s+(\d+) kB")


def rss_bytes() -> int:
    """Current resident set size of this process."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * PAGE
    except OSError:
        import psutil

        return psutil.Process().memory_info().rss


def process_rss_bytes(pid: int) -> int:
    """Current resident set size of another process (0 once it has gone)."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as f:
            return int(f.read().split()[1]) * PAGE
    except FileNotFoundError:
        return 0
    except OSError:
        import psutil

        try:
            return psutil.Process(pid).memory_info().rss
        except psutil.NoSuchProcess:
            return 0


def group_rss_bytes(groups: set[int]) -> dict[int, int]:
    """Summed RSS of the processes in each process group: a measured step's helpers, and
    their helpers, count against its budget (Linux /proc; elsewhere psutil)."""
    total = dict.fromkeys(groups, 0)
    if os.path.isdir("/proc/self"):
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            try:
                with open(f"/proc/{entry.name}/stat", "rb") as f:
                    # pid (comm) state ppid pgrp ...: comm may hold spaces, so split after ')'
                    group = int(f.read().rpartition(b")")[2].split()[2])
                if group in total:
                    total[group] += process_rss_bytes(int(entry.name))
            except (OSError, ValueError, IndexError):
                continue  # gone meanwhile
        return total
    import psutil

    for process in psutil.process_iter():
        try:
            group = os.getpgid(process.pid)
            if group in total:
                total[group] += process.memory_info().rss
        except (OSError, psutil.Error):
            continue
    return total


def fault_in_like(pid: int) -> bool:
    """Map the file pages that process `pid` (the parent this one forked from) has resident.

    A forked child inherits its parent's anonymous memory in its RSS but maps file pages
    (TensorFlow's libraries) only as it touches them again: without this, the first use of
    library code in a measured region would read as the region's memory. Touching each page
    the parent's pagemap marks present makes this RSS what a fresh process would have after
    the same imports. False where pagemap cannot be read (the region then includes them).
    """
    import ctypes

    import numpy as np

    try:
        with (
            open("/proc/self/maps") as maps,
            open(f"/proc/{pid}/pagemap", "rb", buffering=0) as pagemap,
        ):
            for line in maps:
                fields = line.split()
                if len(fields) < 6 or not fields[5].startswith("/") or fields[1][0] != "r":
                    continue
                low, high = (int(a, 16) for a in fields[0].split("-"))
                entries = np.frombuffer(
                    os.pread(pagemap.fileno(), 8 * ((high - low) // PAGE), 8 * (low // PAGE)),
                    dtype=np.uint64,
                )
                present = np.flatnonzero(entries >> np.uint64(63))
                if present.size:  # a byte of each, read in one numpy call
                    mapped = np.ctypeslib.as_array(
                        (ctypes.c_ubyte * (high - low)).from_address(low)
                    )
                    mapped[present * PAGE].sum()
    except OSError:
        return False
    return True


def libc():
    """The C library this process runs on (errno kept for callers that read it), or None."""
    import ctypes

    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


def steady_malloc() -> bool:
    """Make what glibc's malloc keeps resident depend on the allocations only, not on which
    thread made them or on what was freed before: every thread this process starts from now
    on allocates from the arenas that exist (M_ARENA_MAX = 1) instead of an arena of its
    own each, and blocks of 128 KiB or more are always mmap'ed (M_MMAP_THRESHOLD fixed at
    glibc's initial value, which also stops its dynamic raise).

    With an arena per thread, what the arenas keep beyond the live allocations depends on
    which thread happened to run what, so a pattern's peak varied between processes. With
    the dynamic threshold, freeing one large mmap'ed block raises the threshold, and later
    blocks of that size land in the heap, where fragmentation keeps them. docs/measuring.md
    has the figures. False where this is not glibc (no mallopt).
    """
    c = libc()
    return bool(
        c is not None
        and hasattr(c, "mallopt")
        and c.mallopt(-8, 1) == 1  # M_ARENA_MAX
        and c.mallopt(-3, 128 * 1024) == 1  # M_MMAP_THRESHOLD
    )


def trim_heap() -> bool:
    """Give the heap's free memory back to the kernel (glibc's malloc_trim(0)), so that
    memory a measured region takes from free chunks faults in and counts: a process forked
    after imports inherits resident free chunks, and a small leak filling them read as half
    its size. False where this is not glibc."""
    c = libc()
    if c is None or not hasattr(c, "malloc_trim"):
        return False
    c.malloc_trim(0)
    return True


class PeakMeter:
    """Highest RSS of this process since the last `reset()`."""

    method: str

    def __init__(self, prefer_kernel: bool = True) -> None:
        self._sampler: threading.Thread | None = None
        self._stop = threading.Event()
        self._sampled = 0
        self.method = "vmhwm" if prefer_kernel and self._kernel_reset() else "psutil-sampling"

    @staticmethod
    def _kernel_reset() -> bool:
        try:
            with open("/proc/self/clear_refs", "w") as f:
                f.write("5")
            with open("/proc/self/status", "rb") as f:
                return _HWM.search(f.read()) is not None
        except OSError:
            return False

    def reset(self) -> None:
        if self.method == "vmhwm":
            self._kernel_reset()
            return
        self.close()
        self._stop.clear()
        self._sampled = rss_bytes()
        self._sampler = threading.Thread(target=self._sample, daemon=True)
        self._sampler.start()

    def _sample(self) -> None:
        import psutil

        process = psutil.Process()
        while not self._stop.wait(0.001):
            self._sampled = max(self._sampled, process.memory_info().rss)

    def peak(self) -> int:
        if self.method == "vmhwm":
            with open("/proc/self/status", "rb") as f:
                found = _HWM.search(f.read())
            if found:  # the kernel's high-water mark (checked to exist when the method was set)
                return int(found.group(1)) * 1024
        return max(self._sampled, rss_bytes())

    def close(self) -> None:
        if self._sampler is not None:
            self._stop.set()
            self._sampler.join()
            self._sampler = None
