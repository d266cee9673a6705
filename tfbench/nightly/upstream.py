"""A report ready to file with TensorFlow, from a kept nightly bisection
(results/upstream/<machine>/<slug>/): issue.md in the shape of TensorFlow's bug template,
repro.py (standalone), plot.png (the figure over releases and nightlies).
"""

from __future__ import annotations

import platform
import re
import statistics
from pathlib import Path
from typing import Any

from tfbench import cpu, escape, figures, targets
from tfbench.keptfiles.bisection import Bisection
from tfbench.nightly import policy, repro
from tfbench.nightly.builds import parse_time, pin_changes
from tfbench.pairs.verdict import compared_line
from tfbench.units import KiB, MiB

TEMPLATE = "https://github.com/tensorflow/tensorflow/issues/new?template=00-bug-issue.yml"


def slug(target: targets.Target, metric: str) -> str:
    """A folder name for a target and metric: loop-python-matmul-size-256-retained."""
    if isinstance(target, targets.FunctionTarget):
        name = f"{Path(target.file).stem}-{target.function}"
    else:
        name = "-".join([target.name, *(f"{k}-{v}" for k, v in target.params.items())])
    return re.sub(r"[^a-z0-9]+", "-", f"{name}-{metric}".lower()).strip("-")


def _value(metric: str, value: float | None) -> str:
    return policy.figure_text(metric, value, per="call")


def _interval(metric: str, readings: list[dict[str, Any]]) -> str:
    """The readings' spread, and each one's own 95% interval where the figure has one."""
    values = [v for r in readings if (v := policy.figure(metric, r)) is not None]
    if not values:
        return "n/a"
    low, high = (_value(metric, v) for v in (min(values), max(values)))
    n = len(values)
    spread = f"{n} readings alike" if low == high else f"range {low} to {high}, {n} readings"
    text = f"{_value(metric, statistics.median(values))} ({spread})"
    key = figures.named(metric).interval
    if key and readings[0].get(key):
        low, high = readings[0][key]
        text += f", 95% interval of one [{_value(metric, low)}, {_value(metric, high)}]"
    return text


def figures_table(data: Bisection) -> list[str]:
    """The figure per release and per nightly, oldest first, as Markdown rows."""
    metric, md = data["metric"], escape.markdown
    rows = ["| build | GIT_VERSION | figure |", "|---|---|---|"]
    for release, readings in data["releases"].items():
        rows.append(
            f"| tensorflow-cpu {md(release)} (release) | | {_interval(metric, readings)} |"
        )
    for b in data["builds"]:
        read = data["readings"].get(b["version"])
        if read:
            mark = {data["last_good"]: " (last good)", data["first_bad"]: " (first bad)"}
            rows.append(
                f"| tf-nightly {md(b['version'])}{mark.get(b['version'], '')} | "
                f"{escape.code(b['git_version'] or '')} | {_interval(metric, read)} |"
            )
    rows += [f"| tf-nightly {md(v)} | | skipped: {md(why)} |" for v, why in data["broken"].items()]
    return rows


def _paired(data: Bisection) -> list[str]:
    """A time bisection's comparisons: each two builds read in pairs of fresh processes,
    alternating, their ratio's 99% interval (tfbench.pairs)."""
    if not data["times"]:
        return []
    lines = [f"- {escape.markdown(compared_line(c))}" for c in data["times"]]
    on = escape.markdown(cpu.named(data["environment"]["cpu"]))
    head = f"Each two builds compared, read in pairs of fresh processes on {on} (a time change "
    head += "holds for the CPU it was read on):"
    return [head + "\n\n" + "\n".join(lines)]


def _elsewhere(data: Bisection) -> str:
    """How the kept gates read the time point on each CPU: a time change holds for the CPU
    it was read on."""
    if not data["elsewhere"]:
        return ""
    told, md = [], escape.markdown
    for e in data["elsewhere"]:
        figure = "" if e["ratio"] is None else f" x{e['ratio']:.3f}"
        if e["low"] is not None and e["high"] is not None:
            figure += f" [{e['low']:.3f}, {e['high']:.3f}]"
        told.append(f"- {md(e['cpu'])}: {md(e['answer'])}{figure}")
    head = "\n\nThe release gate read this time point, new over old, on each CPU (a time "
    return head + "change holds for the CPU it was read on):\n\n" + "\n".join(told)


def issue(data: Bisection, code: str) -> str:
    """issue.md: TensorFlow's bug template, filled from the bisection (the environment its
    machine had, not the one that renders it): every value of the kept file escaped, its
    one link the compare URL of its form (tfbench.grammar)."""
    environment, md = data["environment"], escape.markdown
    metric, bad = data["metric"], data["first_bad"]
    old, new = md(data["old"]), md(data["new"])
    nightly = f"Yes, tf-nightly {md(bad)} (first bad build)" if bad else "Yes (see the table)"
    window = _window(data)
    body = [
        f"<!-- filed with {TEMPLATE} -->",
        f"# {_title(data)}",
        "### Issue type\n\nPerformance",
        f"### Have you reproduced the bug with TensorFlow Nightly?\n\n{nightly}",
        "### Source\n\nbinary",
        f"### TensorFlow version\n\n{old} (as expected), {new} (changed); tf-nightly {window}",
        "### Custom code\n\nYes (standalone, below)",
        f"### OS platform and distribution\n\n{md(environment['os'])}",
        f"### Python version\n\n{md(environment['python'])}",
        f"### CPU\n\n{md(cpu.named(environment['cpu']))}" + _elsewhere(data),
        "### Current behavior?\n\n" + _behaviour(data, data["new"], "on"),
        "### Expected behavior?\n\n" + _behaviour(data, data["old"], "as on"),
        "### Standalone code to reproduce the issue\n\n"
        "`repro.py` (TensorFlow, psutil and the standard library only):\n\n"
        + escape.block(code, "python"),
        "### Relevant log output\n\nThe figure per release and per nightly build "
        f"({_what(metric)}; each reading in a fresh process). tf-nightly is another build "
        "than tensorflow-cpu (GPU support included): compare builds with builds, releases "
        "with releases.",
        "\n".join(figures_table(data)),
        f"Nightly window: {window}. {_conclusion(data)}",
        *_paired(data),
        *_printed(data),
        *_packages(data),
    ]
    return "\n\n".join(body) + "\n"


def _title(data: Bisection) -> str:
    """The change in a line: the figure on each release."""
    metric, old, new = data["metric"], data["old"], data["new"]
    values = [policy.median(metric, data["releases"].get(v, [])) for v in (old, new)]
    subject = _what(metric)
    if figures.named(metric).kind != figures.FOOTPRINT:
        subject += f" ({escape.code(_target_name(data))})"
    a, b = (_value(metric, v) for v in values)
    md = escape.markdown
    return f"{subject[0].upper()}{subject[1:]}: {a} on {md(old)}, {b} on {md(new)}"


def _target_name(data: Bisection) -> str:
    """The kept target as the title names it: scenario(params), or file::function."""
    target = data["target"]
    if "scenario" not in target:
        return f"{target['file']}::{target['function']}"
    named = ", ".join(f"{k}={v}" for k, v in target["params"].items())
    return f"{target['scenario']}({named})" if named else target["scenario"]


def _printed(data: Bisection) -> list[str]:
    """What repro.py printed in the builds' environments."""
    return [
        f"`python repro.py` with tf-nightly {escape.markdown(version)}:\n\n{escape.block(text)}"
        for version, text in data["repro"].items()
    ]


def _packages(data: Bisection) -> list[str]:
    """What the two builds' environments held: what differs, and the later one in full."""
    known = {v: p for v, p in data["packages"].items() if p}
    if not known:
        return ["Packages: not recorded (the builds' environments were gone)."]
    versions, md = list(known), escape.markdown
    text = []
    if len(versions) == 2:
        changes = "; ".join(pin_changes(*known.values())) or "none"
        text.append(
            f"Packages that differ between the tf-nightly {md(versions[0])} and "
            f"{md(versions[1])} environments (each resolved as PyPI stood at its upload): "
            f"{md(changes)}."
        )
    listed = "\n".join(known[versions[-1]])
    text.append(
        f"<details><summary>Packages of the tf-nightly {md(versions[-1])} environment</summary>"
        f"\n\n{escape.block(listed)}\n\n</details>"
    )
    return text


def _window(data: Bisection) -> str:
    first, last = data["builds"][0]["version"], data["builds"][-1]["version"]
    return f"{escape.markdown(first)} to {escape.markdown(last)} ({len(data['builds'])} builds)"


def _what(metric: str) -> str:
    return figures.named(metric).what


def _behaviour(data: Bisection, release: str, word: str) -> str:
    readings = data["releases"].get(release, [])
    return (
        f"{word.capitalize()} {escape.markdown(release)}: {_interval(data['metric'], readings)}."
    )


def _conclusion(data: Bisection) -> str:
    kind, md = data["kind"], escape.markdown
    if kind == "step":
        url = data["compare_url"]  # of its form: the one link, github.com/tensorflow's
        return (
            f"Last good build {md(data['last_good'] or '')}, first bad "
            f"{md(data['first_bad'] or '')}: a change made after the first, no later than the "
            f"second: {url or 'commits unknown (a GIT_VERSION is missing)'}"
        )
    if kind == "drift":
        return "The figure drifts over many builds: no single build holds the change."
    if kind == "none":
        deps = md("; ".join(data["dependencies"]) or "none")
        return (
            "No nightly in the window shows the change: it is on the release branch (a "
            f"cherry-pick) or in a dependency. Locked versions that differ: {deps}."
        )
    return "The bisection could not decide a build (see the table)."


def environment() -> dict[str, Any]:
    """OS, Python and CPU (its identity: tfbench.cpu) of this machine: kept with a bisection
    or a nightly build it reads."""
    return {
        "os": f"{platform.system()} {platform.release()} ({platform.machine()})",
        "python": platform.python_version(),
        "cpu": cpu.identity(),
    }


def plot(data: Bisection, path: Path) -> Path | str:
    """plot.png: the figure of each nightly build read, over its upload date, the releases'
    as levels beside (another build), the last good and first bad shaded; or why not
    (matplotlib, the `upstream` extra, is not installed)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.dates import date2num
    except ImportError:
        return "matplotlib is not installed (pip install 'tfbench[upstream]')"
    with plt.rc_context({"text.parse_math": False}):  # every label literal: `$` is a dollar
        _draw(plt, date2num, data, path)
    return path


def _draw(plt: Any, date2num: Any, data: Bisection, path: Path) -> None:
    metric = data["metric"]
    read = [b for b in data["builds"] if b["version"] in data["readings"]]
    values = [policy.median(metric, data["readings"][b["version"]]) for b in read]
    releases = {v: policy.median(metric, r) for v, r in data["releases"].items()}
    scale, unit = _axis(metric, [v for v in (*values, *releases.values()) if v is not None])
    uploaded = {b["version"]: date2num(parse_time(b["uploaded"])) for b in data["builds"]}
    figure, axes = plt.subplots(figsize=(10, 4))
    axes.plot(
        [uploaded[b["version"]] for b in read],
        [float("nan") if v is None else v * scale for v in values],
        marker="o",
        label="tf-nightly",
    )
    for k, (release, value) in enumerate(releases.items()):
        if value is not None:
            axes.axhline(
                value * scale, color=f"C{k + 1}", linestyle="--", label=f"tensorflow-cpu {release}"
            )
    if data["last_good"] and data["first_bad"]:
        axes.axvspan(
            uploaded[data["last_good"]],
            uploaded[data["first_bad"]],
            color="C3",
            alpha=0.3,
            label=f"first bad: {data['first_bad']}",
        )
    axes.set_ylabel(f"{metric} ({unit})" if unit else metric)
    axes.set_title(f"{_target_name(data)}: {_what(metric)}", fontsize=9)
    axes.legend(fontsize=8)
    axes.xaxis_date()
    figure.autofmt_xdate()
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


def _axis(metric: str, values: list[float]) -> tuple[float, str]:
    """The scale and unit of the plot's axis: ms, the verdict, or KiB / MiB by magnitude."""
    unit = figures.named(metric).unit
    if unit == "seconds":
        return 1e3, "ms"
    if not unit.startswith("bytes"):
        return 1.0, ""
    big = max(map(abs, values), default=0.0) >= 10 * MiB
    return (1 / MiB, "MiB") if big else (1 / KiB, "KiB")


def write(data: Bisection, target: targets.Target, folder: Path) -> dict[str, Path | str]:
    """issue.md, repro.py (of `target`, the command line's) and plot.png into the folder
    (bisect.json is kept by its run)."""
    folder.mkdir(parents=True, exist_ok=True)
    code = repro.of(data, target)
    (folder / "repro.py").write_text(code)
    (folder / "issue.md").write_text(issue(data, code))
    return {
        "issue": folder / "issue.md",
        "repro": folder / "repro.py",
        "plot": plot(data, folder / "plot.png"),
    }


def render_again(data: Bisection, folder: Path) -> dict[str, Path | str] | None:
    """issue.md, repro.py and plot.png of a kept bisection of a catalog scenario, written
    again from its checked fields; None for a user's step (its code is on the machine that
    measured it: `tfbench upstream FILE::FUNCTION` there)."""
    if "scenario" not in data["target"]:
        return None
    return write(data, targets.from_json(data["target"]), folder)
