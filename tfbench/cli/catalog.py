"""`tfbench list`: the scenario catalog."""

from __future__ import annotations

import argparse

from tfbench.cli.common import Subcommands


def add(sub: Subcommands) -> None:
    sub.add_parser("list", help="show the scenario catalog").set_defaults(run=run)


def run(_: argparse.Namespace) -> int:
    from tfbench.scenarios import CATALOG

    width = max(map(len, CATALOG))
    for sid, scenario in sorted(CATALOG.items()):
        params = "  ".join(f"{k}={'|'.join(map(str, v))}" for k, v in scenario.params.items())
        print(f"{sid:<{width}}  {scenario.description}")
        if params:
            print(f"{'':<{width}}    {params}")
    return 0
