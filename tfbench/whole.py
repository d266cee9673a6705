"""Files and folders written whole or not at all, asv's results kept whole around asv's own
writes, one writer at a time on one results folder, and scratch folders a killed run left
removed by the next.

tfbench writes a file to a temporary one beside it and renames it into place. asv writes its
results and benchmarks.json in place: a run stopped as it writes leaves a file cut, and asv
then refuses every later run on it ("Error parsing JSON"). So a run copies them first; a
file that does not parse after the run, or at the next run's start after a kill, is put
back from its copy or, with none, moved aside and named, and the run goes on.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

from tfbench.faults import errno_of

OWNER = ".tfbench-owner"  # in a scratch folder: the pid and start time of the process it is for
TEMPORARY = "tfbench-"  # every scratch folder of tfbench's in the temporary folder


def write(path: Path, data: bytes | str, sync: bool = False) -> None:
    """`data` at `path`, whole or not at all: a reader never sees half a file, and a link
    there is replaced, not written through. `sync`: on disk before the rename, where a
    loss would cost a run. An OSError names `path`, whichever file raised it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.partial")
    try:
        partial.unlink(missing_ok=True)
        with open(partial, "wb") as out:
            out.write(data.encode() if isinstance(data, str) else data)
            if sync:
                out.flush()
                os.fsync(out.fileno())
        os.replace(partial, path)
    except OSError as e:  # a full disk: the file as it was, and the error naming it
        partial.unlink(missing_ok=True)
        raise OSError(e.errno, e.strerror, str(path)) from e


def writable(folder: Path) -> None:
    """`folder` made where missing and a file written in it and removed: an OSError naming
    `folder` where it cannot be (a read-only or full file system, a folder this user may not
    write), before a run that would write there starts."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        handle, name = tempfile.mkstemp(prefix=".tfbench-writable-", dir=folder)
        try:
            os.write(handle, b"\0" * 4096)  # a block: a full disk refuses it
            os.fsync(handle)
        finally:
            os.close(handle)
            os.unlink(name)
    except OSError as e:
        raise OSError(e.errno, e.strerror, str(folder)) from e


def move(source: Path, target: Path) -> None:
    """`source` to `target`, whole: renamed where both are on one file system; else (a
    results folder on a volume of its own) copied whole beside `target`, synced and renamed
    in, then `source` removed: a reader sees it at one place or the other, never cut."""
    try:
        os.replace(source, target)
    except OSError as e:
        if e.errno != errno.EXDEV:
            raise
        write(target, source.read_bytes(), sync=True)
        source.unlink()


_AT_FDCWD, _RENAME_EXCHANGE = -100, 2
_LIBC = ctypes.CDLL(None, use_errno=True)
REFILL = ".tfbench-refill-"  # in a folder refilled in place: the new entries, then the old


def swap(built: Path, into: Path) -> None:
    """The folder `built` put in place of `into` in one step: a reader, or a kill, sees the
    old folder or the new one, never neither (renameat2's RENAME_EXCHANGE; after it the old
    one is at `built`). Where the file system cannot exchange, `into` is moved to `built`'s
    name with a suffix first, a window of two renames. `into` a link (to where a web server
    reads): the folder it points to is replaced, and the link stays a link. `into` a mount
    point (a volume a server also mounts), which no rename may move, or on another file
    system than `built`: refilled in place (refill)."""
    into = Path(os.path.realpath(into))
    if os.path.ismount(into):
        return refill(built, into)
    try:
        if not into.exists():
            os.rename(built, into)
        elif not _exchange(built, into):
            old = built.with_name(built.name + ".old")
            os.rename(into, old)
            os.rename(built, into)
            os.rename(old, built)
    except OSError as e:
        if e.errno not in (errno.EXDEV, errno.EBUSY):
            raise
        into.mkdir(exist_ok=True)
        refill(built, into)


def _exchange(a: Path, b: Path) -> bool:
    """`a` and `b` exchanged in one step; False where the file system cannot."""
    call = getattr(_LIBC, "renameat2", None)
    if call is None:
        return False
    if call(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
        return False
    raise OSError(code, os.strerror(code), str(b))


def refill(built: Path, into: Path) -> None:
    """`into`'s entries replaced by `built`'s where `into` itself cannot be moved: `built`
    copied whole into a folder inside `into` first (a full disk stops it there, `into` as
    it was), then each entry put in place of the old one in one step, then the old ones
    removed. For as long as the exchanges take, a reader may meet old entries beside new
    ones, each of them whole. An OSError names `into`."""
    with temporary(REFILL, into) as staging:
        new, old = staging / "new", staging / "old"
        try:
            os.rename(built, new)
        except OSError as e:
            if e.errno != errno.EXDEV:
                raise
            _copy(built, new)
        old.mkdir()
        names = set(os.listdir(new))
        for name in sorted(names):
            if not os.path.lexists(into / name):
                os.rename(new / name, into / name)
            elif not _exchange(new / name, into / name):
                os.rename(into / name, old / name)
                os.rename(new / name, into / name)
        for name in os.listdir(into):
            if name not in names and not name.startswith(".tfbench-"):
                os.rename(into / name, old / name)


def _copy(source: Path, target: Path) -> None:
    """shutil.copytree, its errors (which it gives as text) one OSError naming `target`."""
    try:
        shutil.copytree(source, target, symlinks=True)
    except shutil.Error as e:
        code = errno_of(e) or errno.EIO
        raise OSError(code, os.strerror(code), str(target)) from e


def parses(path: Path) -> bool:
    """Whether `path` holds a JSON object (asv's results and benchmarks.json are one)."""
    try:
        return isinstance(json.loads(path.read_bytes()), dict)
    except (OSError, ValueError):
        return False


class Results:
    """asv's files of one run (results_dir's benchmarks.json, a machine's folder) and the
    run's probes files, with a copy of each (`copies`) while the run may write them, and a
    place for what cannot be read (`aside`). A probes file is written a family at a time
    as asv runs, and asv writes its results at the end: the probes of a run that did not
    end are put back as they were, so they agree with asv's."""

    def __init__(self, root: Path, machine: str, kept: Path, say: Callable[[str], None]):
        self.root, self.say = root, say
        self.folders = [root / machine, root / "probes" / machine]
        self.copies, self.aside = kept / "copies", kept / "aside"

    def files(self) -> list[Path]:
        """Relative to `root`: benchmarks.json, the machine's results and probes files, and
        every file a copy is kept of."""
        found = {self.root / "benchmarks.json"}
        found |= {p for folder in self.folders for p in folder.glob("*.json")}
        found |= {self.root / p.relative_to(self.copies) for p in self.copies.rglob("*.json")}
        return sorted(p.relative_to(self.root) for p in found)

    def heal(self) -> None:
        """Every file that is there and does not parse: put back from its copy, or moved
        aside, in one line each."""
        for name in self.files():
            path, copy = self.root / name, self.copies / name
            if not path.exists() or parses(path):
                continue
            if parses(copy):
                write(path, copy.read_bytes(), sync=True)
                self.say(f"{path}: cut by a run that was stopped; put back as it was before")
                continue
            self.aside.mkdir(parents=True, exist_ok=True)
            stem = str(name).replace(os.sep, "--")
            moved = self.aside / stem
            for k in range(1, 1000):
                if not moved.exists():
                    break
                moved = self.aside / f"{stem}.{k}"
            move(path, moved)
            self.say(f"{path}: unreadable; moved aside to {moved}, the run goes on without it")

    def roll_back(self) -> None:
        """The probes files as the copies hold them: what a run that did not end wrote goes
        (a file it made is removed), in one line each."""
        probes = self.folders[1].relative_to(self.root)
        for name in self.files():
            path, copy = self.root / name, self.copies / name
            if name.parent != probes or not path.exists():
                continue
            if not copy.exists():
                path.unlink()
            elif path.read_bytes() != copy.read_bytes():
                write(path, copy.read_bytes(), sync=True)
            else:
                continue
            self.say(f"{path}: readings of a run that did not end; put back as before it")

    def copy(self) -> None:
        """A copy of every file as it is now (each parses: heal ran), made whole before it
        is the copy: copies there are a run's that did not end."""
        partial = self.copies.with_name(f"{self.copies.name}.partial")
        shutil.rmtree(partial, ignore_errors=True)
        for name in self.files():
            if (self.root / name).exists():
                write(partial / name, (self.root / name).read_bytes(), sync=True)
        partial.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(self.copies, ignore_errors=True)
        partial.rename(self.copies)

    @contextlib.contextmanager
    def kept(self) -> Iterator[None]:
        """Within: the run may write; on leaving, whatever it cut is put back and, unless
        it ended, its probes. A run killed within leaves the copies for the next one."""
        self.heal()
        if self.copies.exists():  # a run killed within
            self.roll_back()
        self.copy()
        try:
            yield
        except BaseException:
            self.roll_back()
            raise
        finally:
            self.heal()
            shutil.rmtree(self.copies, ignore_errors=True)


class Busy(Exception):
    """Another run holds the lock: its pid and command, as it wrote them."""


def writing(
    results: Path, wait: bool = False, command: str | None = None
) -> contextlib.AbstractContextManager:
    """One writer at a time on the results folder `results` (a run, a merge): its lock, a
    file beside it (`.results.lock`), names the holder and its `command` (this process's
    command line)."""
    command = command or " ".join(["tfbench", *sys.argv[1:]])
    return only_run(results.parent / f".{results.name}.lock", command, wait)


@contextlib.contextmanager
def only_run(lock: Path, command: str, wait: bool = False) -> Iterator[None]:
    """One run at a time: an fcntl lock on `lock`, which names its holder's pid and command.
    Busy where another holds it, unless `wait`. The kernel releases it with its process,
    however that ends."""
    lock.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            raise Busy(os.pread(fd, 512, 0).decode(errors="replace").strip()) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()}: {command}".encode(), 0)
        yield
    finally:
        os.close(fd)


def _started(pid: int) -> str | None:
    """When process `pid` started (clock ticks after boot, /proc/PID/stat's 22nd field): a
    pid with another start time is another process. None where there is no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rpartition(")")[2].split()[19]


def scratch(prefix: str, folder: Path | None = None) -> Path:
    """A new scratch folder (tempfile.mkdtemp) that names its owner, this process, so that
    `sweep` removes it once its owner has ended, however that was."""
    made = Path(tempfile.mkdtemp(prefix=prefix, dir=folder))
    (made / OWNER).write_text(f"{os.getpid()} {_started(os.getpid())}")
    return made


@contextlib.contextmanager
def temporary(prefix: str, folder: Path | None = None) -> Iterator[Path]:
    """A scratch folder in `folder` (the temporary folder), removed when done: after a kill,
    by the next sweep of `prefix` there (the temporary folder's: every tfbench command's,
    TEMPORARY)."""
    made = scratch(prefix, folder)
    try:
        yield made
    finally:
        shutil.rmtree(made, ignore_errors=True)


def sweep(prefix: str, folder: Path | None = None) -> list[Path]:
    """Remove the scratch folders of `prefix` in `folder` (the temporary folder) whose owner
    has ended: a killed run's. A live run's, and folders that name no owner, are left;
    what was removed is said in one line."""
    removed = []
    for found in Path(folder or tempfile.gettempdir()).glob(f"{prefix}*"):
        try:
            pid, started = (found / OWNER).read_text().split()
            if found.is_symlink() or _started(int(pid)) == started:
                continue
        except (OSError, ValueError):
            continue
        shutil.rmtree(found, ignore_errors=True)
        removed.append(found)
    if removed:
        print(
            f"tfbench: removed {len(removed)} folder(s) a stopped run left: {removed[0]}"
            + (" ..." if len(removed) > 1 else ""),
            file=sys.stderr,
        )
    return removed
