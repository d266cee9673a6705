"""Every kept format's reader, fed valid records mutated where a hostile file would (types,
numbers at their limits, nesting, dates, strings with markup, control characters and bidi
marks): it returns a checked record or refuses the file in one line naming it, and does so
quickly (hypothesis; TFBENCH_FUZZ_EXAMPLES sets the budget, 60 a reader by default)."""

from __future__ import annotations

import copy
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_untrusted import assert_inert_html, assert_inert_markdown

from tfbench import keptfiles
from tfbench.paths import ROOT

RESULTS = ROOT / "results"
EXAMPLES = int(os.environ.get("TFBENCH_FUZZ_EXAMPLES", "60"))
SECONDS = 2.0  # the most one file may take to read or refuse
INTEL = "linux-2cpu-24gb-intel-6.167.1-2c-7eae69"


def _kept(path: str) -> Any:
    return json.loads((RESULTS / path).read_text())


def _one(folder: str, pattern: str) -> Any:
    return json.loads(sorted((RESULTS / folder).glob(pattern))[0].read_text())


# each reader and a valid record of its format, as kept in results/
FORMATS: dict[str, tuple[Callable[[Path], Any], Callable[[], Any]]] = {
    "gate run": (keptfiles.gate_run.read, lambda: _kept(f"gate/{INTEL}/v2.21.0-v2.22.0rc0.json")),
    "gate run (before CPUs)": (
        keptfiles.gate_run.read,
        lambda: _kept("gate/linux-2cpu-24gb/v2.21.0-v2.22.0rc0.json"),
    ),
    "probes": (keptfiles.probes.read, lambda: _one(f"probes/{INTEL}", "*.json")),
    "nightly build": (
        keptfiles.nightly_build.read,
        lambda: _one("nightly/linux-2cpu-24gb", "*.json"),
    ),
    "bisection": (
        keptfiles.bisection.read,
        lambda: _kept("upstream/linux-2cpu-24gb/footprint-footprint-heap/bisect.json"),
    ),
    "explained": (keptfiles.explained.read, lambda: _one("explain/linux-2cpu-24gb", "*.json")),
    "machine": (keptfiles.machine.read, lambda: _kept(f"{INTEL}/machine.json")),
}

HOSTILE_TEXT = st.sampled_from(
    [
        "<script>alert(1)</script>",
        '"><img src=x onerror=alert(1)>',
        "\x1b[31mred\x1b[0m",
        "\u202egnp.exe",
        "line\nbreak",
        "$(rm -rf /)",
        "`code`",
        "",
        "x" * 5000,
        "2026-02-30T00:00:00Z",
        "0001-01-01T00:00:00Z",
        "9999-12-31T23:59:59Z",
        "../../etc/passwd",
    ]
)
HOSTILE_NUMBER = st.sampled_from(
    [10**400, -(10**400), -2, -1, 0, 1, 1e308, -1e308, 5e-324, 2**63, 0.5, True, False]
)


def _deep(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


HOSTILE = st.one_of(
    HOSTILE_TEXT,
    HOSTILE_NUMBER,
    st.none(),
    st.just({}),
    st.just([]),
    st.just({"a": 1}),
    st.just(_deep(1500)),
    st.text(max_size=20),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
)


def _paths(value: Any, here: tuple = ()) -> list[tuple]:
    """Every place in a JSON value: each key and index, the value itself."""
    found = [here]
    if isinstance(value, dict):
        for k, v in value.items():
            found += _paths(v, (*here, k))
    elif isinstance(value, list):
        for k, v in enumerate(value[:6]):  # a list's first items stand for the rest
            found += _paths(v, (*here, k))
    return found


def _set(value: Any, where: tuple, new: Any) -> Any:
    if not where:
        return new
    out = copy.deepcopy(value)
    node = out
    for step in where[:-1]:
        node = node[step]
    node[where[-1]] = new
    return out


def _renamed(value: Any, where: tuple, new_key: str) -> Any:
    """The key at `where` renamed (an object's), or the value itself."""
    out = copy.deepcopy(value)
    node = out
    for step in where[:-1]:
        node = node[step]
    if where and isinstance(node, dict):
        node[new_key] = node.pop(where[-1])
    return out


def _version(record: Any) -> str:
    """A nightly build's file is named by its build."""
    return record.get("build", {}).get("version", "x")


def _issue(record: Any, path: Path) -> str:
    from tfbench.nightly import upstream

    return upstream.issue(record, "step()")


def _nightly_page(record: Any, path: Path) -> str:
    from tfbench.nightly import series
    from tfbench.publish import nightly

    return "\n".join(nightly._machine("m", [series.read(path)]))


def _time_by_cpu(record: Any, path: Path) -> str:
    from tfbench import escape
    from tfbench.publish import by_cpu

    verdicts = by_cpu._verdicts(record, "m")
    return "\n".join(
        escape.markdown(f"{c} {p} {v}") for c, ps in verdicts.items() for p, v in ps.items()
    )


# what renders an accepted record, and the markup it writes
RENDERERS: dict[str, tuple[Callable[[Any, Path], str], str]] = {
    "bisection": (_issue, "markdown"),
    "nightly build": (_nightly_page, "html"),
    "gate run": (_time_by_cpu, "markdown"),
    "gate run (before CPUs)": (_time_by_cpu, "markdown"),
}


def _refused_or_read(reader: Callable[[Path], Any], path: Path, name: str = "") -> None:
    """The reader's answer to one file: a record, or KeptFileError naming it, in time; a
    record renders inert (no element, no terminal escape, no bidi mark)."""
    began = time.monotonic()
    try:
        record = reader(path)
        if name in RENDERERS:  # its renderer may refuse it too (series.read: its name)
            render, markup = RENDERERS[name]
            text = render(record, path)
            assert "\x1b" not in text and "\u202e" not in text
            (assert_inert_markdown if markup == "markdown" else assert_inert_html)(text)
    except keptfiles.KeptFileError as e:
        assert str(path) in str(e) and "\n" not in str(e)
    assert time.monotonic() - began < SECONDS


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_every_reader_reads_a_mutated_record_or_refuses_it_in_one_line(name, tmp_path_factory):
    reader, example = FORMATS[name]
    valid = example()
    places = _paths(valid)
    folder = tmp_path_factory.mktemp("fuzz")
    kept_name = {"machine": "machine.json", "nightly build": f"{_version(valid)}.json"}.get(
        name, "v2.21.0.json"
    )
    machine = valid.get("machine", "m") if name == "machine" else "m"

    @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
    @given(
        where=st.sampled_from(places),
        new=HOSTILE,
        rename=st.one_of(st.none(), HOSTILE_TEXT),
    )
    def check(where, new, rename):
        mutated = _renamed(valid, where, rename) if rename else _set(valid, where, new)
        path = folder / str(machine) / kept_name
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            text = json.dumps(mutated)
        except (ValueError, RecursionError):
            return  # not writable as JSON: no file of it can exist
        path.write_text(text)
        _refused_or_read(reader, path, name)

    check()


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_every_reader_refuses_bytes_that_are_no_record(name, tmp_path):
    reader, _ = FORMATS[name]
    folder = tmp_path / "m"
    folder.mkdir()
    for k, data in enumerate(
        [b"", b"\xff\xfe", b"[" * 100000, b'{"format": 1' + b"9" * 5000 + b"}", b"NaN",
         b'{"a": 1e999}', b"[" * 5000 + b"1" + b"]" * 5000]
    ):  # fmt: skip
        path = folder / f"{k}.json"
        path.write_bytes(data)
        _refused_or_read(reader, path)
    fifo = folder / "fifo.json"
    os.mkfifo(fifo)
    _refused_or_read(reader, fifo)  # never opened: it would block
