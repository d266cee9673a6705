"""`tfbench publish`: asv's site, its assets vendored (offline), the release report beside it.

Results come from other machines too, so the site is built from the results files both asv
and the report can read (tfbench.publish.results names the others and skips them), in a
scratch directory beside the published one, and swapped in only once complete, in one step:
a failed or killed publish leaves the previous site as it was, and two at once leave one of
the two.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import sys
from html import escape as html_escape
from pathlib import Path

from asv.config import Config

from tfbench import escape, faults, keptfiles, whole
from tfbench.history.asvconf import derived_config, load_config
from tfbench.measure.spawn import Spawned
from tfbench.publish import (
    assets,
    asv_publish,
    filed,
    html,
    markdown,
    nightly,
    nightly_graphs,
    report,
    results,
)


class PublishError(RuntimeError):
    """asv publish failed, or an asset could not be had."""


def write_report(data: results.Data, html_dir: Path, graphs: bool = False) -> None:
    """report.md and report.html, from one Report; the reports filed upstream they link,
    rendered from their checked bisect.json; the nightly watch's page, where it has read
    (linking asv's graphs of the nightlies where `graphs`)."""
    built = report.build(data)
    html_dir.mkdir(parents=True, exist_ok=True)
    page = nightly.render(data.results_dir, graphs) if data.results_dir is not None else None
    if page is not None:
        whole.write(html_dir / nightly.PAGE, page)
        built = dataclasses.replace(built, nightly=True)
    whole.write(html_dir / "report.md", markdown.render(built))
    whole.write(html_dir / "report.html", html.render(built))
    if built.reported:
        whole.write(html_dir / html.REPORTED_PAGE, html.render_reported(built))
    if data.results_dir is not None:
        for machine in filed.machines(data.results_dir):
            filed.render(data.results_dir, machine, html_dir)


def read(conf_path: str | Path) -> results.Data:
    """The results of a configuration; each unreadable results file is named on stderr."""
    data = results.load(load_config(conf_path))
    for problem in data.problems:
        print(f"tfbench: skipped {escape.plain(problem)}", file=sys.stderr)
    return data


def _readable_copy(conf: Config, data: results.Data, target: Path) -> None:
    """The results asv can publish safely: benchmarks.json without refused entries, its
    code HTML-escaped (asv's pages show it as an HTML tooltip: the source then reads as
    written, `<` and `&` included), and each machine's readable files. An OSError names
    `target`."""
    try:
        _copy(conf, data, target)
    except OSError as e:
        raise OSError(e.errno, e.strerror, e.filename or str(target)) from e


def _copy(conf: Config, data: results.Data, target: Path) -> None:
    source = Path(conf.results_dir)
    target.mkdir(parents=True)
    try:
        index = keptfiles.load(source / "benchmarks.json")
    except keptfiles.KeptFileError as e:
        raise PublishError(f"{e}: nothing to publish (`asv run` writes it again)") from e
    if not isinstance(index, dict):
        raise PublishError(f"{source / 'benchmarks.json'}: not an object: nothing to publish")
    kept = {k: v for k, v in index.items() if k == "version" or k in data.benchmarks}
    for name in data.benchmarks:
        kept[name] = kept[name] | {"code": html_escape(kept[name].get("code", ""))}
    (target / "benchmarks.json").write_text(json.dumps(kept))
    for machine_json, paths in data.files.items():
        folder = target / machine_json.parent.name
        folder.mkdir()
        for path in [machine_json, *paths]:
            shutil.copy2(path, folder / path.name)


def publish(conf_path: str, report_only: bool = False) -> tuple[Path, results.Data]:
    """asv publish (unless report_only), vendored assets, the report; the site's directory."""
    conf = load_config(conf_path)
    html_dir = Path(conf.html_dir)
    data = read(conf_path)
    if report_only:
        write_report(data, html_dir)
        return html_dir, data
    # through a link, the folder it points to: built beside it, on its file system
    beside = Path(os.path.realpath(html_dir)).parent
    beside.mkdir(parents=True, exist_ok=True)
    whole.sweep(".tfbench-publish-", beside)  # a killed publish's
    if html_dir.is_dir():
        whole.sweep(whole.REFILL, html_dir)
    with whole.temporary(".tfbench-publish-", beside) as scratch:
        try:
            whole.swap(_build(conf_path, conf, data, scratch), html_dir)  # the old one there
        except PublishError as e:
            raise PublishError(f"{e}; {html_dir} is left as it was") from e
    return html_dir, data


def _build(conf_path: str, conf: Config, data: results.Data, scratch: Path) -> Path:
    """The whole site in scratch/html: asv's pages, the vendored assets, the report."""
    _readable_copy(conf, data, scratch / "results")
    built = scratch / "html"
    config = derived_config(conf_path, scratch, results_dir=scratch / "results", html_dir=built)
    # its own group: an interrupt reaches tfbench alone, which ends asv's publish and says
    # so in one line (asv's own traceback is never printed); killed, tfbench takes it along
    code = Spawned(asv_publish.command(str(config))).wait()
    if code == faults.EXIT_IO:  # a full disk: said in one line
        raise faults.Said(faults.EXIT_IO)
    if code:
        raise PublishError(f"asv publish failed (exit {code})")
    graphs = _nightly_graphs(data, scratch / "nightly")
    try:
        assets.vendor(built)
        if graphs:
            assets.vendor(graphs)
    except assets.AssetError as e:
        raise PublishError(str(e)) from e
    if graphs:
        graphs.rename(built / nightly_graphs.FOLDER)
    write_report(data, built, graphs=graphs is not None)
    return built


def _nightly_graphs(data: results.Data, scratch: Path) -> Path | None:
    """asv's site of the nightly history (tfbench.publish.nightly_graphs), where there is
    one to show."""
    if data.results_dir is None:
        return None
    found, _ = nightly.histories(data.results_dir)
    if not found:
        return None
    described = {m: data.results_dir / m / "machine.json" for m in found}
    try:  # a machine.json the report skipped (named there) describes no nightly graph
        return nightly_graphs.build(
            found, {m: p for m, p in described.items() if p in data.files}, scratch
        )
    except (RuntimeError, keptfiles.KeptFileError) as e:
        raise PublishError(str(e)) from e
