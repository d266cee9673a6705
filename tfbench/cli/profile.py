"""`tfbench profile`: where the time of a release's run (README command 1) or of the tests
(README command 2's pytest) goes, as Markdown tables; `--into` adds them, dated and with
the CPU, to a document (docs/archive/profile.md, the dated record)."""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from tfbench import whole
from tfbench.cli import common
from tfbench.cli import run as run_command
from tfbench.cli.common import BadInput, Subcommands

if TYPE_CHECKING:
    from tfbench.profile import Timeline


def add(sub: Subcommands) -> None:
    p = sub.add_parser("profile", help="where the time of a release's run or of the tests goes")
    what = p.add_subparsers(dest="what", required=True)
    release = what.add_parser(
        "release", help="run README command 1 (`tfbench run`) and profile it by phase"
    )
    run_command.add_arguments(release)
    release.add_argument(
        "--result", type=Path, help="profile this asv results file instead of running"
    )
    tests = what.add_parser("tests", help="run the tests (README command 2's pytest), by test")
    tests.add_argument("pytest_args", nargs="*", help="more pytest arguments (after --)")
    for parser in (release, tests):
        parser.add_argument("--into", type=Path, help="add the table, dated, to this document")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from tfbench import profile

    if args.what == "tests":
        code, table = _tests(args.pytest_args)
        title = "The tests (`pytest -q -n 2 --dist worksteal`)"
    elif args.result:
        table, code = profile.release_table(_rows(args.result, None)), 0
        title = f"A kept release run: {args.result}"
    else:
        code, table, title = _release(args)
    print(table)
    if args.into:
        _add(args.into, title, table)
        common.progress(f"added to {args.into}")
    return code


def _tests(more: list[str]) -> tuple[int, str]:
    import importlib.util

    from tfbench import profile
    from tfbench.paths import ROOT

    if importlib.util.find_spec("pytest") is None:
        raise BadInput("the tests need the test extra: pip install -e '.[tf,test]'")
    with whole.temporary("tfbench-profile-") as tmp:
        lines = tmp / "tests.jsonl"
        start = time.monotonic()
        code = subprocess.call(
            [sys.executable, "-m", "pytest", "-q", "-n", "2", "--dist", "worksteal", *more],
            cwd=ROOT,
            env=dict(os.environ, TFBENCH_TEST_PROFILE=str(lines)),
        )
        wall = time.monotonic() - start
        found = profile.test_lines(lines) if lines.exists() else []
    return code, profile.tests_table(found, wall)


def _release(args: argparse.Namespace) -> tuple[int, str, str]:
    from tfbench import profile
    from tfbench.measure import parents

    planned = run_command.planned(args)
    timeline = profile.Timeline()
    start = time.monotonic()
    # unbuffered: each line is stamped when asv writes it
    env = dict(planned.env, PYTHONUNBUFFERED="1")
    with run_command.guarded(planned, args.wait):
        before = run_command.stamps(planned.results)
        with parents.serving(planned.command, env, stdout=subprocess.PIPE) as asv:
            stream = asv.process.stdout
            assert stream is not None
            # asv writes a phase's line as the phase begins and ends the line after it: each
            # line is read as it is written, and marks a phase once
            line, marked = "", False
            while chunk := os.read(stream.fileno(), 65536).decode(errors="replace"):
                sys.stdout.write(chunk)
                for part in chunk.splitlines(keepends=True):
                    line += part
                    marked = marked or timeline.see(time.monotonic() - start, line)
                    if line.endswith("\n"):
                        line, marked = "", False
            code = asv.wait()
    timeline.total = time.monotonic() - start
    written = run_command.written(planned.results, before)
    if len(written) != 1:
        raise BadInput(f"the run wrote {len(written)} results files, not one: nothing to profile")
    rows = _rows(written[0], timeline)
    title = (
        f"One release: `tfbench run {planned.revisions} --repeats {args.repeats}` "
        f"on Python {args.python}"
    )
    return code, profile.release_table(rows), title


def _rows(path: Path, timeline: Timeline | None) -> list[tuple[str, float]]:
    """The phases of an asv results file (profile.release_rows), or one line refusing it."""
    from tfbench import keptfiles, profile

    try:
        keptfiles.regular(path)
        return profile.release_rows(json.loads(path.read_text()), timeline)
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        raise BadInput(f"{path}: not an asv results file ({e})") from None


def _add(document: Path, title: str, table: str) -> None:
    from tfbench import cpu, whole

    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    head = f"## {now}: {title}\n\nCPU `{cpu.identity()['id']}`, {os.cpu_count()} cores.\n\n"
    text = document.read_text() if document.exists() else "# Where the time goes\n"
    whole.write(document, f"{text.rstrip()}\n\n{head}{table}\n")
