"""asv's `publish`, each git range asked once: `python -m tfbench.publish.asv_publish ARGS`
runs `asv ARGS`.

asv's regressions page asks git for the commits of every jump's range, a subprocess each,
once per graph and jump: hundreds of calls for one range, most of asv publish's time. The
repository does not change while asv publishes, so each range's answer is kept for the run.
A full disk or a folder it may not write ends it in one line naming the site's folder, with
faults.EXIT_IO, not asv's traceback.
"""

from __future__ import annotations

import functools
import os
import sys

from asv.plugins.git import Git


def command(config: str) -> list[str]:
    """The command that publishes asv's pages of `config` (an asv.conf.json)."""
    return [sys.executable, "-m", __name__, "publish", "--config", config]


def _remember_ranges() -> None:
    ask = Git.get_hashes_from_range
    answers = functools.cache(lambda repo, spec: tuple(ask(repo, spec)))
    Git.get_hashes_from_range = lambda repo, spec: list(answers(repo, spec))  # a copy each


def _publish() -> None:
    from asv.config import Config
    from asv.main import main

    from tfbench import faults

    _remember_ranges()
    try:
        main()
    except OSError as e:
        code = faults.errno_of(e)  # copytree's: its files' errors as text
        site = Config.load(sys.argv[sys.argv.index("--config") + 1]).html_dir
        faults.end_on(OSError(code, os.strerror(code), site))
        raise


if __name__ == "__main__":
    _publish()
