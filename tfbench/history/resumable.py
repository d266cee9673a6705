"""asv run, its results file saved after every benchmark and each save whole: a history run
that is killed or rebooted keeps every benchmark it finished, and the next run (asv's
--bench of what is left) goes on from there. asv 0.6 saves a commit's results once, after
its last benchmark, and writes the file in place.

    python -m tfbench.history.resumable RESULTS_DIR ASV_ARGUMENTS...
"""

from __future__ import annotations

import os
import sys
from typing import Any

from asv import util
from asv.results import Results


def _write_json(path: str, data: Any, api_version: int | None = None, compact: bool = False):
    """asv's util.write_json, whole: written beside, then renamed over."""
    partial = f"{path}.partial"  # not *.json: asv's and tfbench's readers never see it
    _asv_write_json(partial, data, api_version, compact)
    os.replace(partial, path)


def save_each(results_dir: str) -> None:
    """Every result asv adds is saved with the results file it belongs to."""
    add_result = Results.add_result

    def add_and_save(self: Results, *args: Any, **kwargs: Any) -> None:
        add_result(self, *args, **kwargs)
        if self._filename is not None:  # a named run's: unnamed ones are not saved
            self.save(results_dir)

    Results.add_result = add_and_save
    util.write_json = _write_json


_asv_write_json = util.write_json


def main() -> None:
    results_dir, *arguments = sys.argv[1:]
    save_each(results_dir)
    from asv.main import main as asv_main

    sys.argv = ["asv", *arguments]
    asv_main()


if __name__ == "__main__":
    main()
