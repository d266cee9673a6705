"""`tfbench publish` (the site and the report) and `tfbench report` (the report as Markdown)."""

from __future__ import annotations

import argparse
import json
import sys

from tfbench import escape
from tfbench.cli import common
from tfbench.cli.common import Subcommands


def add(sub: Subcommands) -> None:
    p = sub.add_parser(
        "publish",
        help="asv publish, then vendor its assets (an offline site) and write the release "
        "report into it",
    )
    common.add_config(p)
    p.add_argument(
        "--report-only", action="store_true", help="skip `asv publish` (the site is already built)"
    )
    p.set_defaults(run=publish)
    r = sub.add_parser("report", help="print the release report as Markdown")
    common.add_config(r)
    common.add_json(r, "its summary and findings (CI job summaries, other tools)")
    r.set_defaults(run=report)


def publish(args: argparse.Namespace) -> int:
    from tfbench.publish import site

    config = common.config(args)
    try:
        html_dir, data = site.publish(str(config), args.report_only)
    except site.PublishError as e:
        print(f"tfbench: {escape.plain(str(e))}", file=sys.stderr)
        return common.EXIT_FAILED  # not 1: a verdict's code
    skipped = f", {len(data.problems)} unreadable results file(s) skipped" if data.problems else ""
    print(f"{html_dir}/index.html: asv's site, with its assets in vendor/ (works offline)")
    print(
        f"{html_dir}/report.html, report.md: the release report "
        f"({len(data.machines)} machine(s){skipped})"
    )
    return 0


def report(args: argparse.Namespace) -> int:
    from tfbench.publish import markdown, report, site

    built = report.build(site.read(common.config(args)))
    if args.json:
        print(json.dumps(report.as_json(built), indent=2))
    else:
        print(markdown.render(built), end="")
    return 0
