"""`tfbench releases`: follow TensorFlow's releases: what is new on the index, track it (lock,
rebuild asv's history), rebuild the history from the locks."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable

from tfbench.cli import common
from tfbench.cli.common import BadInput, Subcommands

EXIT_NEW = 1  # `check`: something new is listed


def add(sub: Subcommands) -> None:
    r = sub.add_parser(
        "releases", help="follow TensorFlow's releases: check the index, add, lock, build"
    )
    actions = r.add_subparsers(dest="action", required=True)
    c = actions.add_parser(
        "check",
        help="what PyPI has that releases.txt does not track (exit 0 nothing new, 1 new "
        "ones listed, 2 the index cannot be reached)",
    )
    c.add_argument("--pre", action="store_true", help="release candidates too")
    common.add_json(c, "what is new")
    c.set_defaults(run=check)
    li = actions.add_parser("list", help="the tracked releases, oldest first")
    shown = li.add_mutually_exclusive_group()
    shown.add_argument("--json", action="store_true", help="as a JSON list (a CI matrix)")
    shown.add_argument(
        "--pythons",
        action="store_true",
        help="the CPython versions other than the history's that the newest release has a "
        "lock for, as a JSON list (a CI matrix)",
    )
    shown.add_argument(
        "--newest-pair",
        action="store_true",
        help="the two tags the newest release is compared by: the newest release and a newer "
        "candidate, or the newest release and the one before",
    )
    li.set_defaults(run=listing)
    a = actions.add_parser(
        "add", help="track new releases: append them, lock them, rebuild the history"
    )
    a.add_argument("versions", nargs="+", metavar="VERSION", help="e.g. 2.22.0 or 2.22.0rc0")
    a.set_defaults(run=add_releases)
    u = actions.add_parser("update", help="lock tracked releases that have no lock, rebuild")
    u.set_defaults(run=update)
    b = actions.add_parser("build", help="rebuild the history from the locks")
    b.set_defaults(run=update)


def listing(args: argparse.Namespace) -> int:
    from tfbench.history.releases import label, newest_pair

    tracked = common.tracked()
    if args.json:
        print(json.dumps(tracked))
    elif args.pythons:
        from tfbench.history.pythons import CANDIDATES, DEFAULT
        from tfbench.history.releases import supports

        print(json.dumps([p for p in CANDIDATES if p != DEFAULT and supports(tracked[-1], p)]))
    elif args.newest_pair:
        pair = newest_pair([f"v{v}" for v in tracked])
        if pair is None:
            raise BadInput("fewer than two releases are tracked")
        print(*pair)
    else:
        print("\n".join(map(label, tracked)))
    return 0


def check(args: argparse.Namespace) -> int:
    from tfbench.history import releases

    tracked = common.tracked()
    try:
        index = releases.available(releases.index_files("tensorflow-cpu"))
    except releases.IndexUnreachable as e:
        raise BadInput(f"the package index cannot be reached: {e}") from None
    found = releases.newer(tracked, index, args.pre)
    if args.json:
        news = [{"version": n.version, "kind": n.kind, "uploaded": n.uploaded} for n in found]
        print(json.dumps({"tracked": tracked[-1], "new": news}, indent=2))
    elif not found:
        print(f"nothing new: {tracked[-1]} is the newest tracked" + " (candidates too)" * args.pre)
    else:
        for n in found:
            print(f"{n.version:<12} {n.kind:<9} uploaded {n.uploaded}")
        print(f"track them: tfbench releases add {' '.join(n.version for n in found)}")
    return EXIT_NEW if found else 0


def _tags(make: Callable[[], dict[str, str]]) -> int:
    """Print the history's tags as `make` leaves them; its failures as messages."""
    from tfbench.history import releases

    try:
        tags = make()
    except releases.IndexUnreachable as e:
        raise BadInput(f"the package index cannot be reached: {e}") from None
    except (ValueError, LookupError, FileNotFoundError) as e:
        raise BadInput(str(e)) from None
    except RuntimeError as e:  # the resolver's or git's own message
        print(f"tfbench: {e}", file=sys.stderr)
        return 1
    for tag, commit in tags.items():
        print(f"{tag}  {commit}")
    return 0


def add_releases(args: argparse.Namespace) -> int:
    from tfbench.history import repo

    return _tags(lambda: repo.add(args.versions, common.progress))


def update(args: argparse.Namespace) -> int:
    from tfbench.history import repo

    versions = common.tracked()
    if args.action == "update":
        return _tags(lambda: repo.update(versions, common.progress))
    return _tags(lambda: repo.build_history(versions))
