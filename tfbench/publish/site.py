"""`tfbench publish`: asv's site, its assets vendored (offline), the release report beside it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tfbench.publish import assets, html, markdown, report
from tfbench.publish.results import Data, read


class PublishError(RuntimeError):
    """asv publish failed, or an asset could not be had."""


def write_report(conf_path: str, html_dir: str | None = None) -> Data:
    """Write report.md and report.html into html_dir (asv's by default); returns what was read."""
    conf, data = read(conf_path)
    built = report.build(data)
    target = Path(html_dir or conf.html_dir)
    target.mkdir(parents=True, exist_ok=True)
    (target / "report.md").write_text(markdown.render(built))
    (target / "report.html").write_text(html.render(built))
    return data


def publish(conf_path: str, report_only: bool = False) -> tuple[Path, Data]:
    """asv publish (unless report_only), vendored assets, the report; the site's directory."""
    from asv.config import Config

    if not report_only:
        run = subprocess.run([sys.executable, "-m", "asv", "publish", "--config", conf_path])
        if run.returncode:
            raise PublishError(f"asv publish failed (exit {run.returncode})")
    html_dir = Path(Config.load(conf_path).html_dir)
    try:
        assets.vendor(html_dir)
    except assets.AssetError as e:
        raise PublishError(str(e)) from e
    return html_dir, write_report(conf_path, str(html_dir))
