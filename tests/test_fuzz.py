"""Every kept format's reader, fed valid records mutated where a hostile file would (types,
numbers at their limits, nesting, dates, strings with markup, control characters and bidi
marks): it returns a checked record or refuses the file in one line naming it, and does so
quickly (hypothesis; TFBENCH_FUZZ_EXAMPLES sets the budget, 60 a reader by default)."""

from __future__ import annotations

import copy
import gc
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
from tfbench.grammar import Invalid
from tfbench.keptfiles import fields
from tfbench.measure import record
from tfbench.paths import ROOT

RESULTS = ROOT / "results"
EXAMPLES = int(os.environ.get("TFBENCH_FUZZ_EXAMPLES", "60"))
# the most CPU one file may take to read or refuse: this thread's, which a pathological input
# (a backtracking pattern, a blown-up structure) spends and a loaded machine does not; the
# collector is off meanwhile, so that a full collection of the worker's objects (every test's
# before, TensorFlow's among them) is not charged to the reader
SECONDS = 2.0
INTEL = "linux-2cpu-24gb-intel-6.167.1-2c-7eae69"


def _sample(kind: keptfiles.Kind) -> str | None:
    """The first file of the kind committed in results/, relative to them."""
    depth = "/".join(["*"] * kind.INSIDE)
    found = sorted(p for p in (RESULTS / kind.FOLDER).glob(depth) if kind.named(p.name))
    return str(found[0].relative_to(RESULTS)) if found else None


def _name(kind: keptfiles.Kind) -> str:
    return kind.__name__.rpartition(".")[2]  # type: ignore[attr-defined]


# each kind of the registry whose records are JSON, and a committed file of it (its place in
# the results kept: a reader checks its folder and name too); the newer gate run form, and
# the machine file asv writes, which the registry leaves out
SAMPLES = {_name(k): _sample(k) for k in keptfiles.KINDS if k is not keptfiles.packages}
UNSAMPLED = {"chain_link"}  # none committed: tests/test_chain.py reads what chain writes
FORMATS: dict[str, tuple[Callable[[Path], Any], str]] = {
    **{
        _name(k): (k.read, SAMPLES[_name(k)])  # type: ignore[misc]
        for k in keptfiles.KINDS
        if SAMPLES.get(_name(k))
    },
    "gate_run (with CPUs)": (keptfiles.gate_run.read, f"gate/{INTEL}/v2.21.0-v2.22.0rc0.json"),
    "machine": (keptfiles.machine.read, f"{INTEL}/machine.json"),
}


def test_every_json_kind_of_the_registry_is_fuzzed():
    assert {n for n, s in SAMPLES.items() if s is None} == UNSAMPLED


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
    "nightly_build": (_nightly_page, "html"),
    "gate_run": (_time_by_cpu, "markdown"),
    "gate_run (with CPUs)": (_time_by_cpu, "markdown"),
}


def _refused_or_read(reader: Callable[[Path], Any], path: Path, name: str = "") -> None:
    """The reader's answer to one file: a record, or KeptFileError naming it, in time; a
    record renders inert (no element, no terminal escape, no bidi mark)."""
    collecting = gc.isenabled()
    gc.disable()
    began = time.thread_time()
    try:
        record = reader(path)
        if name in RENDERERS:  # its renderer may refuse it too (series.read: its name)
            render, markup = RENDERERS[name]
            text = render(record, path)
            assert "\x1b" not in text and "\u202e" not in text
            (assert_inert_markdown if markup == "markdown" else assert_inert_html)(text)
    except keptfiles.KeptFileError as e:
        assert str(path) in str(e) and "\n" not in str(e)
    finally:
        spent = time.thread_time() - began
        if collecting:
            gc.enable()
    assert spent < SECONDS


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_every_reader_reads_a_mutated_record_or_refuses_it_in_one_line(name, tmp_path_factory):
    reader, sample = FORMATS[name]
    valid = json.loads((RESULTS / sample).read_text())
    places = _paths(valid)
    folder = tmp_path_factory.mktemp("fuzz")

    @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
    @given(
        where=st.sampled_from(places),
        new=HOSTILE,
        rename=st.one_of(st.none(), HOSTILE_TEXT),
    )
    def check(where, new, rename):
        mutated = _renamed(valid, where, rename) if rename else _set(valid, where, new)
        path = folder / sample  # in its place: its folder and name as committed
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


# A value of each form a key of the measured record takes, and values it refuses (a wrong
# type, a number past the grammar's range, a word not among the project's).
FORMS = {
    record.TEXT: ("<img src=x> `x` \u202e \x1b[31m", [5, [], {"a": 1}]),
    record.NUMBER: (-1.5e17, [10**400, True, "1"]),
    record.AMOUNT: (3, [-1, 10**19, False]),
    record.SERIES: ([1, 2.5], [[1, "x"], "1", {"a": 1}]),
    record.BOOLEAN: (True, [1, "true"]),
    record.INTERVAL: ([1.0, 2.0], [[1.0], [1.0, 2.0, 3.0], [1.0, 10**400]]),
    record.STATUS: ("over_budget", ["fine", "OK"]),
    record.PARAMS: ({"size": 64, "kind": "a"}, [{"a b": 1}, {"x": {"y": 1}}]),
    record.DEVICE: ("GPU", ["TPU", "cpu; rm"]),
    record.COUNTERS: ({"traces": 3}, [{"traces": "3"}, {"<b>": 1}]),
    record.CONFIRMATION: (
        {
            "calls": 4000,
            "rounds": [{"calls": 2000, "bytes_per_iteration": 64.0, "interval": [60, 68]}],
        },
        [{"calls": -1, "rounds": []}, {"calls": 1, "rounds": [{"calls": 1, "interval": [1]}]}],
    ),
    record.COLLECTOR: (
        {
            **{"python": "3.12.3", "thresholds": [700, 10, 10], "tracked": 5, "tail_calls": 0},
            **{"young_every": 7.0, "young_pile_bytes": None, "promoted_per_call": 0.5},
            **{"old_garbage_per_call": 0, "full_every": None, "pile_bytes": 1024},
        },
        [{"python": "<b>", "thresholds": [], "tracked": 1, "tail_calls": 0}],
    ),
}


@pytest.mark.parametrize(
    "key", [f for f in record.FIELDS if f.form is not None], ids=lambda f: f.name
)
def test_every_key_of_the_measured_record_reads_its_form_and_refuses_others(key):
    """From the record's declaration (tfbench.measure.record.FIELDS): each key reads a
    value of its form back as it was and refuses a hostile one naming the key; a key the
    declaration says is the run's own is never read back."""
    good, bad = FORMS[key.form]
    assert fields.records([{key.name: good}], "r") == [{key.name: good}]
    for value in bad:
        with pytest.raises(Invalid, match=rf"^r\[0\]\.{key.name}\b"):
            fields.records([{key.name: value}], "r")
    own = [f.name for f in record.FIELDS if f.form is None]
    assert fields.records([dict.fromkeys(own, "x")], "r") == [{}]
