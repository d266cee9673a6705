"""`tfbench versions`: the benchmark families' asv versions, and recording a code change."""

from __future__ import annotations

import argparse

from tfbench.cli.common import BadInput, Subcommands


def add(sub: Subcommands) -> None:
    v = sub.add_parser(
        "versions",
        help="each benchmark family's asv version; record a change of its measuring code",
        description="A family's results carry its recorded version. Code changed since it "
        "was recorded measures under a version of its own until you say which it is: "
        "--same (a refactor: the committed history still holds) or --new (what it measures "
        "changed: measure the history again).",
    )
    what = v.add_mutually_exclusive_group()
    what.add_argument("--same", nargs="+", metavar="FAMILY", help="record as a refactor")
    what.add_argument("--new", nargs="+", metavar="FAMILY", help="record as a new measurement")
    v.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from tfbench import versions

    keys = args.same or args.new
    if keys:
        known = sorted(versions.read())
        keys = known if keys == ["all"] else keys
        try:
            changed = versions.record(keys, new=bool(args.new))
        except KeyError as e:
            raise BadInput(e.args[0]) from None
        for family in changed:
            print(f"{family.key:<10} {family.version}  recorded")
        return 0
    found = versions.families()
    for family in found:
        state = "recorded" if family.code == family.recorded else "changed: not recorded"
        print(f"{family.key:<10} {family.current:<33} {state}")
    unrecorded = [f.key for f in found if f.code != f.recorded]
    if unrecorded:
        print(
            f"the code of {', '.join(unrecorded)} changed since its version was recorded: "
            "`tfbench versions --same FAMILY` if what it measures is the same, --new if not"
        )
    return 1 if unrecorded else 0
