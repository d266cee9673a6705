"""`tfbench cpu`: the CPU this machine's figures are read on (tfbench.cpu), as people, asv's
machine record and a runner's machine name use it."""

from __future__ import annotations

import argparse
import json

from tfbench.cli import common
from tfbench.cli.common import BadInput, Subcommands


def add(sub: Subcommands) -> None:
    c = sub.add_parser(
        "cpu",
        help="this machine's CPU identity: what a time figure read here holds for",
        description="Vendor, family, model, stepping, the vector extensions TensorFlow's "
        "kernels dispatch on, CPUs and caches, and the short id derived from them. Two "
        "machines of one kind may be two CPUs: time compares only within one id.",
    )
    shown = c.add_mutually_exclusive_group()
    shown.add_argument("--json", action="store_true", help="the identity as kept files keep it")
    shown.add_argument("--id", action="store_true", help="the short id alone")
    shown.add_argument(
        "--asv",
        metavar="MACHINE",
        help="the `cpu` field of asv's record of MACHINE; exit 2 where MACHINE's kept "
        "record names another CPU",
    )
    shown.add_argument(
        "--onednn", metavar="PYTHON", help="the ISA oneDNN detects in PYTHON's TensorFlow"
    )
    common.add_config(c)
    c.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from tfbench import cpu

    here = cpu.identity()
    if args.asv:
        from tfbench.gate import asvruns

        machine = common.machine(args.asv)
        try:
            asvruns.check_cpu(machine, common.results_dir(common.config(args)))
        except asvruns.OtherCpu as e:
            raise BadInput(str(e)) from None
        print(cpu.asv_cpu())
    elif args.json:
        print(json.dumps(here, indent=1))
    elif args.id:
        print(here["id"])
    elif args.onednn:
        found = cpu.onednn_isa(args.onednn)
        if found is None:
            raise BadInput(f"{args.onednn}: its TensorFlow's oneDNN said no ISA")
        print(found)
    else:
        print(cpu.label(here))
        caches = ", ".join(f"{k} {v >> 10} KiB" for k, v in here["caches"].items())
        print(f"vendor {here['vendor']}; caches {caches or 'not reported'}")
        print(f"isa {' '.join(here['isa']) or 'none of those tracked'}")
    return 0
