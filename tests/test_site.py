"""The published site: offline assets, the release report, several machines, and a real
browser (headless Chromium, Debian's package) reading it from localhost with no internet."""

import contextlib
import functools
import http.server
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from asv.config import Config
from conftest import scratch_asv_conf

from tfbench import probes
from tfbench.history.releases import label, tracked_versions
from tfbench.history.repo import history_tags
from tfbench.paths import ROOT
from tfbench.publish import articles, assets, changes, headline, results, site
from tfbench.publish.coverage import REFERENCE

ARTIFACTS = ROOT / "build" / "screenshots"  # kept after the run, for a person to look at
RELEASES = [f"v{v}" for v in tracked_versions()]
MACHINE = REFERENCE


def tfbench(*args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tfbench", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=900,
        env=env,
    )


pytestmark = pytest.mark.slow  # asv publish of the whole history, asv runs


@pytest.fixture(scope="module")
def published(tmp_path_factory, npm_cache):
    """The committed results published with `tfbench publish` into a scratch site."""
    tmp = tmp_path_factory.mktemp("site")
    shutil.copytree(ROOT / "results", tmp / "results")
    conf = scratch_asv_conf(tmp, tmp / "results")
    run = tfbench("publish", "--config", str(conf), cwd=tmp)
    assert run.returncode == 0, run.stdout + run.stderr
    return tmp


def test_vendored_page_loads_nothing_from_the_internet(published):
    html = (published / "html" / "index.html").read_text()
    assert not re.findall(
        r'(?:src|href)="https?://',
        html.replace('href="https://github.com/airspeed-velocity/asv/"', ""),
    )
    scripts = re.findall(r'<script src="(vendor/[^"]+)"', html)
    assert len(scripts) == 9 and all((published / "html" / s).is_file() for s in scripts)
    assert (published / "html" / "vendor" / "bootstrap" / "dist" / "fonts").is_dir()
    assert 'href="report.html"' in html


def test_assets_come_from_the_cache_once_fetched(npm_cache, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    shutil.copytree(npm_cache, cache)
    monkeypatch.setattr(assets, "REGISTRY", "http://127.0.0.1:9")  # nothing listens there
    assert all(assets.fetch(p, cache) for p in assets.PACKAGES)
    (cache / assets.PACKAGES[0].tarball).write_bytes(b"tampered")
    with pytest.raises(assets.AssetError, match="cannot fetch"):
        assets.fetch(assets.PACKAGES[0], cache)


def test_history_has_every_tracked_release(published):
    index = json.loads((published / "html" / "index.json").read_text())
    assert sorted(index["tags"]) == sorted(RELEASES)
    data = site.read(published / "asv.conf.json")
    assert data.machines[MACHINE].releases == RELEASES


def test_report_lists_every_scenario_and_verdict(published):
    from tfbench import scenarios

    text = (published / "html" / "report.md").read_text()
    for scenario_id in scenarios.CATALOG:
        family, variant = scenario_id.split(".", 1)
        # The articles' examples are the Articles section's rows; the others, family tables'.
        shown = f"**{variant}**" if family == "article" else f"variant={variant}"
        assert shown in text, scenario_id
    # Every claim has its verdict line on some machine (its family measured there at this
    # version, or failing with a reason); a machine names those it has no data for in one line.
    for c in articles.CLAIMS:
        assert f"- [{c.article}] {c.text}: **" in text, c.text
    newest = label(RELEASES[-1])
    assert f"**TRUE** on {newest}" in text and f"**FALSE** on {newest}" in text


def test_the_report_reads_in_a_minute(published):
    """The newest release in the patterns' words first, then the summary; no traceback
    anywhere, and a length a person reads."""
    text = (published / "html" / "report.md").read_text()
    # a machine's section at a time: 392 lines for the reference's, which holds the whole
    # history (every family, 11 releases: its adjacent releases' changes are 100 rows); a
    # machine of some families says the rest in a line each; 472 lines in all, where two
    # half-histories took 452 (300 and 138)
    sections = re.split(r"\n(?=## Machine )", text)[1:]
    assert sections and all(len(s.splitlines()) <= 420 for s in sections)
    assert len(text.splitlines()) <= 520
    head, _, rest = text.partition("### What changed in ")
    assert rest and len(head) < 400
    screen, _, rest = rest.partition("\n### Summary")
    assert 3 <= screen.count("\n- ") <= 3 * (headline.SHOWN + 1)
    assert "Costs" not in screen and "time_step" not in screen  # no benchmark id
    summary = rest.split("\n###", 1)[0]
    assert 3 <= summary.count("\n- ") <= 8
    assert "Traceback" not in text and 'File "' not in text and str(ROOT) not in text


def test_report_commands_select_exactly_their_row(published):
    """Each row's `tfbench gate ... --bench` selects its one grid point, by asv's own filter."""
    from asv.benchmarks import Benchmarks

    conf = Config.load(str(published / "asv.conf.json"))
    data = results.load(conf)
    items = [i for c in changes.history_changes(data, data.machines[MACHINE]) for i in c.items]
    assert items  # the committed history has changes (model.predict's growth at 2.15.1)
    for item in items[:20]:
        pattern = shlex.split(item.command)[-1]
        chosen = Benchmarks.load(conf, regex=pattern)
        assert list(chosen) == [item.row.benchmark], item.command
        assert len(chosen.benchmark_selection[item.row.benchmark]) == 1, item.command


def test_a_broken_results_file_is_named_and_skipped(tmp_path):
    shutil.copytree(ROOT / "results", tmp_path / "results")
    victim = sorted((tmp_path / "results" / MACHINE).glob("*-*.json"))[0]
    victim.write_text(victim.read_text()[:500])  # truncated mid-file
    conf = scratch_asv_conf(tmp_path, tmp_path / "results")
    run = tfbench("publish", "--config", str(conf), cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert victim.name in run.stderr and victim.exists()
    md = (tmp_path / "html" / "report.md").read_text()
    assert victim.name in md and "v2.21.0" in md


def test_a_second_machine_gets_its_own_graphs_and_report_section(tmp_path):
    """A real second machine: the Eager family run here under another machine name (asv's
    --python=same measures the installed TensorFlow, the history's newest release)."""
    pytest.importorskip("tensorflow")
    shutil.copytree(ROOT / "results", tmp_path / "results")
    conf = scratch_asv_conf(tmp_path, tmp_path / "results")
    env = {
        **os.environ,
        "HOME": str(tmp_path),  # asv keeps its machine file in HOME
        "XDG_CACHE_HOME": str(assets.cache_dir().parents[1]),
        # a probe point in one process of a few calls: the sections, not their figures
        probes.SMOKE_VAR: "8",
    }
    asv = [sys.executable, "-m", "asv", "--config", str(conf)]
    subprocess.run(
        [*asv, "machine", "--yes", "--machine", "gpu-box"],
        env=env,
        check=True,
        capture_output=True,
    )
    newest = history_tags()[RELEASES[-1]]  # what --python=same measures, saved under its hash
    run = subprocess.run(
        [
            *asv,
            "run",
            "--python=same",
            "--quick",
            "--machine",
            "gpu-box",
            "--set-commit-hash",
            newest,
            "--bench",
            r"graphs\.Eager",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert run.returncode == 0, run.stdout[-3000:]
    run = tfbench("publish", "--config", str(conf), cwd=tmp_path, env=env)
    assert run.returncode == 0, run.stderr
    index = json.loads((tmp_path / "html" / "index.json").read_text())
    assert {MACHINE, "gpu-box"} <= set(index["params"]["machine"])
    md = (tmp_path / "html" / "report.md").read_text()
    assert f"## Machine {MACHINE}" in md and "## Machine gpu-box" in md


# ---- headless Chromium -------------------------------------------------------------------


@contextlib.contextmanager
def serving(directory: Path):
    """A site's folder served on localhost: its address."""

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    handler = functools.partial(Quiet, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()


@pytest.fixture(scope="module")
def served(published):
    with serving(published / "html") as url:
        yield url


def chromium(url: str, screenshot: str, size: str = "1400,1000") -> str:
    """The DOM after the page's scripts ran; a screenshot beside it. Every host but localhost
    resolves to nothing: the page cannot reach the internet."""
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    assert binary, "headless Chromium is needed: apt-get install chromium (.ci/run does)"
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    common = [
        binary,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
        f"--window-size={size}",
        "--virtual-time-budget=20000",
    ]
    with contextlib.suppress(subprocess.TimeoutExpired):
        subprocess.run(
            [*common, f"--screenshot={ARTIFACTS / screenshot}", url],
            capture_output=True,
            timeout=120,
        )
    return subprocess.run(
        [*common, "--dump-dom", url], capture_output=True, text=True, timeout=120
    ).stdout


@pytest.mark.browser
def test_summary_grid_loads_offline(served):
    dom = chromium(f"{served}/index.html", "summary-grid.png")
    assert "continental origin of swallow" not in dom
    assert "MatrixPower" in dom and "benchmark-container" in dom


@pytest.mark.browser
def test_graph_shows_release_tags(served):
    dom = chromium(f"{served}/index.html#loops.MatrixPower.time_step", "graph.png")
    shown = set(re.findall(r">(v2\.\d+\.\d+(?:rc\d+)?)</div>", dom))
    assert shown == set(RELEASES), shown


@pytest.mark.browser
def test_the_reports_first_screen_is_the_newest_release_in_users_words(served):
    """At 1280x800 the page opens on what the newest release changed: above it only the
    title, the link back, the machine's name, its releases and which CPU read them; the
    summary follows it; no traceback anywhere."""
    dom = chromium(f"{served}/report.html", "report-first-screen.png", "1280,800")
    body = dom.split("<body>", 1)[1]
    head, _, rest = body.partition('<section class="screen">')
    assert rest, "no first screen"
    assert len(re.sub(r"<[^>]+>", "", head)) < 400
    screen, _, rest = rest.partition("</section>")
    assert "Worse" in screen and "Better" in screen and "Costs" not in screen
    summary = rest.partition('<section class="summary">')[2]
    assert 3 <= summary.split("</section>", 1)[0].count("<li>") <= 8
    assert "Traceback" not in dom and "File &quot;" not in dom and 'File "' not in dom


@pytest.mark.browser
def test_report_page_renders_tables_and_plots(served):
    dom = chromium(f"{served}/report.html", "report.png")
    # a machine's families: their plots, then one table whose cells say leak or flat (the
    # reference's; the other machines hold their families at older versions)
    assert dom.count('<table class="family"') >= 1 and dom.count("<svg") >= 8
    assert '<td class="leak">' in dom and '<td class="flat">' in dom
    assert "What changed between adjacent releases" in dom and "Machine linux-2cpu-24gb" in dom


@pytest.mark.browser
def test_the_nightly_watch_and_asvs_graphs_of_the_nightlies_load_offline(served):
    """The committed nightly history (tfbench watch): its page, linked from the report,
    with the footprint's step of 2.22.0.dev20260215 called; and asv's own site of it, the
    footprint's graph with one point per build read."""
    assert 'href="nightly.html"' in chromium(f"{served}/report.html", "report-link.png")
    dom = chromium(f"{served}/nightly.html", "nightly.png", "1400,2600")
    assert "Machine linux-2cpu-24gb" in dom and dom.count("<svg") == 15
    assert "2.22.0.dev20260214 → 2.22.0.dev20260215" in dom and "(confirmed)" in dom
    graph = chromium(
        f"{served}/nightly/index.html#nightly.Footprint.track_footprint_heap", "nightly-asv.png"
    )
    assert "continental origin of swallow" not in graph
    assert "2.22.0.dev20260215" in graph
