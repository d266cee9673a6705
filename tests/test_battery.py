"""The hostile battery: files a hostile contributor would put in results/, of every kept
format and every class of fault (markup, terminal escapes and bidi marks, nesting, numbers
beyond their range, dates that do not exist or lie, references that loop or point forward,
FIFOs, links out of the results), each read by every command that reads it: the report
and the site's own pages (report.md, report.html, nightly.html, upstream's write-ups), merge,
and for what asv shows, `tfbench publish`. Each file is used as a checked record or named
in one line; nothing raises, hangs, shows markup raw or writes outside the results."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from conftest import scratch_asv_conf
from test_untrusted import assert_inert_html, assert_inert_markdown

from tfbench.history.repo import history_tags
from tfbench.paths import ROOT
from tfbench.publish import merge, site
from tfbench.publish.coverage import REFERENCE

pytestmark = pytest.mark.slow  # the report of two releases a case; asv publish for some

MACHINE = "linux-2cpu-24gb"  # its gate runs, nightly builds and bisections
HISTORY = REFERENCE  # its release history: asv's results and their probes
INTEL = "linux-2cpu-24gb-intel-6.167.1-2c-7eae69"
SECONDS = 120  # the most a reader may take over one case: beyond, a hang
HTML = '<img src=x onerror="alert(1)">PWNED'
TERMINAL = "\x1b]8;;http://evil\x1b\\PWNED\x1b[2J\u202egnp.exe"
HUGE = 10**400


def _newest() -> dict[str, str]:
    tags = history_tags()
    return {tag: tags[tag][:8] for tag in ("v2.21.0", "v2.22.0rc0")}


RC0 = _newest()["v2.22.0rc0"]
FILES = {  # the kept file of each format the cases edit, under results/
    "benchmarks.json": "benchmarks.json",
    "machine.json": f"{HISTORY}/machine.json",
    "asv result": f"{HISTORY}/{RC0}-virtualenv-py3.11.json",
    "gate run (before CPUs)": f"gate/{MACHINE}/v2.21.0-v2.22.0rc0.json",
    "gate run": f"gate/{INTEL}/v2.21.0-v2.22.0rc0.json",
    "nightly build": f"nightly/{MACHINE}/2.22.0.dev20260205.json",
    "bisection": f"upstream/{MACHINE}/footprint-footprint-heap/bisect.json",
    "explained": f"explain/{HISTORY}/v2.22.0rc0.json",
    "probes": f"probes/{HISTORY}/{RC0}-virtualenv-py3.11-cpu.json",
}
SITE = {"benchmarks.json", "machine.json", "asv result"}  # what asv's pages show


@dataclass(frozen=True)
class Case:
    format: str
    name: str
    make: Callable[[Path, Path], None]  # (the format's file, or the results; a folder outside)
    in_target: bool = False  # made in merge's target, not its source

    @property
    def id(self) -> str:
        return f"{self.format}: {self.name}"


def _of(fmt: str, made: dict[str, Callable[[Path, Path], None]]) -> list[Case]:
    return [Case(fmt, name, make) for name, make in made.items()]


def _edit(change: Callable[[Any], Any]) -> Callable[[Path, Path], None]:
    def make(path: Path, outside: Path) -> None:
        data = json.loads(path.read_text())
        new = change(data)
        path.write_text(json.dumps(data if new is None else new))

    return make


def _bytes(data: bytes) -> Callable[[Path, Path], None]:
    return lambda path, outside: path.write_bytes(data)


def _fifo(path: Path, outside: Path) -> None:
    path.unlink()
    os.mkfifo(path)


def _linked(folder: str) -> Callable[[Path, Path], None]:
    """The results' folder a link to one outside them holding the same files."""

    def make(results: Path, outside: Path) -> None:
        away = outside / folder.replace("/", "_")
        shutil.move(results / folder, away)
        (results / folder).symlink_to(away, target_is_directory=True)

    return make


def _set(value: Any, *where: Any) -> Callable[[Path, Path], None]:
    """The value put at a place: keys and indexes, or a function finding the node."""

    def change(data: Any) -> None:
        node = data
        for step in where[:-1]:
            node = step(node) if callable(step) else node[step]
        node[where[-1]] = value

    return _edit(change)


def _first(node: dict) -> Any:
    return node[next(iter(node))]


def _values(data: dict) -> list:
    """A result's first benchmark's values (asv's result columns: the first, its values)."""
    return next(v for v in data["results"].values() if v and v[0] is not None)


def _time_row(data: dict) -> dict:
    return next(r for r in data["rows"] if r["metric"].startswith("time_"))


def _point(data: dict) -> dict:
    return data["time"]["points"][0]


def _different(ratio: float, low: Any, high: Any) -> Callable[[Path, Path], None]:
    return _edit(lambda d: _point(d).update(answer="different", ratio=ratio, low=low, high=high))


def _every_value(value: Any) -> Callable[[Path, Path], None]:
    return _edit(lambda d: _values(d).__setitem__(0, [value] * len(_values(d)[0])))


DEEP = b"[" * 1200 + b"1" + b"]" * 1200
WHOLE = {"nested 1200 deep": _bytes(DEEP), "a FIFO": _fifo}  # of every format
EAGER, POWER = "graphs.Eager", "loops.MatrixPower.time_step"
BUILD = ("build",)
CASES = [
    # benchmarks.json: what asv's pages build HTML from, and the code they show as HTML
    *_of("benchmarks.json", {
        "pretty_name markup": _set(HTML, f"{EAGER}.time_step", "pretty_name"),
        "pretty_name bidi": _set("a\u202eb", f"{EAGER}.time_step", "pretty_name"),
        "code markup": _set(HTML, POWER, "code"),
        "code not text": _set({"a": 1}, POWER, "code"),
        "unit markup": _set(HTML, f"{EAGER}.peakmem_step", "unit"),
        "type unknown": _set(HTML, f"{EAGER}.peakmem_step", "type"),
        "param value markup": _set([[f"'{HTML}'"], ["'CPU'"]], f"{EAGER}.peakmem_step", "params"),
        "param name terminal": _set([TERMINAL, "device"], f"{EAGER}.peakmem_step", "param_names"),
        "400-digit timeout": _set(HUGE, f"{EAGER}.time_step", "timeout"),
        "no object": _bytes(b"[1, 2]"),
        **WHOLE,
    }),
    *_of("machine.json", {
        "os markup": _set(HTML, "os"),
        "cpu terminal and bidi": _set(TERMINAL, "cpu"),
        "400-digit num_cpu": _set(HUGE, "num_cpu"),
        **WHOLE,
    }),
    *_of("asv result", {
        "value a string": _every_value("x"),
        "value 400 digits": _every_value(HUGE),
        "value an object": _every_value({"a": 1}),
        "env_name shell": _set("$(touch PWNED)", "env_name"),
        "commit markup": _set(HTML, "commit_hash"),
        "date 400 digits": _set(HUGE, "date"),
        "not UTF-8": _bytes(b"\xff\xfe{"),
        **WHOLE,
    }),
    *_of("gate run (before CPUs)", {
        "ratio -2 worse": _set(-2, _time_row, "evidence", "ratio"),
        "ratio exactly 1": _edit(lambda d: _time_row(d)["evidence"].update(dict.fromkeys(
            ("ratio", "low", "high"), 1))),
        "interval null": _edit(lambda d: _time_row(d)["evidence"].update(low=None, high=None)),
        "pairs negative": _set(-5, _time_row, "evidence", "pairs"),
        "before 400 digits": _set(HUGE, _time_row, "before"),
        "direction markup": _set(HTML, _time_row, "direction"),
        "unknown point terminal": _edit(lambda d: d["time"]["unknown"].append(TERMINAL)),
        **WHOLE,
    }),
    *_of("gate run", {
        "different at ratio 0": _different(0, 0, 0),
        "different at ratio -2": _different(-2, -3, -1),
        "different, interval null": _different(1.05, None, None),
        "ratio outside its interval": _different(1.5, 1.01, 1.02),
        "point's cpu markup": _set(HTML, _point, "cpu"),
        "cpu identity terminal": _set(TERMINAL, "cpus", _first, "model_name"),
        "pairs 400 digits": _set(HUGE, _point, "pairs"),
        **WHOLE,
    }),
    *_of("nightly build", {
        "before itself": _edit(lambda d: d.update(before=d["build"]["version"])),
        "before a later build": _set("2.22.0.dev20260214", "before"),
        "uploaded 2026-02-30": _set("2026-02-30T00:00:00Z", *BUILD, "uploaded"),
        "uploaded year 0001": _set("0001-01-01T00:00:00Z", *BUILD, "uploaded"),
        "uploaded far future": _set("9999-12-31T23:59:59Z", *BUILD, "uploaded"),
        "git_version markup": _set(HTML, *BUILD, "git_version"),
        "iterations negative": _set(-5, "readings", "eager", 0, "iterations"),
        "growth 400 digits": _set(HUGE, "readings", "eager", 0, "growth_bytes_per_iteration"),
        "environment terminal": _set(TERMINAL, "environment", "os"),
        **WHOLE,
    }),
    *_of("bisection", {
        "builds out of order": _edit(lambda d: d["builds"].reverse()),
        "a build uploaded 2026-02-30": _set("2026-02-30T00:00:00Z", "builds", 0, "uploaded"),
        "broken text markup": _edit(lambda d: d.update(broken={d["builds"][0]["version"]: HTML})),
        "environment terminal": _set(TERMINAL, "environment", "os"),
        **WHOLE,
    }),
    *_of("explained", {"conclusion markup": _set(HTML, "points", _first, "conclusion"), **WHOLE}),
    *_of("probes", {
        "error markup and terminal": _edit(lambda d: _first(d).update(
            {next(iter(_first(d))): [{"status": "error", "error": HTML + TERMINAL}]})),
        **WHOLE,
    }),
    # links out of the results: in the source, and in merge's target
    *_of("links", {
        "a machine folder": _linked(HISTORY),
        "a gate folder": _linked(f"gate/{MACHINE}"),
        "the nightly folder": _linked(f"nightly/{MACHINE}"),
    }),
    Case("links", "merge's gate folder", _linked(f"gate/{INTEL}"), in_target=True),
    Case("links", "merge's machine folder", _linked(HISTORY), in_target=True),
]  # fmt: skip


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    """The committed results of the two newest releases and every kept folder."""
    source, target = ROOT / "results", tmp_path_factory.mktemp("base") / "results"
    target.mkdir()
    shutil.copy2(source / "benchmarks.json", target)
    for machine in (HISTORY, f"probes/{HISTORY}"):
        (target / machine).mkdir(parents=True)
        for commit in _newest().values():
            for path in (source / machine).glob(f"{commit}-*.json"):
                shutil.copy2(path, target / machine)
    shutil.copy2(source / HISTORY / "machine.json", target / HISTORY)
    shutil.copytree(source / INTEL, target / INTEL)  # a second machine: the site without one
    for kept in ("gate", "explain", "nightly", "upstream"):
        shutil.copytree(source / kept, target / kept)
    # the history's explanations (`tfbench explain --leaking`), as the retired machine's read
    shutil.copytree(target / "explain" / MACHINE, target / "explain" / HISTORY)
    return target


@contextlib.contextmanager
def _bounded(what: str):
    """A reader that runs past SECONDS fails as a hang."""

    def hung(*_):
        raise TimeoutError(f"{what}: still reading after {SECONDS} s")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(SECONDS)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _tree(folder: Path) -> dict[str, bytes | None]:
    """Every path under a folder and its bytes (None: not a regular file)."""
    found = {}
    for path in sorted(folder.rglob("*")):
        regular = path.is_file() and not path.is_symlink()
        found[str(path.relative_to(folder))] = path.read_bytes() if regular else None
    return found


def _case(case: Case, tmp: Path, base: Path) -> tuple[Path, Path, Path]:
    results, target, outside = tmp / "results", tmp / "target" / "results", tmp / "outside"
    shutil.copytree(base, results, symlinks=True)
    shutil.copytree(base, target, symlinks=True)
    outside.mkdir()
    where = target if case.in_target else results
    case.make(where / FILES[case.format] if case.format in FILES else where, outside)
    return results, target, outside


REFUSED = {"nested 1200 deep", "a FIFO", "not UTF-8", "no object"}  # whole files of no record


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_the_report_reads_or_names_each_hostile_file(case, tmp_path, base, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a payload that ran writes here
    results, _, outside = _case(case, tmp_path, base)
    before = _tree(outside)
    conf = scratch_asv_conf(tmp_path, results)
    with _bounded("the report"):
        data = site.read(conf)
        site.write_report(data, tmp_path / "html")
    html = tmp_path / "html"
    assert_inert_markdown((html / "report.md").read_text())
    for page in html.rglob("*.html"):
        assert_inert_html(page.read_text())
    for page in html.rglob("*.md"):
        assert_inert_markdown(page.read_text())
    for text in [p.read_text() for p in html.rglob("*") if p.suffix in (".md", ".html")]:
        assert "\x1b" not in text and "\u202e" not in text
    assert all("\n" not in p for p in data.problems)
    assert _tree(outside) == before and not (tmp_path / "PWNED").exists()
    if case.name in REFUSED or (case.format == "links" and not case.in_target):  # no record
        where = FILES.get(case.format) or case.name
        nightly = html / "nightly.html"
        page = nightly.read_text() if nightly.exists() else ""
        told = [*data.problems, *re.findall(r"<p>(.*?)</p>", page)]  # the page's skipped list
        assert any(_names(line, case) for line in told), (where, data.problems)


def _names(line: str, case: Case) -> bool:
    """A problem's line names the case's file (a link's: the folder linked)."""
    if "\n" in line:
        return False
    if case.format == "links":
        return "link" in line
    return FILES[case.format] in line or (
        case.format == "benchmarks.json" and "benchmarks.json" in line
    )


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_merge_takes_or_refuses_each_hostile_file_and_writes_only_the_results(
    case, tmp_path, base
):
    results, target, outside = _case(case, tmp_path, base)
    before = _tree(outside)
    with _bounded("merge"):
        try:
            done = merge.merge([results], target, replace=True)
        except merge.MergeError as e:
            assert "\n" not in str(e) and "nothing merged" in str(e)
            done = None
    assert _tree(outside) == before
    made = {p.name for p in tmp_path.iterdir()}
    assert made <= {"results", "target", "outside"}, made  # staged and kept inside target/
    if done is not None:
        for skipped in done.skipped:
            assert "\n" not in skipped
        for path in target.rglob("*"):  # what it kept reads again
            assert not path.is_symlink() or case.in_target


@pytest.mark.parametrize("case", [c for c in CASES if c.format in SITE], ids=lambda c: c.id)
def test_publish_builds_asvs_pages_from_checked_entries_only(case, tmp_path, base, npm_cache):
    results, _, outside = _case(case, tmp_path, base)
    if case.format != "machine.json":  # which the nightly graphs read too
        shutil.rmtree(results / "nightly")  # their site is a second asv publish, not edited
    # the second machine's graphs and upstream's plots are half of a publish and read no
    # case's file: the report's test reads them beside every case
    for unread in (INTEL, "upstream"):
        shutil.rmtree(results / unread)
    conf = scratch_asv_conf(tmp_path, results)
    run = subprocess.run(
        [sys.executable, "-m", "tfbench", "publish", "--config", str(conf)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=SECONDS * 3,
    )
    assert run.returncode in (0, 3), run.stderr  # 3: nothing to publish (benchmarks.json)
    assert all(line.startswith("tfbench: ") for line in run.stderr.splitlines()), run.stderr
    if run.returncode == 3:
        assert case.format == "benchmarks.json" and case.name in REFUSED, run.stderr
        return
    index = (tmp_path / "html" / "index.json").read_text()
    assert "<img" not in index and "<script" not in index and "\\u202e" not in index.lower()
    assert not (tmp_path / "PWNED").exists()
