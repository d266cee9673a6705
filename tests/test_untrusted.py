"""Kept files are untrusted input (issue 36): crafted files, as a hostile contributor would
write them, through every surface that reads them: `tfbench upstream` (issue.md, repro.py,
plot.png), `tfbench results merge`, the report (report.md, report.html) and what `tfbench
publish` adds to asv's site. For every case: no marker file is created (nothing ran), no
raw markup reaches Markdown or HTML, and a refused file is one line naming the file and
its field, exit 2. No TensorFlow is imported."""

from __future__ import annotations

import ast
import contextlib
import json
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest
from conftest import keep_probes, scratch_asv_conf
from markdown_it import MarkdownIt
from test_nightly import BUILDS, kept_bisection

from tfbench import grammar, keptfiles
from tfbench.cli import main
from tfbench.history.repo import history_tags
from tfbench.paths import ROOT
from tfbench.publish.coverage import REFERENCE

MACHINE = "linux-2cpu-24gb"  # its gate runs, bisections and explanations
HISTORY = REFERENCE  # the release history: asv's results and their probes
SCRIPT = "<script>alert('PWNED')</script>"
IMAGE = "<img src=x onerror=alert('PWNED')>"
RANGE = ["2.21.0", "2.22.0rc0"]
FOOTPRINT_SLUG = "footprint-footprint-heap"
OURS = {"<!-- filed with", "<details>", "<summary>", "</summary>", "</details>"}


def md_tokens(text: str) -> list:
    """Every token a GitHub-like renderer makes of the text (tables, HTML, bare links)."""
    tokens = []
    for token in MarkdownIt("gfm-like").parse(text):
        tokens += [token, *(token.children or [])]
    return tokens


def assert_inert_markdown(text: str, marker: str = "PWNED") -> None:
    """No HTML but our own, no link to anywhere the payload says, no block (a heading, a
    list item, a paragraph) that a line break in the payload started."""
    for token in md_tokens(text):
        if token.type in ("html_block", "html_inline"):
            assert any(token.content.strip().startswith(o) for o in OURS), token.content
        if token.type == "link_open":
            href = str(token.attrs["href"])
            assert "evil" not in href and "javascript" not in href.lower(), href
        if token.type == "inline":
            assert not token.content.startswith(marker), token.content
            if marker in token.content:
                assert not re.search(r"<\w", token.content), token.content


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, list]] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.tags.append((tag, attrs))


def assert_inert_html(text: str) -> None:
    """No element, attribute or link the payload makes: it is all text."""
    parser = _Tags()
    parser.feed(text)
    for tag, attrs in parser.tags:
        assert tag not in ("script", "img", "iframe"), (tag, attrs)
        for name, value in attrs:
            assert not name.startswith("on") and "PWNED" not in str(value), (tag, attrs)
            assert not str(value).lower().startswith("javascript"), (tag, attrs)


@pytest.fixture
def marker(tmp_path: Path, monkeypatch) -> Path:
    """A file only a payload that ran would create (payloads in names, which hold no
    path, create it in the working directory: the same)."""
    monkeypatch.chdir(tmp_path)
    return tmp_path / "PWNED"


def shell(marker: Path) -> str:
    return f"$(touch {marker})`touch {marker}`"


NAME_SHELL = "m$(touch${IFS}PWNED)"  # in a file's name: no slash


def python(marker: Path) -> str:
    return f"__import__('os').system('touch {marker}')"


def run(*argv: object) -> int:
    return main([str(a) for a in argv])


def refused(capsys, code: int, path: Path, field: str) -> None:
    """Exit 2 and one line naming the file and the field."""
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert len(err.splitlines()) == 1, err
    assert err.startswith(f"tfbench: error: {path}: {field}"), err
    assert "Traceback" not in err


# ---- tfbench upstream: a kept bisect.json rendered again ---------------------------------


def footprint_bisection(**changes: object) -> dict:
    data = dict(kept_bisection(), target={"scenario": "footprint", "params": {}})
    data["metric"] = "footprint-heap"
    return {**data, **changes}


def upstream_footprint(tmp_path: Path, data: dict | bytes | Path) -> tuple[int, Path]:
    """`tfbench upstream footprint` with `data` kept as its bisect.json (a Path: a link)."""
    conf = scratch_asv_conf(tmp_path, tmp_path / "results")
    kept = tmp_path / "results" / "upstream" / MACHINE / FOOTPRINT_SLUG / "bisect.json"
    kept.parent.mkdir(parents=True)
    if isinstance(data, Path):
        kept.symlink_to(data)
    else:
        kept.write_bytes(data if isinstance(data, bytes) else json.dumps(data).encode())
    argv = ["upstream", "footprint", "--metric", "footprint-heap", "--machine", MACHINE]
    return run(*argv, *RANGE, "--config", conf), kept


def _builds(**git: str) -> list[dict]:
    found = kept_bisection()["builds"]
    return [dict(b, git_version=git.get(str(k), b["git_version"])) for k, b in enumerate(found)]


def _compared(**changes: object) -> dict:
    """Two builds' times compared, as a time bisection keeps them (verdict.compared)."""
    old, new = (b["version"] for b in kept_bisection()["builds"][:2])
    found = {"old": old, "new": new, "answer": "different", "ratio": 1.07, "low": 1.05,
             "high": 1.09, "pairs": 8, "margin": 0.02, "skipped": None}  # fmt: skip
    return {**found, **changes}


REFUSED_BISECTIONS = {
    # a name pasted into repro.py as code
    "function-name-code": (
        lambda m: {"target": {"file": "mine.py", "function": f"step; {python(m)}"}},
        "target.function",
    ),
    "device-code": (
        lambda m: {
            "target": {"scenario": "footprint", "params": {"device": f"CPU'); {python(m)}"}}
        },
        "target.params['device']",
    ),
    "scenario-dollar": (
        lambda m: {"target": {"scenario": "loop.python_matmul$x", "params": {}}},
        "target.scenario",
    ),
    # a path read from the kept file (the machine's own files published)
    "target-path": (lambda m: {"target": {"file": "/etc/passwd", "function": "x"}}, "target.file"),
    "package-markup": (
        lambda m: {"packages": {BUILDS[1].version: [f"</details>{SCRIPT}==1"]}},
        "packages",
    ),
    "git-version-markup": (
        lambda m: {"builds": _builds(**{"1": f"v1-1-gabc1234{IMAGE}"})},
        "builds[1]",
    ),
    "compare-url-elsewhere": (
        lambda m: {"compare_url": "https://evil.example/tensorflow/compare/abc0001...abc0003"},
        "compare_url",
    ),
    "compare-url-javascript": (lambda m: {"compare_url": "javascript:alert(1)"}, "compare_url"),
    "dependency-markup": (
        lambda m: {"dependencies": [f"[x](https://evil.example) {shell(m)}"]},
        "dependencies[0]",
    ),
    "python-shell": (
        lambda m: {"environment": {"os": "Linux", "python": f"3.11 {shell(m)}", "cpu": "x"}},
        "environment.python",
    ),
    "named-build-elsewhere": (lambda m: {"first_bad": "2.22.0.dev20990101"}, "first_bad"),
    "time-answer-markup": (lambda m: {"times": [_compared(answer=SCRIPT)]}, "times[0].answer"),
    "time-build-elsewhere": (
        lambda m: {"times": [_compared(new="2.22.0.dev20990101")]},
        "times[0].new",
    ),
    "time-ratio-text": (lambda m: {"times": [_compared(ratio=shell(m))]}, "times[0].ratio"),
    "keyless": (lambda m: {"builds": None}, "builds"),
}


@pytest.mark.parametrize("case", REFUSED_BISECTIONS)
def test_upstream_refuses_a_kept_bisection_not_of_its_form(case, tmp_path, marker, capsys):
    change, field = REFUSED_BISECTIONS[case]
    data = footprint_bisection(**change(marker))
    if data["builds"] is None:
        del data["builds"]
    code, kept = upstream_footprint(tmp_path, data)
    refused(capsys, code, kept, field)
    assert not marker.exists()
    assert not (kept.parent / "issue.md").exists() and not (kept.parent / "repro.py").exists()


@pytest.mark.parametrize(
    "content, why",
    [
        (b'{"format": 1, "targ', "not JSON"),
        (b"\xff\xfe", "unreadable"),
        (b'{"format": 1, "seconds": NaN}', "not JSON (NaN is not JSON)"),
        (b"[]", "list where an object is expected"),
        (b'{"format": 7}', "format: 7; this tfbench reads format 1"),
    ],
    ids=["truncated", "not-utf8", "nan", "array", "format"],
)
def test_upstream_names_a_file_it_cannot_read(content, why, tmp_path, capsys):
    code, kept = upstream_footprint(tmp_path, content)
    refused(capsys, code, kept, why)


def test_upstream_refuses_a_linked_bisection(tmp_path, capsys):
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps(footprint_bisection()))
    code, kept = upstream_footprint(tmp_path, secret)
    refused(capsys, code, kept, "not a regular file")


HOSTILE_TEXT = f"x\n# PWNED heading\n- PWNED item\n{SCRIPT} [PWNED](https://evil.example) @PWNED"


def test_upstream_escapes_the_free_text_it_keeps(tmp_path, marker, capsys):
    """Reasons, the machine's description, what repro.py printed: shown, never markup."""
    data = footprint_bisection(
        broken={BUILDS[2].version: HOSTILE_TEXT},
        environment={"os": HOSTILE_TEXT, "python": "3.11.7", "cpu": HOSTILE_TEXT},
        repro={BUILDS[3].version: f"```\n{HOSTILE_TEXT}\n````"},
    )
    code, kept = upstream_footprint(tmp_path, data)
    assert code == 0, capsys.readouterr().err
    issue = (kept.parent / "issue.md").read_text()
    assert_inert_markdown(issue)
    links = {str(t.attrs["href"]) for t in md_tokens(issue) if t.type == "link_open"}
    assert links == {data["compare_url"]}  # the one link: the checked compare URL
    assert "\x1b" not in capsys.readouterr().out
    assert not marker.exists()


def test_a_user_steps_code_comes_from_the_command_line_never_from_the_kept_path(tmp_path, capsys):
    """The kept file may name any path: repro.py and issue.md inline the file given on
    the command line, and nothing of the named one."""
    secret = tmp_path / "settings.py"
    secret.write_text("TOKEN = 'ghp_PWNEDsecret'\n\ndef step():\n    pass\n")
    mine = tmp_path / "mine.py"
    mine.write_text("def step():\n    return 1\n")
    conf = scratch_asv_conf(tmp_path, tmp_path / "results")
    data = dict(kept_bisection(), target={"file": str(secret), "function": "step"})
    kept = tmp_path / "results" / "upstream" / MACHINE / "mine-step-retained" / "bisect.json"
    kept.parent.mkdir(parents=True)
    kept.write_text(json.dumps(data))
    code = run("upstream", f"{mine}::step", "--machine", MACHINE, *RANGE, "--config", conf)
    assert code == 0, capsys.readouterr().err
    for name in ("repro.py", "issue.md"):
        text = (kept.parent / name).read_text()
        assert "ghp_PWNED" not in text and str(tmp_path) not in text, name
    assert "return 1" in (kept.parent / "repro.py").read_text()


def test_upstream_refuses_a_step_file_that_is_not_python(tmp_path, capsys):
    binary = tmp_path / "step.py"
    binary.write_bytes(b"\x00\xff\x00 not python")
    conf = scratch_asv_conf(tmp_path, tmp_path / "results")
    code = run("upstream", f"{binary}::step", "--machine", MACHINE, *RANGE, "--config", conf)
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "step.py: not a Python file" in err


def test_upstream_gate_names_a_truncated_gate_run(tmp_path, capsys):
    conf = scratch_asv_conf(tmp_path, tmp_path / "results")
    gate = tmp_path / "results" / "gate" / MACHINE / "v2.21.0-v2.22.0rc0.json"
    gate.parent.mkdir(parents=True)
    gate.write_text('{"format": 1, "rounds": 2, "rows": [{"bench')
    code = run("upstream", "gate", *RANGE, "--machine", MACHINE, "--config", conf)
    refused(capsys, code, gate, "not JSON")


@pytest.mark.parametrize(
    "unseen, field",
    [("0.1 <b>", "time.unseen"), ([0.1], "time.unseen"), ([0.1, "x"], "time.unseen[1]")],
)
def test_a_gate_runs_unseen_change_is_a_pair_of_numbers(unseen, field):
    time = {"design": "interleaved", "margin": 0.02, "pairs": [8, 14], "seconds": 0.2}
    time |= {"skipped": 0, "different": 0, "same": 1, "unknown": ["m.C.time_step('x')"]}
    run = {"format": keptfiles.gate_run.FORMAT, "time": time, "rows": []}
    assert keptfiles.gate_run.check(run)["time"]["unseen"] is None  # kept before it: absent
    run["time"] = dict(time, unseen=[0.12, 0.5])
    assert keptfiles.gate_run.check(run)["time"]["unseen"] == [0.12, 0.5]
    run["time"] = dict(time, unseen=unseen)
    with pytest.raises(grammar.Invalid) as refused:
        keptfiles.gate_run.check(run)
    assert refused.value.field == field


@pytest.mark.parametrize(
    "edit, field",
    [
        (lambda p: p.update(ratio=-2.0, low=-3.0), "time.points[0].ratio"),
        (lambda p: p.update(ratio=1.2), "time.points[0].ratio"),  # outside its interval
        (lambda p: p.update(low=None), "time.points[0]"),  # an estimate without its interval
        (lambda p: p.update(point="m.C.time_step(<b>)"), "time.points[0].point"),
        (lambda p: p.update(answer="worse"), "time.points[0].answer"),
        (lambda p: p.update(pairs=-1), "time.points[0].pairs"),
        (lambda p: p.update(cpu="intel"), "time.points[0].cpu"),
    ],
)
def test_a_gate_runs_time_points_and_cpu_are_checked(edit, field):
    """Every point's estimate (a chain moves a release by it) and the CPU it was read on."""
    from tfbench import cpu

    here = json.loads(json.dumps(cpu.identity()))
    point = {"point": "m.C.time_step('x')", "cpu": here["id"], "answer": "same", "ratio": 1.0}
    point |= {"low": 0.99, "high": 1.01, "pairs": 8}
    time = {"design": "turns", "margin": 0.02, "pairs": [8, 50], "seconds": 0.5}
    time |= {"skipped": 0, "different": 0, "same": 1, "unknown": [], "points": [point]}
    run = {
        "format": keptfiles.gate_run.FORMAT,
        "time": time,
        "rows": [],
        "cpus": {here["id"]: here},
    }
    run["onednn"] = {here["id"]: {"old": "Intel AVX-512", "new": None}}
    found = keptfiles.gate_run.check(run)
    assert found["cpus"] == {here["id"]: here} and found["time"]["points"] == [point]
    assert found["onednn"] == {here["id"]: {"old": "Intel AVX-512", "new": None}}
    unread = dict(run, time=dict(time, points=[]))
    with pytest.raises(grammar.Invalid, match="^cpus.*id"):  # an id its fields do not derive
        keptfiles.gate_run.check(dict(unread, cpus={here["id"]: dict(here, cpus=64)}))
    with pytest.raises(grammar.Invalid, match="^onednn key: 'amd-26.2.1-2c-000000' is no CPU"):
        keptfiles.gate_run.check(dict(unread, onednn={"amd-26.2.1-2c-000000": {}}))
    with pytest.raises(grammar.Invalid, match="^time.points.0..cpu: .* is no CPU of cpus"):
        keptfiles.gate_run.check(dict(run, cpus={}, onednn={}))
    edit(point)
    with pytest.raises(grammar.Invalid) as refused:
        keptfiles.gate_run.check(run)
    assert refused.value.field == field


# ---- repro.py: the template's statements, whatever the values ------------------------------


def skeleton(code: str) -> list[str]:
    """The module's statements with every literal blanked: what the template wrote."""

    class Blank(ast.NodeTransformer):
        def visit_Constant(self, node):
            return ast.copy_location(ast.Constant(value="?"), node)

    tree = Blank().visit(ast.parse(code))
    return [ast.dump(node) for node in tree.body]


def test_every_repro_is_the_templates_statements(tmp_path):
    """Generated for every catalog scenario and for a user's step, repro.py parses, and
    its statements are the template's: values reach it only as literals."""
    from tfbench import scenarios
    from tfbench.nightly import repro
    from tfbench.targets import FootprintTarget, FunctionTarget, ScenarioTarget

    scenarios._register_families()
    by_module: dict[str, list[str]] = {}
    for sid, scenario in sorted(scenarios.CATALOG.items()):
        last = {k: v[-1] for k, v in scenario.params.items()}
        first, other = (repro.source(ScenarioTarget(sid, p), 100, 10) for p in ({}, last))
        assert skeleton(first) == skeleton(other), sid
        # the module's statements are the template's and the catalog's, whatever the id
        rest = [s for s in skeleton(first) if "make_step" not in s]
        assert rest == by_module.setdefault(scenario.prepare.__module__, rest), sid
        (step,) = [n for n in ast.parse(other).body if getattr(n, "name", "") == "make_step"]
        call = step.body[0].value
        assert isinstance(call.func.value, ast.Subscript)  # CATALOG['id'].prepare(**{...})
        assert all(isinstance(v, ast.Constant) for v in call.keywords[0].value.values)
    for device in ("CPU", "GPU"):
        code = repro.source(FootprintTarget({"device": device}), 1, 1)
        assert skeleton(code) == skeleton(repro.FOOTPRINT.format(device=repr("/CPU:0")))
    user = tmp_path / "mine.py"
    user.write_text("def step():\n    pass\n")
    code = repro.source(FunctionTarget(str(user), "step"), 5, 1)
    assert str(tmp_path) not in code
    with pytest.raises(repro.NotInlined):
        repro.source(FunctionTarget(str(user), "step()\nimport os"), 5, 1)
    with pytest.raises(repro.NotInlined):
        repro.source(FootprintTarget({"device": "CPU'); import os; ('"}), 5, 1)


# ---- tfbench results merge ----------------------------------------------------------------


def shard(tmp_path: Path, name: str = "shard") -> Path:
    """A results directory from another machine: machine `m` and its valid probes file."""
    source = tmp_path / name
    (source / "m").mkdir(parents=True)
    (source / "m" / "machine.json").write_text(json.dumps({"machine": "m", "version": 1}))
    probes = source / "probes" / "m"
    probes.mkdir(parents=True)
    keep_probes(probes / "abcdef01-env-cpu.json")
    return source


def merged(tmp_path: Path, source: Path, capsys) -> tuple[int, Path, str]:
    into = tmp_path / "into"
    code = run("results", "merge", source, "--into", into)
    return code, into, capsys.readouterr().err


def test_merge_follows_and_copies_no_link(tmp_path, marker, capsys):
    source = shard(tmp_path)
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "abcdef02-env-cpu.txt").write_text("# lock\nsecret==1\n")
    (source / "packages").mkdir()
    (source / "packages" / "m").symlink_to(secret)  # a folder that is a link
    (source / "probes" / "m" / "abcdef03-env-cpu.json").symlink_to("/etc/passwd")
    code, into, err = merged(tmp_path, source, capsys)
    assert code == 2, err  # the good file in, the links named; the exit says some were skipped
    assert (into / "probes" / "m" / "abcdef01-env-cpu.json").is_file()
    assert (
        not (into / "packages").exists() and not (into / "probes/m/abcdef03-env-cpu.json").exists()
    )
    assert "packages/m: a link, not followed" in err and "abcdef03-env-cpu.json: a link" in err
    assert not any(p.is_symlink() for p in into.rglob("*"))


def test_merge_refuses_kept_files_not_of_their_form_and_renders_write_ups_again(
    tmp_path, marker, capsys
):
    source = shard(tmp_path)
    good = source / "upstream" / "m" / "loop-python-matmul-retained"
    good.mkdir(parents=True)
    (good / "bisect.json").write_text(json.dumps(kept_bisection()))
    (good / "repro.py").write_text(f"{python(marker)}\n")  # never copied: rendered again
    (good / "issue.md").write_text(SCRIPT)
    bad = source / "upstream" / "m" / "hostile"
    bad.mkdir()
    hostile = dict(kept_bisection(), compare_url="javascript:alert(1)")
    (bad / "bisect.json").write_text(json.dumps(hostile))
    (source / "gate" / "m").mkdir(parents=True)
    (source / "gate" / "m" / "v2.21.0-v2.22.0rc0.json").write_text('{"format": 1, "rounds": "2')
    (source / "probes" / NAME_SHELL).mkdir(parents=True)  # a machine folder of no form
    (source / "probes" / NAME_SHELL / "abcdef04-env-cpu.json").write_text("{}")
    (source / "probes" / "abcdef05-env-cpu.json").write_text("{}")  # no machine's folder
    code, into, err = merged(tmp_path, source, capsys)
    assert code == 2, err
    repro = (into / "upstream/m/loop-python-matmul-retained/repro.py").read_text()
    assert "system(" not in repro and "CATALOG['loop.python_matmul']" in repro
    assert_inert_markdown((into / "upstream/m/loop-python-matmul-retained/issue.md").read_text())
    assert not (into / "upstream/m/hostile").exists() and not (into / "gate").exists()
    assert "hostile/bisect.json: compare_url:" in err and "v2.22.0rc0.json: not JSON" in err
    assert err.count("abcdef04-env-cpu.json: not in its place") == 1
    assert "abcdef05-env-cpu.json: not in its place" in err
    assert not marker.exists()
    assert all(len(line) < 400 for line in err.splitlines())  # one line each


def test_the_report_names_each_kept_file_in_no_kinds_place(tmp_path, capsys):
    """What merge refuses by its place, publish and `tfbench report` name (one rule,
    tfbench.keptfiles.place); kept files in their places and a bisection's write-ups are not
    named, and a file of no kind's place is never read."""
    results = tmp_path / "results"
    shutil.copytree(ROOT / "results" / "upstream", results / "upstream")
    shutil.copy2(ROOT / "results" / "benchmarks.json", results)
    (results / "gate" / "m").mkdir(parents=True)
    (results / "gate" / "m" / "notes.md").write_text(SCRIPT)
    (results / "probes" / NAME_SHELL).mkdir(parents=True)
    (results / "probes" / NAME_SHELL / "abcdef04-env-cpu.json").write_bytes(b"\xff")
    (results / "explain" / "v2.21.0.json").parent.mkdir(parents=True)
    (results / "explain" / "v2.21.0.json").write_text("{}")  # no machine's folder
    (results / "gate" / "m" / "v2.21.0-v2.22.0rc0.json").symlink_to("/etc/passwd")
    code = main(["report", "--config", str(scratch_asv_conf(tmp_path, results))])
    err = capsys.readouterr().err
    assert code == 0, err
    named = [line for line in err.splitlines() if "not in its place" in line]
    assert len(named) == 3, err
    assert all(line.startswith("tfbench: skipped ") and len(line) < 400 for line in named)
    assert {"notes.md", "abcdef04-env-cpu.json", "v2.21.0.json"} == {
        line.split(": not in its place")[0].rpartition("/")[2] for line in named
    }
    assert "<script" not in err  # the files are named, never read
    assert not any(w in err for w in ("issue.md", "repro.py", "plot.png"))  # rendered, not named


def test_merge_refuses_two_sources_that_differ_on_a_file_unless_told_which_wins(tmp_path, capsys):
    a, b = shard(tmp_path, "a"), shard(tmp_path, "b")
    other = keep_probes(b / "probes" / "m" / "abcdef01-env-cpu.json", "skipped")
    into = tmp_path / "into"
    code = run("results", "merge", a, b, "--into", into)
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1, err
    assert "1 file(s) differ between sources" in err and "--wins" in err, err
    assert not into.exists() or not any(into.rglob("*.json"))  # nothing merged
    assert run("results", "merge", a, b, "--into", into, "--wins", b) == 0
    assert (into / "probes" / "m" / "abcdef01-env-cpu.json").read_text() == other


def test_merge_replaces_a_kept_file_only_when_told_naming_it_and_keeping_the_old(tmp_path, capsys):
    first, second = shard(tmp_path, "first"), shard(tmp_path, "second")
    kept = "probes/m/abcdef01-env-cpu.json"
    newer = keep_probes(second / kept, "skipped")
    into = tmp_path / "into"
    assert run("results", "merge", first, "--into", into) == 0
    old = (into / kept).read_bytes()
    capsys.readouterr()
    code = run("results", "merge", second, "--into", into)
    err = capsys.readouterr().err.strip()
    assert code == 2 and "1 kept file(s) would change" in err and kept in err, err
    assert (into / kept).read_bytes() == old  # refused: nothing written
    assert run("results", "merge", second, "--into", into, "--replace") == 0
    out = capsys.readouterr()
    assert (into / kept).read_text() == newer
    assert f"replaced {kept}" in out.err and "1 replaced" in out.out
    copies = list((tmp_path / "into-replaced").glob(f"*/{kept}"))
    assert len(copies) == 1 and copies[0].read_bytes() == old
    assert not any(p.name.startswith(".tfbench-merge-") for p in tmp_path.iterdir())


def test_merge_names_a_corrupt_machine_json_in_the_results_and_writes_nothing(tmp_path, capsys):
    source = shard(tmp_path)
    (tmp_path / "into" / "m").mkdir(parents=True)
    corrupt = tmp_path / "into" / "m" / "machine.json"
    corrupt.write_text('{"machine": "m", "cpu"')
    code, into, err = merged(tmp_path, source, capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1 and str(corrupt) in err, err
    assert "Traceback" not in err and not (into / "probes").exists()


def test_merge_refuses_a_machine_json_whose_text_asv_shows_as_html(tmp_path, capsys):
    source = shard(tmp_path)
    (source / "m" / "machine.json").write_text(json.dumps({"machine": "m", "cpu": IMAGE}))
    code, into, err = merged(tmp_path, source, capsys)
    assert code == 2 and "m/machine.json: cpu:" in err
    assert not (into / "m").exists()


# ---- the report and the site --------------------------------------------------------------


def _results(target: Path) -> Path:
    """The committed results of the newest two releases (what the report reads): the
    history's, with the retired machine's explanations read as the history's."""
    source = ROOT / "results"
    (target / HISTORY).mkdir(parents=True)
    shutil.copy2(source / "benchmarks.json", target)
    shutil.copy2(source / HISTORY / "machine.json", target / HISTORY)
    tags = history_tags()
    for tag in ("v2.21.0", "v2.22.0rc0"):
        for folder in (HISTORY, f"probes/{HISTORY}"):
            (target / folder).mkdir(parents=True, exist_ok=True)
            for path in (source / folder).glob(f"{tags[tag][:8]}-*.json"):
                shutil.copy2(path, target / folder)
    for kept in ("gate", "explain"):
        shutil.copytree(source / kept, target / kept)
    shutil.copytree(target / "explain" / MACHINE, target / "explain" / HISTORY)
    return target


def _hostile(results: Path, marker: Path) -> dict[str, str]:
    """Every hostile file the report reads, written into the results; the text each case
    must find escaped, or the file it must find named."""
    tags = history_tags()
    newest = results / HISTORY / f"{tags['v2.22.0rc0'][:8]}-virtualenv-py3.12.json"
    other = json.loads(newest.read_text())
    other["params"]["python"] = other["python"] = f"3.12{shell(marker)}"
    (results / HISTORY / f"{tags['v2.22.0rc0'][:8]}-virtualenv-py3.10.json").write_text(
        json.dumps(other)
    )
    gate = results / "gate" / MACHINE / "v2.21.0-v2.22.0rc0.json"
    row = {"benchmark": "articles.Articles.peakmem_step", "params": {"variant": "functions.ex2"}}
    row |= {"metric": "peakmem_step", "direction": "worse", "old": 1.0, "new": 2.0}
    row["unit"] = "bytes"
    row["evidence"] = {"rule": "apart", "figure": HOSTILE_TEXT, "old": [1, 1], "new": [2, 2]}
    row["evidence"] |= {"floor": 0, "readings": [5, 5], "less": HOSTILE_TEXT}
    time = {"design": "interleaved", "margin": 0.02, "pairs": [8, 14], "seconds": 0.2}
    time |= {"skipped": 0, "different": 0, "same": 80, "unknown": []}
    gate.write_text(json.dumps({"format": 3, "time": time, "rows": [row], "shifts": []}))
    explain = results / "explain" / HISTORY / "v2.22.0rc0.json"
    points = json.loads(explain.read_text())
    first = next(iter(points["points"]))
    points["points"][first]["conclusion"] = HOSTILE_TEXT
    explain.write_text(json.dumps(points))
    probes = results / "probes" / HISTORY / f"{tags['v2.22.0rc0'][:8]}-virtualenv-py3.11-cpu.json"
    kept = json.loads(probes.read_text())
    kept["AccumulationCosts"]["list_in_tf_range|1000|CPU"] = [
        {"status": "error", "error": HOSTILE_TEXT}
    ]
    probes.write_text(json.dumps(kept))
    upstream = results / "upstream" / MACHINE
    (upstream / "loop-python-matmul-retained").mkdir(parents=True)
    data = dict(kept_bisection(), broken={BUILDS[2].version: HOSTILE_TEXT})
    (upstream / "loop-python-matmul-retained" / "bisect.json").write_text(json.dumps(data))
    (upstream / "hostile").mkdir()
    bad = dict(kept_bisection(), packages={BUILDS[1].version: [f"{SCRIPT}==1"]})
    (upstream / "hostile" / "bisect.json").write_text(json.dumps(bad))
    shell_machine = results / NAME_SHELL
    shell_machine.mkdir()
    (shell_machine / "machine.json").write_text(json.dumps({"machine": shell_machine.name}))
    (results / "html-machine").mkdir()
    (results / "html-machine" / "machine.json").write_text(
        json.dumps({"machine": "html-machine", "os": IMAGE})
    )
    return {
        "python-field": f"{tags['v2.22.0rc0'][:8]}-virtualenv-py3.10.json: python",
        "gate-evidence": "PWNED heading",
        "explain-conclusion": "PWNED heading",
        "probe-error": "PWNED heading",
        "bisection-refused": "hostile/bisect.json: packages",
        "shell-machine": "machine.json: machine:",
        "html-machine": "html-machine/machine.json: os:",
    }


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """report.md, report.html and the filed reports, from results full of hostile files
    (what `tfbench publish` writes beside asv's pages, and `tfbench report`)."""
    from tfbench.publish import site as publishing

    tmp = tmp_path_factory.mktemp("site")
    marker = tmp / "PWNED"
    expected = _hostile(_results(tmp / "results"), marker)
    conf = scratch_asv_conf(tmp, tmp / "results")
    with contextlib.chdir(tmp):
        data = publishing.read(conf)
        publishing.write_report(data, tmp / "html")
    return tmp, marker, expected, data


@pytest.mark.parametrize(
    "case",
    [
        "python-field",
        "gate-evidence",
        "explain-conclusion",
        "probe-error",
        "bisection-refused",
        "shell-machine",
        "html-machine",
    ],
)
def test_the_report_escapes_or_names_every_hostile_file(site, case):
    tmp, marker, expected, data = site
    md = (tmp / "html" / "report.md").read_text()
    html = (tmp / "html" / "report.html").read_text()
    assert expected[case] in md or expected[case] in html.replace("&#x27;", "'")
    assert_inert_markdown(md)
    assert_inert_html(html)
    assert not marker.exists()
    named = [p for p in data.problems if expected[case] in p]
    if named:  # refused: one line, naming the file
        assert all("\n" not in p and str(tmp) in p for p in named)


def test_the_sites_write_ups_are_rendered_from_checked_fields(site):
    tmp, marker, _, _ = site
    folder = tmp / "html" / "upstream" / MACHINE
    assert sorted(p.name for p in folder.iterdir()) == ["loop-python-matmul-retained"]
    issue = (folder / "loop-python-matmul-retained" / "issue.md").read_text()
    assert "PWNED heading" in issue
    assert_inert_markdown(issue)
    code = (folder / "loop-python-matmul-retained" / "repro.py").read_text()
    assert skeleton(code)  # parses
    assert not marker.exists()


def test_the_reports_command_for_another_python_is_quoted():
    """A Python of the form X.Y only reaches a command; the command is quoted whole."""
    import shlex

    from tfbench.publish import families, python_axis

    family = families.Family(
        "predict.Predict", ["variant", "device"], [["'model_predict'"], ["'CPU'"]]
    )
    command = python_axis._command(family, ("'model_predict'", "'CPU'"), "v2.22.0rc0", "3.12")
    words = shlex.split(command.partition("  #")[0])
    assert words[-2:] == ["--python", "3.12"] and words[0] == "tfbench"


def test_a_merge_killed_midway_leaves_whole_folders_and_a_rerun_completes_it(tmp_path):
    """#69: killed on its first move, a merge left a machine folder without its
    machine.json (asv and the report skip such a folder without a word) and its staging
    folder. Now each machine.json moves before the files beside it; the re-run moves the
    rest and removes the killed run's staging."""
    import shutil
    import subprocess
    import sys

    source, kept = tmp_path / "runner", ROOT / "retired" / "results" / "linux-2cpu-24gb"
    (source / kept.name).mkdir(parents=True)
    for name in ("machine.json", "d2a6c68b-virtualenv-py3.11.json"):  # d < m: moved first
        shutil.copy(kept / name, source / kept.name / name)
    into = tmp_path / "into"
    code = (
        "import os, signal\nfrom tfbench.cli import main\nfrom tfbench.publish import merge\n"
        "moves, real = [], os.replace\n"
        "def replace(a, b):\n"
        "    moves.append(b)\n"
        "    if len(moves) == 2:\n"
        "        os.kill(os.getpid(), signal.SIGKILL)\n"
        "    real(a, b)\n"
        "merge.os.replace = replace\n"
        f"main(['results', 'merge', {str(source)!r}, '--into', {str(into)!r}])\n"
    )
    killed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert killed.returncode == -9, killed.stderr
    moved = sorted(p.relative_to(into).as_posix() for p in into.rglob("*") if p.is_file())
    assert moved == [f"{kept.name}/machine.json"], moved  # the one move made
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".tfbench-merge-")]
    assert run("results", "merge", source, "--into", into) == 0
    files = sorted(p.relative_to(into).as_posix() for p in into.rglob("*") if p.is_file())
    assert files == [f"{kept.name}/d2a6c68b-virtualenv-py3.11.json", f"{kept.name}/machine.json"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".tfbench-merge-")]
