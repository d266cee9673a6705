"""The tracked TensorFlow releases and their locks.

`releases/releases.txt` lists the tracked versions. `lock_release` resolves each new one
into pinned requirement files (one per wheel flavour) under `releases/locks/X.Y.Z/`, as
PyPI stood the day after the release; tfbench.history.repo turns the locks into asv's
history repository.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from tfbench.history.envsync import lock_file_name, normalize

ROOT = Path(__file__).resolve().parents[2]
RELEASES_DIR = ROOT / "releases"
RELEASES_FILE = RELEASES_DIR / "releases.txt"
LOCKS_DIR = RELEASES_DIR / "locks"

# Wheel flavour -> what pip resolves. psutil is the harness's own runtime dependency.
FLAVOURS = {
    "cpu": "tensorflow-cpu=={version}",
    "gpu": "tensorflow[and-cuda]=={version}",
}
HARNESS_REQUIREMENTS = ["psutil"]
TARGET = "CPython 3.11, Linux x86_64"
INDEX = "https://pypi.org/simple"
SIMPLE_INDEX = INDEX + "/{name}/"
_PIP_SOURCES = {
    "PIP_FIND_LINKS",
    "PIP_INDEX_URL",
    "PIP_EXTRA_INDEX_URL",
    "PIP_CONSTRAINT",
    "PIP_CONFIG_FILE",
    "PIP_NO_INDEX",
}


@dataclass(frozen=True)
class Lock:
    version: str
    released: str  # ISO 8601 UTC, e.g. 2026-03-06T17:26:07Z
    files: dict[str, bytes]  # file name in the commit -> bytes


def tracked_versions(path: Path = RELEASES_FILE) -> list[str]:
    """Versions listed in releases.txt, in file order (oldest first)."""
    versions = []
    for n, line in enumerate(path.read_text().splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        if not re.fullmatch(r"\d+\.\d+\.\d+", line):
            raise ValueError(f"{path}:{n}: {line!r} is not a version like 2.21.0")
        versions.append(line)
    return versions


def read_lock(version: str, locks_dir: Path = LOCKS_DIR) -> Lock:
    folder = locks_dir / version
    files = {}
    for flavour in FLAVOURS:
        path = folder / lock_file_name(flavour)
        if not path.is_file():
            raise FileNotFoundError(f"{path} is missing: run `tfbench releases update`")
        files[path.name] = path.read_bytes()
    match = re.search(rb"^# released: (\S+)$", files[lock_file_name("cpu")], re.M)
    if not match:
        raise ValueError(f"{folder}: no '# released:' line in {lock_file_name('cpu')}")
    return Lock(version, match.group(1).decode(), files)


def release_date(version: str) -> str:
    """Upload time of the first `tensorflow` file of this version on PyPI."""
    request = urllib.request.Request(
        SIMPLE_INDEX.format(name="tensorflow"),
        headers={"Accept": "application/vnd.pypi.simple.v1+json"},
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        index = json.load(response)
    times = [
        f["upload-time"]
        for f in index["files"]
        if f["filename"].startswith(f"tensorflow-{version}-") and f.get("upload-time")
    ]
    if not times:
        raise LookupError(f"PyPI lists no tensorflow {version} files")
    stamp = dt.datetime.fromisoformat(min(times).replace("Z", "+00:00"))
    return stamp.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def resolve(requirements: list[str], as_of: str) -> tuple[list[str], dict]:
    """Resolve requirements to exact pins with pip's resolver (no install), seeing only
    what PyPI held at `as_of`: the set a user got then, and the same set on every re-lock."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        cmd = [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--dry-run",
            "--ignore-installed",
            "--quiet",
            "--report",
            str(report),
            "--index-url",
            INDEX,
            "--uploaded-prior-to",
            as_of,
            *requirements,
        ]
        # Local wheel folders and extra indexes carry no upload times, so the cut-off
        # would not apply to them: resolve against PyPI alone.
        env = {k: v for k, v in os.environ.items() if k not in _PIP_SOURCES}
        env["PIP_CONFIG_FILE"] = os.devnull
        run = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if run.returncode != 0:
            raise RuntimeError(f"pip could not resolve {requirements}:\n{run.stderr}")
        items = json.loads(report.read_text())["install"]
    metadata = {normalize(i["metadata"]["name"]): i["metadata"] for i in items}
    pins = sorted(f"{name}=={meta['version']}" for name, meta in metadata.items())
    tf_meta = metadata.get("tensorflow") or metadata["tensorflow-cpu"]
    return pins, tf_meta


def lock_release(version: str, locks_dir: Path = LOCKS_DIR) -> Lock:
    """Resolve one release's full dependency set for every flavour and write it.

    Resolution runs for this interpreter and platform (some old pins exist only as
    sdists, which rules out pip's cross-platform mode), so it must be the target's.
    """
    here = f"{platform.python_implementation()} {sys.version_info.major}.{sys.version_info.minor}"
    if f"{here}, {platform.system()} {platform.machine()}" != TARGET:
        raise RuntimeError(
            f"locks are resolved for {TARGET}; this is {here}, "
            f"{platform.system()} {platform.machine()}"
        )
    released = release_date(version)
    # A day's grace: the flavours' wheels are uploaded minutes to hours after `tensorflow`.
    as_of = (
        dt.datetime.fromisoformat(released.replace("Z", "+00:00")) + dt.timedelta(days=1)
    ).strftime("%Y-%m-%dT%H:%M:%SZ")
    folder = locks_dir / version
    folder.mkdir(parents=True, exist_ok=True)
    for flavour, spec in FLAVOURS.items():
        requirement = spec.format(version=version)
        notes = []
        try:
            pins, tf_meta = resolve([requirement, *HARNESS_REQUIREMENTS], as_of)
        except RuntimeError as e:
            if flavour != "gpu":
                raise
            # e.g. 2.14's and-cuda pins tensorrt 8.5.3.1, which PyPI has no wheel of.
            reason = [ln for ln in str(e).splitlines() if ln.startswith("ERROR")][-1:]
            notes.append(f"# note: {requirement} does not resolve ({' '.join(reason)})")
            requirement = f"tensorflow=={version}"
            pins, tf_meta = resolve([requirement, *HARNESS_REQUIREMENTS], as_of)
        if flavour == "gpu" and "and-cuda" not in tf_meta.get("provides_extra", []):
            notes.append(f"# note: tensorflow {version} has no and-cuda extra")
        if flavour == "gpu" and not any(p.startswith("nvidia-") for p in pins):
            notes.append(
                "# note: no CUDA wheels: the GPU build needs CUDA and cuDNN from the system"
            )
        header = [
            f"# tfbench lock: {requirement} and the harness ({', '.join(HARNESS_REQUIREMENTS)})"
            f" for {TARGET}",
            f"# released: {released}",
            f"# resolved as of: {as_of} (what PyPI held then; pip >= 26 --uploaded-prior-to)",
            *notes,
            "# generated by `tfbench releases update`; do not edit by hand",
        ]
        (folder / lock_file_name(flavour)).write_text("\n".join(header + pins) + "\n")
    return read_lock(version, locks_dir)
