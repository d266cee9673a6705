"""The heap a process holds, at the allocator: what TensorFlow and Python keep, not the pages
the process happens to have resident (docs/measuring.md has why both are read).

- In use now: glibc's `mallinfo2()`, small chunks in use plus mmap'ed ones. Python's
  objects count only where the process runs with PYTHONMALLOC=malloc (pymalloc maps arenas
  of its own), which the measuring processes do (`preload_env`).
- High-water since a reset, exact: heapcount.c, preloaded into the measuring process,
  counts every block glibc hands out and takes back.

Elsewhere (not glibc, no C compiler) a figure is None and `why_not` says why.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import tfbench

SOURCE = Path(__file__).with_name("heapcount.c")
_FIELDS = "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost"


class _Mallinfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in _FIELDS.split()]


def _libc():
    try:
        return ctypes.CDLL(None)
    except OSError:
        return None


_LIBC = _libc()
_MALLINFO2 = getattr(_LIBC, "mallinfo2", None)
if _MALLINFO2 is not None:
    _MALLINFO2.restype = _Mallinfo2
_COUNTER = getattr(_LIBC, "tfbench_heap_in_use", None) and _LIBC


def in_use() -> int | None:
    """Bytes of the heap in use (glibc's own count), or None where there is no mallinfo2."""
    if _MALLINFO2 is None:
        return None
    info = _MALLINFO2()
    return info.uordblks + info.hblkhd


class PeakCounter:
    """The heap's high-water mark since `reset()`, from the preloaded counter."""

    def __init__(self) -> None:
        self.counter = _COUNTER
        if self.counter is not None:
            self.counter.tfbench_heap_in_use.restype = ctypes.c_int64
            self.counter.tfbench_heap_peak.restype = ctypes.c_int64

    def reset(self) -> None:
        if self.counter is not None:
            self.counter.tfbench_heap_reset_peak()

    def peak(self) -> int | None:
        return None if self.counter is None else self.counter.tfbench_heap_peak()

    def in_use(self) -> int | None:
        return None if self.counter is None else self.counter.tfbench_heap_in_use()


def why_not(peak: bool = False) -> str | None:
    """Why this process has no heap figure (its peak, with `peak`), or None."""
    if _MALLINFO2 is None:
        return "no glibc mallinfo2 (glibc 2.33 or later on Linux): heap figures are not read"
    if peak and _COUNTER is None:
        return os.environ.get("TFBENCH_HEAP_COUNTER") or (
            "the allocation counter is not preloaded (tfbench's measuring processes have it)"
        )
    if os.environ.get("PYTHONMALLOC") != "malloc":
        return "Python's own allocator is on: Python objects are not counted"
    return None


def library() -> Path | str:
    """The counter as a shared library built from its source (cached by the source's hash),
    or why it cannot be built."""
    if not sys.platform.startswith("linux") or _MALLINFO2 is None:
        return "the allocation counter needs Linux and glibc 2.33 or later"
    compiler = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not compiler:
        return "no C compiler (cc) to build the allocation counter"
    source = SOURCE.read_bytes()
    built = tfbench.cache_dir("heapcount") / f"{hashlib.sha256(source).hexdigest()[:16]}.so"
    if built.exists():
        return built
    built.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=built.parent) as tmp:
        partial = Path(tmp) / built.name
        done = subprocess.run(
            [compiler, "-O2", "-shared", "-fPIC", "-o", str(partial), str(SOURCE)],
            capture_output=True,
            text=True,
        )
        if done.returncode:
            return f"the allocation counter did not build: {done.stderr.strip()[-300:]}"
        partial.rename(built)  # atomic: a concurrent build's result is as good
    return built


def preload_env() -> dict[str, str]:
    """What a measuring process's environment needs for the heap figures: every allocation
    through glibc's malloc (Python objects too), and the counter preloaded where it builds.
    A counter that does not build leaves TFBENCH_HEAP_COUNTER saying why."""
    env = {"PYTHONMALLOC": "malloc"}
    built = library()
    if isinstance(built, Path):
        preload = os.environ.get("LD_PRELOAD", "")
        env["LD_PRELOAD"] = f"{built} {preload}".strip()
    else:
        env["TFBENCH_HEAP_COUNTER"] = built
    return env
