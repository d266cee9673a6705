"""What the commands share: bad input, the options several take (declared once here), and
the check of each kind of input (in one place each)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from tfbench.units import MiB

if TYPE_CHECKING:
    from tfbench.sweep import Runner
    from tfbench.targets import Limits, Step, Target

EXIT_BAD_INPUT = 2
EXIT_FAILED = 3  # the command could not be done (a side not measured, the site not built)
DEFAULT_PYTHON = "3.11"  # tfbench.history.pythons.DEFAULT, without importing the history
FLAVOURS = ("cpu", "gpu")
Subcommands = argparse._SubParsersAction  # what each command's add() registers itself on


class BadInput(Exception):
    """Input the command cannot take: printed as `tfbench: error: ...`, exit 2."""


def progress(text: str) -> None:
    """A line to the terminal: text from kept files made plain (tfbench.escape.plain)."""
    from tfbench.escape import plain

    print(f"tfbench: {plain(text)}", file=sys.stderr, flush=True)


# -- options -------------------------------------------------------------------------------


def add_target(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "target", help="scenario id (see `tfbench list`) or path/to/file.py::function"
    )
    parser.add_argument("--param", action="append", default=[], metavar="KEY=VALUE")


def add_measuring(parser: argparse.ArgumentParser) -> None:
    """The measuring options of measure and bisect."""
    parser.add_argument("--iterations", type=int, help="measured iterations after warm-up")
    parser.add_argument("--warmup", type=int, help="iterations before the growth fit starts")
    parser.add_argument(
        "--budget-mib",
        type=int,
        help="memory budget: the RSS of the measuring process (TensorFlow's own ~0.5 GiB "
        "included) and of any process its step starts; stopped past it (default: a quarter "
        "of RAM)",
    )
    parser.add_argument("--timeout", type=int, help="seconds before a run is killed (default 600)")


def add_environments(parser: argparse.ArgumentParser) -> None:
    """Which lock, which Python, and where the release environments live."""
    parser.add_argument("--flavour", default="cpu", help="the lock: cpu (default) or gpu")
    parser.add_argument(
        "--python",
        default=DEFAULT_PYTHON,
        metavar="X.Y",
        help=f"the CPython of the release environments (default {DEFAULT_PYTHON}, the "
        "history's); a release without a wheel for it is said so",
    )
    parser.add_argument(
        "--env-dir",
        type=Path,
        help="where release environments live (default: $TFBENCH_ENV_DIR or "
        "~/.cache/tfbench/envs)",
    )


def add_config(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", default="asv.conf.json", help="asv's configuration")


def add_json(parser: argparse.ArgumentParser, what: str = "the result") -> None:
    parser.add_argument("--json", action="store_true", help=f"print {what} as JSON")


# -- checks --------------------------------------------------------------------------------


def params(pairs: list[str]) -> dict[str, str]:
    found = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise BadInput(f"--param takes KEY=VALUE, got {pair!r}")
        found[key] = value
    return found


def target(text: str, given: list[str]) -> Target:
    """A scenario id with its --param values, or path/to/file.py::function."""
    from tfbench import scenarios
    from tfbench.targets import FootprintTarget, FunctionTarget, ScenarioTarget

    bound = params(given)
    if "::" in text:
        file, _, function = text.rpartition("::")
        if not file:
            raise BadInput(f"no file before '::{function}' (use path/to/file.py::function)")
        if Path(file).is_dir():
            raise BadInput(f"{file} is a directory (use path/to/file.py::function)")
        if not Path(file).is_file():
            raise BadInput(f"no such file: {file}")
        if not function.isidentifier():
            raise BadInput(f"{function!r} is not a function name (use path/to/file.py::function)")
        if bound:
            raise BadInput("--param applies to catalog scenarios, not to file::function")
        return FunctionTarget(str(Path(file).resolve()), function)
    if text == FootprintTarget.name:  # TensorFlow's own, after import: its device the param
        if set(bound) - {"device"} or bound.get("device", "CPU") not in ("CPU", "GPU"):
            raise BadInput("footprint takes one param, device=CPU or device=GPU")
        return FootprintTarget(bound)
    try:
        scenarios.get(text).bind(bound)
    except scenarios.ParamError as e:
        hint = ""
        if text.endswith(".py") or Path(text).exists():
            hint = f"; to measure a function of your own file, name it: {text}::function"
        raise BadInput(f"{e}{hint}") from None
    return ScenarioTarget(text, bound)


def step(text: str, given: list[str]) -> Step:
    """A target that is a step (`explain` reads one step's growth): not the footprint."""
    from tfbench.targets import FootprintTarget

    found = target(text, given)
    if isinstance(found, FootprintTarget):
        raise BadInput(
            "footprint is TensorFlow's own memory, no step: `tfbench measure footprint`"
        )
    return found


def measuring(args: argparse.Namespace) -> Limits:
    """The measuring options, checked."""
    from tfbench.measure.steps import MAX_ITERATIONS
    from tfbench.targets import Limits

    for name in ("iterations", "warmup", "budget_mib", "timeout"):
        value, least = getattr(args, name), 0 if name == "warmup" else 1
        if value is not None and value < least:
            raise BadInput(f"--{name.replace('_', '-')} must be at least {least}, got {value}")
    if (args.iterations or 0) + (args.warmup or 0) > MAX_ITERATIONS:
        raise BadInput(f"--iterations + --warmup must be at most {MAX_ITERATIONS}")
    return Limits(
        iterations=args.iterations,
        warmup=args.warmup,
        budget_bytes=args.budget_mib * MiB if args.budget_mib else None,
        timeout_s=args.timeout or 600,
    )


def python(args: argparse.Namespace) -> str:
    """--python: a CPython version tfbench locks releases for."""
    from tfbench.history.pythons import CANDIDATES

    if args.python not in CANDIDATES:
        raise BadInput(f"--python {args.python!r}: choose from {', '.join(CANDIDATES)}")
    return args.python


def flavour(args: argparse.Namespace) -> str:
    if args.flavour not in FLAVOURS:
        raise BadInput(f"--flavour {args.flavour!r}: choose from {', '.join(FLAVOURS)}")
    return args.flavour


def tracked() -> list[str]:
    """The tracked releases, oldest first; releases.txt that cannot be read is bad input."""
    from tfbench.history.releases import tracked_versions

    try:
        return tracked_versions()
    except ValueError as e:
        raise BadInput(str(e)) from None


def releases(text: str) -> list[str]:
    """--releases: all, or a comma list of tracked versions (oldest first)."""
    known = tracked()
    if text == "all":
        return known
    wanted = [v.strip().removeprefix("v") for v in text.split(",") if v.strip()]
    unknown = [v for v in wanted if v not in known]
    if unknown or not wanted:
        raise BadInput(
            f"untracked release {', '.join(unknown) or repr(text)}; "
            f"choose from all, {', '.join(known)}"
        )
    return sorted(set(wanted), key=known.index)


def release_range(ends: list[str]) -> list[str]:
    """OLD NEW (tracked, OLD older), or nothing for all: the releases from OLD to NEW."""
    known = tracked()
    ends = [v.removeprefix("v") for v in ends] or [known[0], known[-1]]
    if len(ends) != 2:
        raise BadInput("give the range as OLD NEW (two tracked releases), or nothing for all")
    unknown = [v for v in ends if v not in known]
    if unknown:
        raise BadInput(f"untracked release {', '.join(unknown)}; choose from {', '.join(known)}")
    old, new = (known.index(v) for v in ends)
    if old >= new:
        raise BadInput(
            f"the range {ends[0]} {ends[1]} is empty: OLD must be older than NEW "
            f"(tracked, oldest first: {', '.join(known)})"
        )
    return known[old : new + 1]


def config(args: argparse.Namespace) -> Path:
    path = Path(args.config)
    if not path.is_file():
        raise BadInput(f"no asv configuration at {args.config}")
    return path


def _conf_path(config: Path, key: str, default: str) -> Path:
    """A path the asv configuration names, from its directory."""
    from tfbench.history import asvconf

    try:
        return config.parent / asvconf.read(config).get(key, default)
    except (OSError, ValueError) as e:
        raise BadInput(f"{config}: {e}") from None


def results_dir(config: Path) -> Path:
    """The asv configuration's results directory."""
    return _conf_path(config, "results_dir", "results")


def history_repo(config: Path) -> Path:
    """The asv configuration's `repo`: the release history."""
    return _conf_path(config, "repo", "releases/history.git")


def machine(name: str) -> str:
    """An asv machine name, by the rule results from other machines are read with."""
    from tfbench.grammar import MACHINE

    if not MACHINE.fullmatch(name):
        raise BadInput(f"--machine {name!r}: letters, digits, '_', '.', '-' only")
    return name


def checked_records(records: list) -> list:
    """The records, unless a measuring process found the input bad (a missing function)."""
    bad = next((r for r in records if r["status"] == "bad_input"), None)
    if bad:
        raise BadInput(bad["error"])
    return records


def runner(args: argparse.Namespace, target: Target) -> Runner:
    """Measures the target in any release's environment, saying what it does."""
    from tfbench.sweep import Runner

    checked = measuring(args), flavour(args), python(args)
    return Runner(target, *checked[:2], args.env_dir, progress, python=checked[2])


def elsewhere(args: argparse.Namespace, target: Target) -> tuple[Runner, str] | None:
    """Where TensorFlow is not importable here (README command 1 installs tfbench alone):
    the runner of the newest tracked release that `--python` runs, in its environment (made
    from its lock and cached, as `--releases` makes it), said in one line; None where
    TensorFlow is importable. BadInput where no release runs on that Python."""
    import importlib.util

    from tfbench.history import envs, releases

    if importlib.util.find_spec("tensorflow") is not None:
        return None
    checked = python(args)
    found = [v for v in tracked() if releases.supports(v, checked)]
    try:
        envs.interpreter(checked)
    except envs.EnvError as e:
        found, why = [], str(e)
    else:
        why = f"no tracked release is locked for Python {checked}"
    if not found:
        raise BadInput(
            f"TensorFlow is not installed here and {why}; install it here "
            "(`pip install -e '.[tf]'`) or name a Python with --python"
        )
    progress(
        f"TensorFlow is not installed here: measuring on {found[-1]}, the newest tracked "
        f"release, in its environment (Python {checked}; `pip install -e '.[tf]'` measures "
        "here, --releases on others)"
    )
    return runner(args, target), found[-1]
