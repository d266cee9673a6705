"""Make an asv environment hold exactly one release's lock; asv's install_command runs this.

Run with the environment's own Python and only the standard library (tfbench itself is not
installed there). Distributions whose pinned version is already installed stay as they are,
unlike asv's default `pip install --force-reinstall`; ones the lock does not name are removed,
so nothing left over from another release leaks into the measurement. uv does the work
(installed into the environment by pip the first time): a switch between releases takes
seconds, not pip's 30-60.
TFBENCH_WHEELS=gpu picks the GPU lock (tensorflow[and-cuda]); the default is cpu. An
environment of another Python than the history's gets that Python's lock (python_lock).
asv does not record what an environment held: `uv pip freeze` after the install goes to
RECORD_DIR/<machine>/<commit>-<environment>-<cpu|gpu>.txt, beside the results it produced
(each machine its own: a run never rewrites another machine's record).
Every module is then compiled to bytecode (compile_bytecode). A distribution with a file
missing or cut (a killed install, a damaged disk; uv's cache is hard-linked into the
environment, so the cache is bypassed) is installed again, said in one line. This process
and every one it starts end when the one that started them does (a killed `tfbench run`
leaves no install running).
"""

import csv
import ctypes
import json
import os
import platform
import re
import signal
import subprocess
import sys
import sysconfig
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

# What asv itself puts in every environment, and uv, which installs here.
ENVIRONMENT_TOOLS = {"pip", "asv-runner", "uv"}


def ends_with_parent() -> None:
    """The kernel sends this process SIGKILL when the one that started it ends (Linux's
    PR_SET_PDEATHSIG; elsewhere nothing); each process started here does so too."""
    try:
        ctypes.CDLL(None).prctl(1, int(signal.SIGKILL), 0, 0, 0)  # 1 = PR_SET_PDEATHSIG
    except (AttributeError, OSError):
        pass


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def not_in_lock(lock_text: str, installed: list[str]) -> list[str]:
    """Installed distributions that the lock does not name (asv's own tools excepted)."""
    wanted = {
        normalize(line.split("==")[0])
        for line in lock_text.splitlines()
        if line.strip() and not line.startswith("#")
    }
    return sorted({normalize(name) for name in installed} - wanted - ENVIRONMENT_TOOLS)


def damaged(site: Path) -> Iterator[tuple[str, str]]:
    """(distribution, what is wrong) for each distribution in the site-packages folder
    `site` whose RECORD lists a file missing or of another size (bytecode excepted:
    compile_bytecode writes it again)."""
    for record in sorted(site.glob("*.dist-info/RECORD")):
        name = normalize(record.parent.name.split("-")[0])
        try:
            rows = list(csv.reader(record.read_text().splitlines()))
        except (OSError, UnicodeDecodeError, csv.Error):
            yield name, f"{record.relative_to(site)} unreadable"
            continue
        for row in rows:
            if len(row) < 3 or not row[2].isdigit() or row[0].endswith(".pyc"):
                continue  # the RECORD, files listed without a size, bytecode
            try:
                size = (site / row[0]).stat().st_size
            except OSError:
                yield name, f"{row[0]} is missing"
                break
            if size != (was := int(row[2])):
                yield name, f"{row[0]} holds {size:,} bytes where it was installed with {was:,}"
                break


def lock_file_name(flavour: str) -> str:
    """The lock of one wheel flavour in a release's folder (and in its history commit)."""
    return f"requirements-{flavour}.txt"


def record_name(commit: str, env_name: str, flavour: str) -> str:
    """What an asv run records beside its results, per environment, is named
    <commit>-<environment>-<cpu|gpu>: the packages here, the probe's repeats
    (tfbench.probes)."""
    return f"{commit[:8]}-{env_name}-{flavour}"


def asv_machine() -> str:
    """The asv machine the run under way measures on, which asv tells no process it starts:
    TFBENCH_MACHINE where set, else the `--machine` of the `asv` command this process
    descends from, else asv's default (the machine file's one entry, or the host's name)."""
    named = os.environ.get("TFBENCH_MACHINE")
    if named:
        return named
    pid = os.getppid()
    while pid > 1:
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
            parent = int(Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[1])
        except (OSError, ValueError, IndexError):
            break
        if any(Path(word).name == "asv" for word in argv[:3]) and "run" in argv:
            return _option(argv, "--machine") or _default_machine()
        pid = parent
    return _default_machine()


def folder_name(machine: str) -> bool:
    """Whether a machine's name can name its folder of kept files (tfbench.grammar.MACHINE:
    this module runs where tfbench is not installed)."""
    return re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}", machine) is not None


def _option(argv: list[str], name: str) -> str | None:
    for k, word in enumerate(argv):
        if word == name and k + 1 < len(argv):
            return argv[k + 1]
        if word.startswith(f"{name}="):
            return word.partition("=")[2]
    return None


def _default_machine() -> str:
    """asv's machine without --machine: the host's entry of ~/.asv-machine.json, else its
    only entry, else the host's name."""
    host = platform.node()
    try:
        known = json.loads((Path.home() / ".asv-machine.json").read_text())
    except (OSError, ValueError):
        return host
    machines = [k for k in known if k != "version"] if isinstance(known, dict) else []
    if host in machines or len(machines) != 1:
        return host
    entry = known[machines[0]]
    return str(entry.get("machine", machines[0])) if isinstance(entry, dict) else host


# One share of the environment's modules, compiled by the environment's own Python: every
# `share`-th file of the sorted walk from `start` (sys.argv[1:3]).
_COMPILE_SHARE = """
import compileall, os, sys, sysconfig
start, share = map(int, sys.argv[1:3])
root = sysconfig.get_paths()["purelib"]
files = sorted(os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs if f.endswith(".py"))
for path in files[start::share]:
    compileall.compile_file(path, quiet=2)
"""


def compile_bytecode(python: str) -> None:
    """Compile every module of `python`'s environment to bytecode, as pip does and uv does
    not by default. Where no .pyc can be written at import (PYTHONDONTWRITEBYTECODE, a
    read-only environment), every process would otherwise compile TensorFlow's modules from
    source: a slower import, and the compiler's freed memory fragments the heap every probe
    child inherits, so a point's peak would read a level per process (docs/measuring.md).
    Fast when already done: only timestamps are checked.

    One process a CPU, each given a fixed share of the files: compileall's own pool hands
    out one file at a time, which costs about a third more CPU for the same .pyc files."""
    shares = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
    workers: list[subprocess.Popen] = []
    try:
        for k in range(shares):  # a session each: a terminal's Ctrl-C reaches this process
            workers.append(  # alone, not the workers, each of which would print a traceback
                subprocess.Popen(
                    [python, "-c", _COMPILE_SHARE, str(k), str(shares)],
                    preexec_fn=ends_with_parent,
                    start_new_session=True,
                )
            )
        failed = [w for w in workers if w.wait() != 0]  # every share ended before one is said
    except BaseException:  # an interrupt: the workers end with it, quietly
        for worker in workers:
            worker.kill()
            worker.wait()
        raise
    if failed:
        raise subprocess.CalledProcessError(failed[0].returncode, failed[0].args)


LOCKED = re.compile(r"^# tfbench lock: [\w\[\]-]+==(\S+) ", re.M)
HISTORY_PYTHON = "3.11"  # the Python of the locks a release's commit holds


def python_lock(build_dir: Path, flavour: str, python: str) -> Path:
    """The lock to install for this environment's Python: the commit's own for the
    history's Python; else the release's lock for `python` in the project's
    releases/locks/VERSION/pyX.Y/ (kept out of the commits: they change no hash). Exits
    with the reason where the release has no lock for this Python."""
    lock = build_dir / lock_file_name(flavour)
    if not lock.is_file():
        sys.exit(
            f"envsync: no {lock.name} in this release (TFBENCH_WHEELS={flavour!r}; cpu or gpu)"
        )
    if python == HISTORY_PYTHON:
        return lock
    match = LOCKED.search(lock.read_text())
    folder = Path(__file__).resolve().parents[2] / "releases" / "locks"
    folder = folder / (match.group(1) if match else "?") / f"py{python}"
    mine = folder / lock_file_name(flavour)
    if mine.is_file():
        return mine
    why = folder / "unsupported.txt"
    reason = why.read_text().strip("# \n") if why.is_file() else f"not locked: {folder} is missing"
    sys.exit(f"envsync: no lock for Python {python}: {reason}")


def main(build_dir: str, record_dir: str) -> None:
    ends_with_parent()
    flavour = os.environ.get("TFBENCH_WHEELS", "cpu")
    python = "{}.{}".format(*sys.version_info[:2])
    lock = python_lock(Path(build_dir), flavour, python)
    installed = [d.metadata["Name"] for d in metadata.distributions()]
    here = ["--python", sys.executable]
    if "uv" not in map(normalize, installed):  # once per environment; pip's cache serves it
        subprocess.run(
            [sys.executable, "-m", "pip", "install", "--quiet", "uv"],
            check=True,
            preexec_fn=ends_with_parent,
        )
    uv = [sys.executable, "-m", "uv", "pip"]
    extra = not_in_lock(lock.read_text(), installed)
    if extra:
        subprocess.run([*uv, "uninstall", *here, *extra], check=True, preexec_fn=ends_with_parent)
    again = []
    for name, why in damaged(Path(sysconfig.get_paths()["purelib"])):
        print(f"envsync: {name} is damaged ({why}): installing it again", file=sys.stderr)
        again += ["--reinstall-package", name, "--no-cache"]
    done = subprocess.run(
        [*uv, "install", *here, "--no-deps", "--requirement", str(lock), *again],
        preexec_fn=ends_with_parent,
    )
    if done.returncode:  # uv printed why; asv reports it, skips this release, goes on
        sys.exit(f"envsync: could not install {lock} (uv exit {done.returncode})")
    compile_bytecode(sys.executable)
    frozen = subprocess.run(
        [*uv, "freeze", *here],
        check=True,
        capture_output=True,
        text=True,
        preexec_fn=ends_with_parent,
    )
    name = record_name(
        os.environ.get("ASV_COMMIT", "unknown"), os.environ.get("ASV_ENV_NAME", "env"), flavour
    )
    machine = asv_machine()
    if not folder_name(machine):
        sys.exit(f"envsync: machine name {machine!r} is no folder's; nothing recorded")
    record = Path(record_dir) / machine / f"{name}.txt"
    record.parent.mkdir(parents=True, exist_ok=True)
    # whole, as tfbench.whole.write writes (this script runs by path in asv's environment,
    # where tfbench is not importable): a full disk cuts nothing
    partial = record.with_name(f".{record.name}.partial")
    try:
        partial.write_text(f"# {lock.name} as installed by tfbench/envsync.py\n{frozen.stdout}")
        os.replace(partial, record)
    finally:
        partial.unlink(missing_ok=True)


if __name__ == "__main__":
    main(*sys.argv[1:3])
