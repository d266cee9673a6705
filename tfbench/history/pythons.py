"""The CPython versions TensorFlow releases run on, and finding an interpreter of one here.

Which release runs on which Python is the resolver's answer (tfbench.history.releases locks
each release for every version in CANDIDATES and records the ones that do not resolve);
nothing here is a hand-written table of support.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

# The versions a lock is attempted for (TensorFlow has wheels for some of them each release).
CANDIDATES = ("3.10", "3.11", "3.12", "3.13")
DEFAULT = "3.11"  # the history's: the lock in each release's commit
VERSION = re.compile(r"3\.\d+")


def version_of(python: str | Path) -> str | None:
    """X.Y of an interpreter, None where it does not run."""
    try:
        run = subprocess.run(
            [str(python), "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return run.stdout.strip() if run.returncode == 0 else None


def candidates(version: str) -> list[Path]:
    """Where an interpreter of `version` may be: pythonX.Y on PATH, pyenv's versions, uv's
    managed Pythons; each to be checked (a pyenv shim on PATH may not run)."""
    found = [Path(p) for p in [shutil.which(f"python{version}")] if p]
    pyenv = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv") / "versions"
    found += sorted(pyenv.glob(f"{version}.*/bin/python{version}"), reverse=True)
    uv_dir = Path(os.environ.get("UV_PYTHON_INSTALL_DIR") or Path.home() / ".local/share/uv")
    found += sorted(uv_dir.glob(f"python/cpython-{version}.*/bin/python{version}"), reverse=True)
    return found


def find(version: str) -> Path | None:
    """An interpreter of CPython `version` that runs, None where there is none here."""
    return next((p for p in candidates(version) if version_of(p) == version), None)
