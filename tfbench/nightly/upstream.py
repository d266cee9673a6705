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

from tfbench import targets
from tfbench.nightly import policy, repro
from tfbench.nightly.builds import parse_time
from tfbench.nightly.run import pin_changes
from tfbench.units import KiB, MiB

TEMPLATE = "https://github.com/tensorflow/tensorflow/issues/new?template=00-bug-issue.yml"
UNITS = {"time": "s", "leak": "verdict"}


def slug(target: targets.Target, metric: str) -> str:
    """A folder name for a target and metric: loop-python-matmul-size-256-retained."""
    if isinstance(target, targets.FunctionTarget):
        name = f"{Path(target.file).stem}-{target.function}"
    else:
        name = "-".join([target.scenario, *(f"{k}-{v}" for k, v in target.params.items())])
    return re.sub(r"[^a-z0-9]+", "-", f"{name}-{metric}".lower()).strip("-")


def _value(metric: str, value: float | None) -> str:
    return policy.figure_text(metric, value, per="/call")


def _interval(metric: str, readings: list[dict]) -> str:
    """The readings' spread, and each one's own 95% interval where the figure has one."""
    values = [v for r in readings if (v := policy.figure(metric, r)) is not None]
    if not values:
        return "n/a"
    low, high = (_value(metric, v) for v in (min(values), max(values)))
    n = len(values)
    spread = f"{n} readings alike" if low == high else f"range {low} to {high}, {n} readings"
    text = f"{_value(metric, statistics.median(values))} ({spread})"
    key = {"retained": "retained_interval", "growth": "growth_interval"}.get(metric)
    if key and readings[0].get(key):
        low, high = readings[0][key]
        text += f", 95% interval of one [{_value(metric, low)}, {_value(metric, high)}]"
    return text


def figures_table(data: dict[str, Any]) -> list[str]:
    """The figure per release and per nightly, oldest first, as Markdown rows."""
    metric = data["metric"]
    rows = ["| build | GIT_VERSION | figure |", "|---|---|---|"]
    for release, readings in data.get("releases", {}).items():
        rows.append(f"| tensorflow-cpu {release} (release) | | {_interval(metric, readings)} |")
    commits = {b["version"]: b.get("git_version") or "" for b in data["builds"]}
    for b in data["builds"]:
        readings = data["readings"].get(b["version"])
        if readings:
            mark = {data["last_good"]: " (last good)", data["first_bad"]: " (first bad)"}
            rows.append(
                f"| tf-nightly {b['version']}{mark.get(b['version'], '')} | "
                f"`{commits[b['version']]}` | {_interval(metric, readings)} |"
            )
    rows += [f"| tf-nightly {v} | | skipped: {why} |" for v, why in data["broken"].items()]
    return rows


def issue(data: dict[str, Any], code: str) -> str:
    """issue.md: TensorFlow's bug template, filled from the bisection (the environment its
    machine had, not the one that renders it)."""
    environment = data["environment"]
    metric, bad = data["metric"], data["first_bad"]
    old, new = data["old"], data["new"]
    nightly = f"Yes, tf-nightly {bad} (first bad build)" if bad else "Yes (see the table)"
    window = _window(data)
    body = [
        f"<!-- filed with {TEMPLATE} -->",
        f"# {_title(data)}",
        "### Issue type\n\nPerformance",
        f"### Have you reproduced the bug with TensorFlow Nightly?\n\n{nightly}",
        "### Source\n\nbinary",
        f"### TensorFlow version\n\n{old} (as expected), {new} (changed); tf-nightly {window}",
        "### Custom code\n\nYes (standalone, below)",
        f"### OS platform and distribution\n\n{environment['os']}",
        f"### Python version\n\n{environment['python']}",
        f"### CPU\n\n{environment['cpu']}",
        "### Current behavior?\n\n" + _behaviour(data, new, "on"),
        "### Expected behavior?\n\n" + _behaviour(data, old, "as on"),
        "### Standalone code to reproduce the issue\n\n"
        f"`repro.py` (TensorFlow, psutil and the standard library only):\n\n```python\n{code}```",
        "### Relevant log output\n\nThe figure per release and per nightly build "
        f"({_what(metric)}; each reading in a fresh process). tf-nightly is another build "
        "than tensorflow-cpu (GPU support included): compare builds with builds, releases "
        "with releases.",
        "\n".join(figures_table(data)),
        f"Nightly window: {window}. {_conclusion(data)}",
        *_printed(data),
        *_packages(data),
    ]
    return "\n\n".join(body) + "\n"


def _title(data: dict[str, Any]) -> str:
    """The change in a line: the figure on each release."""
    metric, old, new = data["metric"], data["old"], data["new"]
    values = [policy.median(metric, data.get("releases", {}).get(v, [])) for v in (old, new)]
    subject = _what(metric)
    if not metric.startswith("footprint"):
        target = targets.from_json(data["target"])
        params = getattr(target, "params", {})
        named = ", ".join(f"{k}={v}" for k, v in params.items())
        subject += f" (`{target.name}({named})`)" if named else f" (`{target.name}`)"
    a, b = (_value(metric, v) for v in values)
    return f"{subject[0].upper()}{subject[1:]}: {a} on {old}, {b} on {new}"


def _printed(data: dict[str, Any]) -> list[str]:
    """What repro.py printed in the builds' environments."""
    return [
        f"`python repro.py` with tf-nightly {version}:\n\n```\n{text}\n```"
        for version, text in (data.get("repro") or {}).items()
    ]


def _packages(data: dict[str, Any]) -> list[str]:
    """What the two builds' environments held: what differs, and the later one in full."""
    known = {v: p for v, p in (data.get("packages") or {}).items() if p}
    if not known:
        return ["Packages: not recorded (the builds' environments were gone)."]
    versions = list(known)
    text = []
    if len(versions) == 2:
        changes = "; ".join(pin_changes(*known.values())) or "none"
        text.append(
            f"Packages that differ between the tf-nightly {versions[0]} and {versions[1]} "
            f"environments (each resolved as PyPI stood at its upload): {changes}."
        )
    listed = "\n".join(known[versions[-1]])
    text.append(
        f"<details><summary>Packages of the tf-nightly {versions[-1]} environment</summary>"
        f"\n\n```\n{listed}\n```\n\n</details>"
    )
    return text


def _window(data: dict[str, Any]) -> str:
    first, last = data["builds"][0]["version"], data["builds"][-1]["version"]
    return f"{first} to {last} ({len(data['builds'])} builds)"


def _what(metric: str) -> str:
    return {
        "retained": "bytes the heap keeps per call: glibc's heap in use, its slope over the "
        "calls after warm-up",
        "heap-peak": "the heap's high-water mark over the run, above its start",
        "growth": "RSS growth per call",
        "peak": "RSS peak over the run, above its start",
        "time": "wall time per call",
        "leak": "whether memory grows without bound over the calls",
        "footprint-rss": "RSS of a fresh process after `import tensorflow` and one op",
        "footprint-heap": "heap in use of a fresh process after `import tensorflow` and one op",
    }[metric]


def _behaviour(data: dict[str, Any], release: str, word: str) -> str:
    readings = data.get("releases", {}).get(release, [])
    return f"{word.capitalize()} {release}: {_interval(data['metric'], readings)}."


def _conclusion(data: dict[str, Any]) -> str:
    kind = data["kind"]
    if kind == "step":
        return (
            f"Last good build {data['last_good']}, first bad {data['first_bad']}: a change "
            f"made after the first, no later than the second: {data['compare_url']}"
        )
    if kind == "drift":
        return "The figure drifts over many builds: no single build holds the change."
    if kind == "none":
        deps = "; ".join(data.get("dependencies") or []) or "none"
        return (
            "No nightly in the window shows the change: it is on the release branch (a "
            f"cherry-pick) or in a dependency. Locked versions that differ: {deps}."
        )
    return "The bisection could not decide a build (see the table)."


def environment() -> dict[str, str]:
    """OS, Python and CPU of this machine: kept with a bisection it runs."""
    return {
        "os": f"{platform.system()} {platform.release()} ({platform.machine()})",
        "python": platform.python_version(),
        "cpu": _cpu(),
    }


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def plot(data: dict[str, Any], path: Path) -> Path | str:
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
    metric = data["metric"]
    read = [b for b in data["builds"] if b["version"] in data["readings"]]
    values = [policy.median(metric, data["readings"][b["version"]]) for b in read]
    releases = {v: policy.median(metric, r) for v, r in data.get("releases", {}).items()}
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
    axes.set_title(f"{targets.from_json(data['target']).name}: {_what(metric)}", fontsize=9)
    axes.legend(fontsize=8)
    axes.xaxis_date()
    figure.autofmt_xdate()
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return path


def _axis(metric: str, values: list[float]) -> tuple[float, str]:
    """The scale and unit of the plot's axis: ms, the verdict, or KiB / MiB by magnitude."""
    if metric == "time":
        return 1e3, "ms"
    if metric == "leak":
        return 1.0, ""
    big = max(map(abs, values), default=0.0) >= 10 * MiB
    return (1 / MiB, "MiB") if big else (1 / KiB, "KiB")


def write(data: dict[str, Any], folder: Path) -> dict[str, Path | str]:
    """issue.md, repro.py and plot.png into the folder (bisect.json is kept by its run)."""
    folder.mkdir(parents=True, exist_ok=True)
    code = repro.of(data)
    (folder / "repro.py").write_text(code)
    (folder / "issue.md").write_text(issue(data, code))
    return {
        "issue": folder / "issue.md",
        "repro": folder / "repro.py",
        "plot": plot(data, folder / "plot.png"),
    }
