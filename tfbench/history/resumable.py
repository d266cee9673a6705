"""asv run, its results file saved after every benchmark and each save whole: a history run
that is killed or rebooted keeps every benchmark it finished, and the next run (asv's
--bench of what is left) goes on from there. asv 0.6 saves a commit's results once, after
its last benchmark, and writes the file in place.

A benchmark that fails on the machine's fault (a full disk, a folder it may not write: a
probes file it could not write, asv's cache) ends the run there, in one line naming the
file and what to do, faults.EXIT_IO: asv would go on and fail every benchmark after it.

    python -m tfbench.history.resumable RESULTS_DIR ASV_ARGUMENTS...
"""

from __future__ import annotations

import errno
import os
import re
import sys
from typing import Any

from asv import util
from asv.results import Results

from tfbench import faults
from tfbench.history import journal

# a traceback's last line: "OSError: [Errno 28] No space left on device: '/r/x'"
_RAISED = re.compile(r"^[A-Za-z_][\w.]*(?:Error|Exception)\b.*$", re.MULTILINE)
_OS_ERROR = re.compile(r"\[Errno (\d+)\] [^:]*(?:: '([^']*)')?")


def machine_fault(output: str | None) -> OSError | None:
    """The machine's fault a failed benchmark's output ends on (the last exception it
    raised), if it is one."""
    raised = _RAISED.findall(output or "")
    found = _OS_ERROR.search(raised[-1]) if raised else None
    if found is None:
        return None
    code, where = int(found.group(1)), found.group(2)
    if errno.errorcode.get(code) not in faults.MACHINE_FAULTS:
        return None
    return OSError(code, os.strerror(code), where or None)


def _write_json(path: str, data: Any, api_version: int | None = None, compact: bool = False):
    """asv's util.write_json, whole: written beside, then renamed over."""
    partial = f"{path}.partial"  # not *.json: asv's and tfbench's readers never see it
    _asv_write_json(partial, data, api_version, compact)
    os.replace(partial, path)


def save_each(results_dir: str) -> None:
    """Every result asv adds is saved with the results file it belongs to."""
    add_result = Results.add_result

    def add_and_save(self: Results, benchmark: dict, result: Any, *args: Any, **kw: Any) -> None:
        add_result(self, benchmark, result, *args, **kw)
        fault = machine_fault(result.stderr) if result.errcode else None
        try:
            if self._filename is not None:  # a named run's: unnamed ones are not saved
                self.save(results_dir)
        except OSError:
            if fault is None:
                raise
        if fault is not None:
            faults.machine_fault(fault)
            sys.exit(faults.EXIT_IO)

    set_duration = Results.set_setup_cache_duration

    def with_earlier_runs(self: Results, key: str, value: float) -> None:
        """A grid a stopped run began took its time too (tfbench.history.journal)."""
        set_duration(self, key, value + journal.earlier(self.commit_hash, self.env_name, key))

    Results.add_result = add_and_save
    Results.set_setup_cache_duration = with_earlier_runs
    util.write_json = _write_json


_asv_write_json = util.write_json


def main() -> None:
    results_dir, *arguments = sys.argv[1:]
    save_each(results_dir)
    from asv.main import main as asv_main

    sys.argv = ["asv", *arguments]
    try:
        asv_main()
    except OSError as e:  # asv's own writes: its environments, its results
        faults.end_on(e)
        raise


if __name__ == "__main__":
    main()
