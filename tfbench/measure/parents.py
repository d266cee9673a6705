"""One measuring parent for a whole run's probes, not one a family.

tfbench.targets.run_isolated starts a fresh measuring parent for every request, and each
imports TensorFlow before it forks a child a reading; an asv run asks once a family (each
Costs class's `setup_cache`). Within `shared()` (`tfbench run`, `tfbench profile release`,
and the history's asv runs through `python -m tfbench.measure.parents COMMAND`) such
requests go to a broker in the process that holds it. The first request of an interpreter
and environment starts its parent (`python -m tfbench.targets`, no arguments:
targets._serve), in the environment run_isolated gives a fresh one with its own TMPDIR;
every later request with the same interpreter, import roots and environment is answered by
it: the request's modules imported, each target measured in a child forked from it, as a
fresh parent does. A child reads its own process from its own baseline; between requests
the parent only waits.

A parent is the broker's child: it ends when the broker's process does (the kernel's
parent-death signal), and its children with it. A request the broker cannot take (none
running: the variable outlived its run) starts a fresh parent, as without it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import IO, Any

from tfbench import whole
from tfbench.measure import spawn

VAR = "TFBENCH_PARENTS"  # the broker's socket, where a run shares its measuring parents
STOP_S = 10.0  # a parent told to stop (its input closed) is killed after this


class _Parent:
    def __init__(self, argv: list[str], env: dict[str, str], folder: Path) -> None:
        self.log = folder / "log"
        with open(self.log, "ab") as log:
            self.spawned = spawn.Spawned(
                argv, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log
            )
        process = self.spawned.process
        assert process.stdin is not None and process.stdout is not None
        self.requests: IO[bytes] = process.stdin
        self.answers: IO[bytes] = process.stdout

    def ask(self, spec: str, out: str) -> dict[str, Any]:
        """Its answer to one request: its exit code (None while it serves on) and what it
        printed meanwhile."""
        start = self.log.stat().st_size
        try:
            self.requests.write(json.dumps([spec, out]).encode() + b"\n")
            self.requests.flush()
            answered = bool(self.answers.readline())
        except OSError:
            answered = False
        code = None if answered else self.spawned.wait()
        with open(self.log, "rb") as log:
            log.seek(start)
            printed = log.read().decode(errors="replace")
        return {"exit": code, "printed": printed}

    def stop(self) -> None:
        with contextlib.suppress(OSError):
            self.requests.close()
        try:
            self.spawned.process.wait(STOP_S)
        except subprocess.TimeoutExpired:
            pass
        spawn.kill_group(self.spawned.pid)
        self.spawned.wait()


class _Broker:
    def __init__(self, folder: Path) -> None:
        self.parents: dict[str, _Parent] = {}  # by interpreter, roots and environment
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(str(folder / "socket"))
        self.listener.listen()
        # the parents' parent-death signal follows this thread: it lives as long as they do
        self.thread = threading.Thread(target=self._serve, name="tfbench-parents", daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:  # closed: the run is over
                break
            # the asker gone (an interrupted run): its answer goes with it, and the write's
            # error too, which closing the stream raises again (a BrokenPipeError's traceback)
            with contextlib.suppress(OSError), conn, conn.makefile("rwb") as stream:
                try:
                    answer = self._answer(json.loads(stream.readline()))
                except (OSError, ValueError) as e:
                    answer = {"exit": None, "printed": "", "refused": str(e)}
                stream.write(json.dumps(answer).encode() + b"\n")
        for parent in self.parents.values():
            parent.stop()

    def _answer(self, request: dict[str, Any]) -> dict[str, Any]:
        key = request["key"]
        parent = self.parents.get(key)
        if parent is None:
            folder = Path(request["env"]["TMPDIR"])
            parent = self.parents[key] = _Parent(request["argv"], request["env"], folder)
        answer = parent.ask(request["spec"], request["out"])
        if answer["exit"] is not None:  # it died: the next request starts another
            del self.parents[key]
        return answer

    def close(self, interrupted: bool) -> None:
        """No more requests; each parent stopped once idle, or at once where `interrupted`
        (its request then ends with it, its answer lost with the run)."""
        self.listener.shutdown(socket.SHUT_RDWR)
        self.listener.close()
        if interrupted:
            for parent in list(self.parents.values()):
                spawn.kill_group(parent.spawned.pid)
        self.thread.join()


@contextlib.contextmanager
def shared() -> Iterator[dict[str, str]]:
    """The environment that has this process's broker answer its children's measuring
    requests; every parent it started is stopped on leaving."""
    # short, in the system's temporary folder: a socket's path is limited to 108 bytes
    folder = whole.scratch("tfbench-parents-")
    broker = _Broker(folder)
    try:
        yield {VAR: str(folder / "socket")}
    except BaseException:
        broker.close(interrupted=True)
        raise
    else:
        broker.close(interrupted=False)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@contextlib.contextmanager
def serving(
    argv: list[str], env: Mapping[str, str], stdout: IO[Any] | int | None = None
) -> Iterator[spawn.Spawned]:
    """`argv` (an asv run) started with one measuring parent serving its probes: in its own
    session, so that an interrupt reaches tfbench alone, which ends it (SIGTERM: asv ends
    its forkserver and measurements); its processes writing in a folder removed after
    (they exit without Python's exit handlers, where TensorFlow's autograph removes the
    modules it writes). Wait for it within: the parents stop on leaving."""
    with shared() as brokered:
        yield spawn.Spawned(
            argv,
            env={**env, **brokered},
            stdout=stdout,
            parent_signal=signal.SIGTERM,
            own_tmp=True,
        )


def folder_for(
    python: str, roots: list[str], counted: bool, env: Mapping[str, str]
) -> Path | None:
    """The folder of the shared parent that would serve a request made with this
    interpreter, import roots, heap counting and environment; None outside `shared()`."""
    where = env.get(VAR)
    if not where:
        return None
    said = json.dumps([python, roots, counted, sorted(env.items())])
    return Path(where).parent / hashlib.sha256(said.encode()).hexdigest()[:16]


def ask(
    folder: Path, argv: list[str], env: dict[str, str], spec: Path, out: Path
) -> dict[str, Any] | None:
    """The shared parent's answer (`exit`: its exit code where it died, else None;
    `printed`: what it printed meanwhile), started where there is none; None where the
    broker does not answer (then a fresh parent measures)."""
    request = {"key": folder.name, "argv": argv, "env": env, "spec": str(spec), "out": str(out)}
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.connect(os.environ[VAR])
            with conn.makefile("rwb") as stream:
                stream.write(json.dumps(request).encode() + b"\n")
                stream.flush()
                line = stream.readline()
    except OSError:
        return None
    answer = json.loads(line) if line else None
    return None if answer is None or "refused" in answer else answer


def main(argv: list[str]) -> int:
    """`python -m tfbench.measure.parents COMMAND...`: COMMAND (an asv run of the history:
    .ci/measure) run with one measuring parent serving its probes; its exit code."""
    if not argv:
        print("usage: python -m tfbench.measure.parents COMMAND...", file=sys.stderr)
        return 2
    with serving(argv, os.environ) as command:
        code = command.wait()
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
