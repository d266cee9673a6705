"""One Python environment per tracked release, made from its committed lock, cached.

`tfbench measure --releases` and `tfbench bisect` run a step in the environment of each
release. An environment is created on first use with uv (`uv venv`, then `uv pip install
--no-deps` of the lock: exactly the pinned set, nothing resolved), under the user's cache
directory (TFBENCH_ENV_DIR or --env-dir to move it), and reused afterwards, offline. uv links
files from its own cache (hard links on one file system), so a second release costs far
less disk than a full copy; every module is compiled to bytecode (envsync.compile_bytecode
says why). A finished environment holds its lock as `.tfbench-ready`: one whose lock changed
is made again; a half-made one never counts (built aside, renamed in). Before one is used,
every installed file is checked against its distribution's RECORD (there, of its size): a
damaged one is made again, from PyPI rather than uv's cache, whose files are hard-linked
into it and may be damaged too.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from stat import S_ISREG

import tfbench
from tfbench.history import envsync, pythons
from tfbench.history.envsync import compile_bytecode, lock_file_name
from tfbench.history.releases import FLAVOURS, UNSUPPORTED, python_folder, read_lock, uv

MARK = ".tfbench-ready"  # renamed from .tfbench-lock: those were not compiled


class EnvError(RuntimeError):
    """A release environment could not be made (uv's message says why)."""


def default_root() -> Path:
    """TFBENCH_ENV_DIR, else <cache>/tfbench/envs (XDG_CACHE_HOME or ~/.cache)."""
    if os.environ.get("TFBENCH_ENV_DIR"):
        return Path(os.environ["TFBENCH_ENV_DIR"])
    return tfbench.cache_dir("envs")


@dataclass(frozen=True)
class ReleaseEnv:
    version: str
    flavour: str
    root: Path
    python_version: str = pythons.DEFAULT  # CPython X.Y

    @property
    def path(self) -> Path:
        tail = "" if self.python_version == pythons.DEFAULT else f"-py{self.python_version}"
        return self.root / f"{self.version}-{self.flavour}{tail}"

    @property
    def python(self) -> Path:
        return self.path / "bin" / "python"

    def lock(self) -> bytes:
        if self.flavour not in FLAVOURS:
            raise ValueError(
                f"unknown flavour {self.flavour!r}; choose from {', '.join(FLAVOURS)}"
            )
        if self.python_version == pythons.DEFAULT:
            return read_lock(self.version).files[lock_file_name(self.flavour)]
        folder = python_folder(self.version, self.python_version)
        lock = folder / lock_file_name(self.flavour)
        if not lock.is_file():
            why = folder / UNSUPPORTED
            raise EnvError(
                f"tensorflow {self.version} has no lock for Python {self.python_version}: "
                + (
                    why.read_text().strip("# \n")
                    if why.is_file()
                    else "not locked yet (`tfbench releases update`)"
                )
            )
        return lock.read_bytes()

    def ready(self, lock: bytes | None = None) -> bool:
        mark = self.path / MARK
        return (
            mark.is_file() and mark.read_bytes() == (lock or self.lock()) and self.python.exists()
        )


def interpreter(python: str) -> str:
    """An interpreter of CPython `python` (X.Y): this one where it is that version."""
    if python == "{}.{}".format(*sys.version_info[:2]):
        return sys.executable
    found = pythons.find(python)
    if found is None:
        raise EnvError(
            f"no Python {python} here (on PATH as python{python}, in pyenv or uv's "
            f"Pythons): install one, e.g. `uv python install {python}`"
        )
    return str(found)


def ensure(
    env: ReleaseEnv,
    creating: Callable[[], None] | None = None,
) -> tuple[Path, float | None]:
    """The environment's Python, made now if needed (`creating` is called first); (python,
    seconds spent making it, or None when it was there already)."""
    text = env.lock()
    fresh = False
    with building(env.path):
        if env.ready(text):
            problem = damaged(env.path)
            if problem is None:
                return env.python, None
            print(f"tfbench: {env.path}: {problem}; made again from PyPI", file=sys.stderr)
            fresh = True
        if creating:
            creating()
        start = time.monotonic()
        partial = env.root / f".{env.path.name}.partial"
        shutil.rmtree(partial, ignore_errors=True)
        lock = partial.with_suffix(".txt")
        lock.write_bytes(text)
        try:
            run_uv("venv", "--quiet", "--python", interpreter(env.python_version), str(partial))
            python = str(partial / "bin" / "python")
            cache = ["--no-cache"] if fresh else []
            run_uv(
                "pip",
                "install",
                "--quiet",
                "--no-deps",
                *cache,
                "--python",
                python,
                "-r",
                str(lock),
            )
            compile_bytecode(python)
            (partial / MARK).write_bytes(text)
            shutil.rmtree(env.path, ignore_errors=True)
            partial.rename(env.path)
        finally:
            lock.unlink(missing_ok=True)
            shutil.rmtree(partial, ignore_errors=True)
        return env.python, time.monotonic() - start


def damaged(path: Path) -> str | None:
    """The first file of the environment at `path` that its distribution's RECORD lists and
    that is missing or of another size, said; None where every one is whole."""
    for site in sorted(path.glob("lib/python*/site-packages")):
        for _, why in envsync.damaged(site):
            return why
    return None


@contextlib.contextmanager
def building(where: Path) -> Iterator[None]:
    """Held while an environment is looked for and made: two processes wanting the same
    one (two commands, two test workers) make it once, the second waiting, then finding it
    made. An advisory lock on a file beside it, released when its holder ends."""
    where.parent.mkdir(parents=True, exist_ok=True)
    with open(where.with_name(f".{where.name}.lock"), "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        yield


def uv_install(python: Path, *requirements: str) -> None:
    """Add packages (resolved from PyPI) to an environment."""
    run_uv("pip", "install", "--quiet", "--python", str(python), *requirements)


def uv_target(python: Path, folder: Path, *requirements: str) -> None:
    """Packages for `python`'s version installed into a folder of their own (put on a
    path after an environment's packages, they change nothing it has): built aside and
    renamed in, so a half-made folder never counts."""
    partial = folder.with_name(f".{folder.name}.partial")
    shutil.rmtree(partial, ignore_errors=True)
    run_uv(
        "pip",
        "install",
        "--quiet",
        "--python",
        str(python),
        "--target",
        str(partial),
        *requirements,
    )
    shutil.rmtree(folder, ignore_errors=True)
    partial.rename(folder)


def run_uv(*args: str) -> None:
    # Only uv's own configuration: pip's (find-links, extra indexes) does not apply to it.
    run = subprocess.run([uv(), *args], capture_output=True, text=True)
    if run.returncode:
        raise EnvError(
            f"uv {args[0]} failed (exit {run.returncode}): {(run.stderr or run.stdout).strip()}"
        )


@dataclass(frozen=True)
class Listed:
    name: str
    ready: bool
    bytes_own: int  # disk used by files not linked from elsewhere (uv's cache, other envs)


def listing(root: Path) -> list[Listed]:
    """The environments under root, with the disk each uses on its own. One being made by
    another process (a hidden `.NAME.partial`) is not listed, and a folder removed or
    renamed while it is walked is passed by."""
    found = []
    for path in sorted(p for p in root.glob("*-*") if p.is_dir() and p.name[0] != "."):
        own = 0
        for folder, _, files in os.walk(path):
            for name in files:
                try:
                    stat = os.lstat(os.path.join(folder, name))
                except OSError:
                    continue
                if S_ISREG(stat.st_mode) and stat.st_nlink == 1:
                    own += stat.st_blocks * 512
        found.append(Listed(path.name, (path / MARK).is_file(), own))
    return found


def remove(root: Path, names: list[str]) -> list[str]:
    """Remove the named environments (all when names is empty); the names removed."""
    present = {p.name for p in root.glob("*-*") if p.is_dir()}  # no disk walk: names only
    unknown = sorted(set(names) - present)
    if unknown:
        raise ValueError(
            f"no environment {', '.join(unknown)} under {root}; there: "
            f"{', '.join(sorted(present)) or 'none'}"
        )
    gone = sorted(names or present)
    for name in gone:
        shutil.rmtree(root / name)
    return gone
