"""Results from elsewhere are untrusted: a bad file never costs the site, names never inject
HTML, Markdown or shell, and asv and the report skip the same files."""

import html.parser
import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import scratch_asv_conf
from test_site import chromium, serving

from tfbench import cpu
from tfbench.gate.rules import Change
from tfbench.history.repo import history_tags
from tfbench.keptfiles import probes
from tfbench.paths import ROOT
from tfbench.publish import changes
from tfbench.publish.coverage import REFERENCE

pytestmark = pytest.mark.slow  # asv publish
MACHINE = REFERENCE
INJECTED = "graphs.<img src=x onerror=alert(3)>.time_step"
SHELL = "m$(touch${IFS}PWNED)"


def newest_results(target: Path) -> Path:
    """The committed benchmarks.json and the two newest releases' results of MACHINE."""
    source = ROOT / "results"
    (target / MACHINE).mkdir(parents=True)
    shutil.copy2(source / "benchmarks.json", target)
    shutil.copy2(source / MACHINE / "machine.json", target / MACHINE)
    for tag in ("v2.20.0", "v2.21.0"):
        for path in (source / MACHINE).glob(f"{history_tags()[tag][:8]}-*.json"):
            shutil.copy2(path, target / MACHINE)
    return target


def publish(tmp: Path) -> subprocess.CompletedProcess:
    conf = scratch_asv_conf(tmp, tmp / "results")
    return subprocess.run(
        [sys.executable, "-m", "tfbench", "publish", "--config", str(conf)],
        cwd=tmp,
        capture_output=True,
        text=True,
        timeout=900,
    )


@pytest.fixture
def site(tmp_path, npm_cache):
    """A published site of the newest two releases."""
    newest_results(tmp_path / "results")
    run = publish(tmp_path)
    assert run.returncode == 0, run.stderr
    return tmp_path


def test_bad_bytes_and_null_results_files_are_skipped_and_the_site_kept(site):
    before = sorted(p.relative_to(site / "html") for p in (site / "html").rglob("*"))
    (site / "results" / MACHINE / "badbytes-virtualenv-py3.11.json").write_bytes(b"\xff")
    (site / "results" / MACHINE / "null-virtualenv-py3.11.json").write_text("null")
    run = publish(site)
    assert run.returncode == 0, run.stderr
    assert "badbytes-virtualenv" in run.stderr and "null-virtualenv" in run.stderr
    after = sorted(p.relative_to(site / "html") for p in (site / "html").rglob("*"))
    assert after == before
    md = (site / "html" / "report.md").read_text()
    assert "badbytes-virtualenv" in md and "**TRUE** on v2.21.0" in md


def test_a_failed_publish_leaves_the_previous_site(site):
    before = sorted((site / "html").rglob("*"))
    (site / "results" / "benchmarks.json").write_text("{not json")  # asv publish fails
    run = publish(site)
    assert run.returncode == 3 and "left as it was" in run.stderr  # not a verdict's 1
    assert sorted((site / "html").rglob("*")) == before


def test_injected_names_are_refused_or_escaped(tmp_path, npm_cache):
    results = newest_results(tmp_path / "results")
    index = json.loads((results / "benchmarks.json").read_text())
    index[INJECTED] = dict(index["graphs.Eager.time_step"], name=INJECTED)
    hostile_param = dict(index["graphs.Eager.peakmem_step"])
    hostile_param["params"] = [["'<b>bold</b>'"], ["'CPU'"]]
    index["graphs.Hostile.time_step"] = dict(hostile_param, name="graphs.Hostile.time_step")
    (results / "benchmarks.json").write_text(json.dumps(index))
    shell = results / SHELL
    shutil.copytree(results / MACHINE, shell)
    (shell / "machine.json").write_text(json.dumps({"machine": SHELL, "version": 1}))
    run = publish(tmp_path)
    assert run.returncode == 0, run.stderr
    html = tmp_path / "html"
    for page in ("report.html", "report.md", "index.html", "index.json"):
        text = (html / page).read_text()
        assert "<img src=x" not in text and "<b>bold" not in text, page
    md = (html / "report.md").read_text()
    assert "dotted identifiers" in md and "machine: 'm$(touch" in md  # named, not shown
    assert SHELL not in (html / "index.json").read_text()
    assert not any("onerror" in str(p) or "Hostile" in str(p) for p in html.rglob("*"))
    assert not (tmp_path / "PWNED").exists()


# Each, if it ran, marks the page's body (the DOM shows it) and opens a dialog.
HANDLER = "document.body.dataset.pwned={0};alert({0})"
HOSTILE_FIELDS = {
    ("loops.MatrixPower.time_step", "code"): f'<img src=x onerror="{HANDLER.format(1)}">',
    ("graphs.Eager.time_step", "pretty_name"): f'<img src=x onerror="{HANDLER.format(2)}">',
    ("graphs.Eager.peakmem_step", "unit"): f"<script>{HANDLER.format(3)}</script>",
}


class _Elements(html.parser.HTMLParser):
    """The elements a piece of HTML makes (what asv's tooltip would insert)."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.found.append(tag)


@pytest.mark.browser
def test_a_hostile_benchmarks_json_makes_no_element_and_runs_no_handler(tmp_path, npm_cache):
    """asv's pages build HTML from an entry's pretty_name and unit and show its code as an
    HTML tooltip: the first two are refused by name, the code is shown as text; in Chromium
    the pages hold no injected element and no injected handler ran."""
    results = newest_results(tmp_path / "results")
    index = json.loads((results / "benchmarks.json").read_text())
    for (name, field), value in HOSTILE_FIELDS.items():
        index[name][field] = value + (index[name].get(field) or "")
    (results / "benchmarks.json").write_text(json.dumps(index))
    run = publish(tmp_path)
    assert run.returncode == 0, run.stderr
    named = (tmp_path / "html" / "report.md").read_text()  # its list of what was skipped
    assert "graphs.Eager.time_step has a pretty_name" in named
    assert "graphs.Eager.peakmem_step has a unit" in named
    site = json.loads((tmp_path / "html" / "index.json").read_text())["benchmarks"]
    assert "graphs.Eager.time_step" not in site and "graphs.Eager.peakmem_step" not in site
    code = site["loops.MatrixPower.time_step"]["code"]
    assert code.startswith("&lt;img src=x onerror=&quot;")
    elements = _Elements()
    elements.feed(code)  # as the tooltip inserts it: text, no element
    assert elements.found == []
    with serving(tmp_path / "html") as url:
        assert "MatrixPower" in chromium(f"{url}/index.html", "hostile-grid.png")
        for page, shot in [
            ("index.html#loops.MatrixPower.time_step", "hostile-graph.png"),
            ("index.html#regressions", "hostile-regressions.png"),
            ("index.html#summarylist", "hostile-list.png"),
        ]:
            dom = chromium(f"{url}/{page}", shot)
            assert "</body>" in dom, page  # the page was built and its scripts ran
            assert "data-pwned" not in dom, page  # no handler ran
            assert not re.search(r"<(img|script)[^>]*(dataset\.pwned|src=.?x\b)", dom), page


def test_report_md_escapes_what_it_shows(tmp_path, npm_cache):
    """A reason kept beside the results is text, not Markdown or HTML."""
    results = newest_results(tmp_path / "results")
    commit = history_tags()["v2.21.0"][:8]
    probes.add(
        results / "probes" / MACHINE / f"{commit}-virtualenv-py3.11-cpu.json",
        "AccumulationCosts",
        {
            "list_in_tf_range|1000|CPU": [
                {"status": "error", "error": "<script>alert(1)</script> | *x* `y`"}
            ]
        },
        cpu.identity(),
    )
    run = publish(tmp_path)
    assert run.returncode == 0, run.stderr
    md = (tmp_path / "html" / "report.md").read_text()
    assert r"why on v2.21.0: &lt;script&gt;alert(1)&lt;/script&gt; \| \*x\* \`y\`" in md
    assert "<script>" not in (tmp_path / "html" / "report.html").read_text()


def test_a_machine_json_naming_another_machine_is_skipped_by_both(tmp_path, npm_cache):
    results = newest_results(tmp_path / "results")
    other = results / "renamed"
    shutil.copytree(results / MACHINE, other)  # machine.json still says MACHINE
    run = publish(tmp_path)
    assert run.returncode == 0, run.stderr
    md = (tmp_path / "html" / "report.md").read_text()
    assert md.count(f"## Machine {MACHINE}") == 1 and "## Machine renamed" not in md
    assert f"renamed/machine.json: machine: names '{MACHINE}'" in md  # named as skipped
    index = json.loads((tmp_path / "html" / "index.json").read_text())
    assert index["params"]["machine"] == [MACHINE]


def test_gate_commands_run_as_printed_without_the_shell_reading_names(tmp_path):
    row = Change(
        "graphs.Eager.time_step('loop', 'CPU')",
        "graphs.Eager.time_step",
        {"variant": "'loop'", "device": "'CPU'"},
        "time_step",
        "worse",
        1.0,
        2.0,
        "seconds",
        "",
    )
    command = changes.gate_command(row, SHELL, ("v2.20.0", "v2.21.0"))
    echoed = subprocess.run(
        ["bash", "-c", "printf '%s\\n' " + command.removeprefix("tfbench ")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert echoed.splitlines() == shlex.split(command)[1:]
    assert echoed.splitlines()[4] == SHELL and not (tmp_path / "PWNED").exists()
