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
from tfbench.nightly.run import pin_changes

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
    text = f"{_value(metric, statistics.median(values))} (range {_value(metric, min(values))}"
    text += f" to {_value(metric, max(values))}, {len(values)} readings)"
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


def issue(data: dict[str, Any], environment: dict[str, str], code: str) -> str:
    """issue.md: TensorFlow's bug template, filled from the bisection."""
    target = targets.from_json(data["target"])
    metric, bad = data["metric"], data["first_bad"]
    old, new = data["old"], data["new"]
    nightly = f"Yes, tf-nightly {bad} (first bad build)" if bad else "Yes (see the table)"
    window = _window(data)
    body = [
        f"<!-- filed with {TEMPLATE} -->",
        f"# {metric} of `{target.name}` changes between TensorFlow {old} and {new}",
        "",
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
        f"({_what(metric)}; each reading in a fresh process):\n",
        *figures_table(data),
        "",
        f"Nightly window: {window}. {_conclusion(data)}",
        "",
        *_packages(data),
    ]
    return "\n\n".join(body[:3]) + "\n\n" + "\n\n".join(body[3:]) + "\n"


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
    """OS, Python and CPU of this machine."""
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
    """plot.png: the figure over the releases and the nightly builds read; or why not
    (matplotlib, the `upstream` extra, is not installed)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed (pip install 'tfbench[upstream]')"
    metric = data["metric"]
    scale, unit = (1e3, "ms") if metric == "time" else (1 / 1024, "KiB")
    unit = "" if metric == "leak" else unit
    labels, values = [], []
    for release, readings in data.get("releases", {}).items():
        labels.append(release)
        values.append(policy.median(metric, readings))
    for b in data["builds"]:
        if b["version"] in data["readings"]:
            labels.append(b["version"].split(".dev")[-1])
            values.append(policy.median(metric, data["readings"][b["version"]]))
    figure, axes = plt.subplots(figsize=(10, 4))
    xs = list(range(len(labels)))
    # NaN leaves a gap where a build has no reading.
    axes.plot(xs, [float("nan") if v is None else v * scale for v in values], marker="o")
    axes.set_xticks(xs, labels, rotation=60, fontsize=7)
    axes.set_ylabel(f"{metric} ({unit})" if unit else metric)
    axes.set_title(f"{targets.from_json(data['target']).name}: {metric}")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return path


def write(data: dict[str, Any], folder: Path, env: dict[str, str]) -> dict[str, Path | str]:
    """issue.md, repro.py and plot.png into the folder (bisect.json is kept by its run)."""
    folder.mkdir(parents=True, exist_ok=True)
    target = targets.from_json(data["target"])
    limits = data.get("limits") or {}
    code = repro.source(target, limits.get("iterations") or 200, limits.get("warmup") or 10)
    (folder / "repro.py").write_text(code)
    (folder / "issue.md").write_text(issue(data, env, code))
    return {
        "issue": folder / "issue.md",
        "repro": folder / "repro.py",
        "plot": plot(data, folder / "plot.png"),
    }
