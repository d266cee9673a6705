"""The tracked TensorFlow releases, their locks, and what the package index has.

`releases/releases.txt` lists the tracked versions, PEP 440 (2.21.0, 2.22.0rc0), oldest
first. `lock_release` resolves one into pinned requirement files (one per wheel flavour)
under `releases/locks/VERSION/`, as PyPI stood the day after the release, with uv's resolver
(`uv pip compile --exclude-newer`, for CPython 3.11 on manylinux_2_28 x86_64: the same pins
on any machine); tfbench.history.repo turns the locks into asv's history repository.
`newer` says what the index has that the list does not track.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import subprocess
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from packaging.version import InvalidVersion, Version

from tfbench.history import pythons
from tfbench.history.envsync import lock_file_name, normalize
from tfbench.paths import ROOT

RELEASES_DIR = ROOT / "releases"
RELEASES_FILE = RELEASES_DIR / "releases.txt"
LOCKS_DIR = RELEASES_DIR / "locks"

# Wheel flavour -> what is resolved. psutil is the harness's own runtime dependency.
FLAVOURS = {
    "cpu": "tensorflow-cpu=={version}",
    "gpu": "tensorflow[and-cuda]=={version}",
}
HARNESS_REQUIREMENTS = ["psutil"]
TARGET = "CPython 3.11, Linux x86_64"
PYTHON_VERSION, PLATFORM = pythons.DEFAULT, "x86_64-manylinux_2_28"
WHEEL = re.compile(r"-cp311-cp311-manylinux[_0-9a-z]*x86_64\.whl$")  # TARGET's wheels
INDEX = "https://pypi.org/simple"
SIMPLE_INDEX = INDEX + "/{name}/"
INDEX_TIMEOUT_S = 30


class IndexUnreachable(OSError):
    """The package index did not answer (the URL is in the message)."""


@dataclass(frozen=True)
class Lock:
    version: str
    released: str  # ISO 8601 UTC, e.g. 2026-03-06T17:26:07Z
    files: dict[str, bytes]  # file name in the commit -> bytes


def parse(text: str) -> Version:
    """A release or a release candidate as PEP 440 writes it (2.21.0, 2.22.0rc0); ValueError
    for anything else (a dev, post or local version, a non-canonical spelling)."""
    try:
        version = Version(text)
    except InvalidVersion:
        version = None
    if version is None or str(version) != text or len(version.release) != 3:
        raise ValueError(f"{text!r} is not a version like 2.21.0 or 2.22.0rc0")
    if version.is_devrelease or version.is_postrelease or version.local:
        raise ValueError(f"{text!r}: only releases and release candidates are tracked")
    return version


def candidate(version: str) -> bool:
    """Whether a tracked version (or tag) is a pre-release, e.g. a release candidate."""
    return parse(version.removeprefix("v")).is_prerelease


def label(tag: str) -> str:
    """A release as the report names it: a candidate says so."""
    return f"{tag} (candidate)" if candidate(tag) else tag


def newest_pair(tags: list[str]) -> tuple[str, str] | None:
    """The pair a newest-release comparison is about (tags or versions, oldest first): the
    newest release against a newer candidate where one is tracked, else the newest release
    against the release before it (the candidates between them left out); None with fewer
    than two."""
    finals = [t for t in tags if not candidate(t)]
    if tags and candidate(tags[-1]):
        if finals:
            return finals[-1], tags[-1]
        return (tags[-2], tags[-1]) if len(tags) > 1 else None
    return (finals[-2], finals[-1]) if len(finals) > 1 else None


def tracked_versions(path: Path = RELEASES_FILE) -> list[str]:
    """Versions listed in releases.txt, oldest first (PEP 440's order, checked)."""
    versions: list[str] = []
    for n, line in enumerate(path.read_text().splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        try:
            version = parse(line)
        except ValueError as e:
            raise ValueError(f"{path}:{n}: {e}") from None
        if versions and version <= Version(versions[-1]):
            raise ValueError(
                f"{path}:{n}: {line} is not newer than {versions[-1]} above it "
                "(oldest first, in PEP 440's order: a candidate before its release)"
            )
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


def index_files(project: str) -> list[dict]:
    """The files the index lists for a project (PEP 691 JSON): filename, upload-time, ..."""
    url = SIMPLE_INDEX.format(name=project)
    request = urllib.request.Request(
        url, headers={"Accept": "application/vnd.pypi.simple.v1+json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=INDEX_TIMEOUT_S) as response:
            return json.load(response)["files"]
    except (OSError, ValueError, KeyError) as e:
        raise IndexUnreachable(f"{url}: {e}") from e


def _stamp(upload_time: str) -> str:
    stamp = dt.datetime.fromisoformat(upload_time.replace("Z", "+00:00"))
    return stamp.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def release_date(version: str) -> str:
    """Upload time of the first `tensorflow` file of this version on PyPI."""
    times = [
        f["upload-time"]
        for f in index_files("tensorflow")
        if f["filename"].startswith(f"tensorflow-{version}-") and f.get("upload-time")
    ]
    if not times:
        raise LookupError(f"PyPI lists no tensorflow {version} files")
    return _stamp(min(times))


def available(files: list[dict]) -> dict[str, str]:
    """Version -> first upload time, of the versions with a TARGET wheel among `files` (the
    index's `tensorflow-cpu` files)."""
    found: dict[str, str] = {}
    for f in files:
        name = f.get("filename", "")
        if not WHEEL.search(name) or not f.get("upload-time"):
            continue
        try:
            version = str(Version(name.split("-")[1]))
        except (IndexError, InvalidVersion):
            continue
        found[version] = min(found.get(version, f["upload-time"]), f["upload-time"])
    return {v: _stamp(t) for v, t in found.items()}


@dataclass(frozen=True)
class New:
    version: str
    kind: str  # release | candidate
    uploaded: str  # ISO 8601 UTC


def newer(tracked: list[str], index: dict[str, str], pre: bool = False) -> list[New]:
    """What the index has that is not tracked: the newest patch of each minor newer than
    every tracked release's; with `pre`, the newest candidate newer than the index's newest
    release, unless tracked. Oldest first."""
    finals = sorted(Version(v) for v in index if not Version(v).is_prerelease)
    known = {Version(v) for v in tracked}
    newest_minor = max(((v.major, v.minor) for v in known if not v.is_prerelease), default=None)
    latest: dict[tuple[int, int], Version] = {}
    for v in finals:
        if newest_minor is None or (v.major, v.minor) > newest_minor:
            latest[(v.major, v.minor)] = v
    found = [New(str(v), "release", index[str(v)]) for v in latest.values() if v not in known]
    if pre:
        newest = finals[-1] if finals else None
        candidates = [Version(v) for v in index if Version(v).is_prerelease]
        ahead = [v for v in candidates if newest is None or v > newest]
        if ahead and max(ahead) not in known:
            found.append(New(str(max(ahead)), "candidate", index[str(max(ahead))]))
    return sorted(found, key=lambda n: Version(n.version))


def uv() -> str:
    """The uv binary (the `uv` distribution ships it)."""
    from uv import find_uv_bin

    return find_uv_bin()


def resolve(
    requirements: list[str], as_of: str, python: str = PYTHON_VERSION
) -> tuple[list[str], list[str]]:
    """Exact pins for `requirements` (name==version, sorted), resolved by uv for CPython
    `python` on Linux x86_64 from what PyPI held at `as_of` (the set a user got then, and
    the same on every re-lock), and uv's warnings (an extra the release does not have)."""
    command = [
        uv(), "pip", "compile", "-", "--no-header", "--no-annotate", "--no-config",
        "--no-python-downloads",
        "--python-version", python, "--python-platform", PLATFORM,
        "--index-url", INDEX, "--exclude-newer", as_of,
    ]  # fmt: skip
    # Only uv's own settings, and the index alone: find-links and extra indexes carry no
    # upload times, so the cut-off would not apply to them.
    run = subprocess.run(
        command, input="\n".join(requirements) + "\n", capture_output=True, text=True
    )
    if run.returncode != 0:
        raise RuntimeError(f"uv could not resolve {requirements}:\n{run.stderr.strip()}")
    pins = []
    for line in run.stdout.splitlines():
        name, sep, version = line.split("#", 1)[0].strip().partition("==")
        if sep:
            pins.append(f"{normalize(name.split('[')[0])}=={version.strip()}")
    warnings = [ln for ln in run.stderr.splitlines() if ln.startswith("warning:")]
    return sorted(pins), warnings


def uv_cause(error: str) -> str:
    """The first reason in uv's resolution error, on one line: uv wraps its message at the
    terminal's width (COLUMNS), and a lock must not depend on the terminal."""
    text = " ".join(line.strip() for line in error.splitlines())
    return text.split("cause:", 1)[-1].split(", we can conclude")[0].strip()


def lock_release(version: str, locks_dir: Path = LOCKS_DIR) -> Lock:
    """Resolve one release's full dependency set for every flavour and write it, for the
    history's CPython (its commit's lock) and for every other candidate Python."""
    released = release_date(version)
    _lock_files(version, released, PYTHON_VERSION, locks_dir / version)
    for python in pythons.CANDIDATES:
        if python != PYTHON_VERSION:
            lock_python(version, python, released, locks_dir)
    return read_lock(version, locks_dir)


UNSUPPORTED = "unsupported.txt"  # in a Python's lock folder: why the release has no lock


def python_folder(version: str, python: str, locks_dir: Path = LOCKS_DIR) -> Path:
    """Where a release's locks for CPython `python` are: the release's folder for the
    history's Python (its commit holds them), a folder of their own for the others (not in
    the commit: adding one changes no hash)."""
    folder = locks_dir / version
    return folder if python == PYTHON_VERSION else folder / f"py{python}"


def lock_python(
    version: str, python: str, released: str | None = None, locks_dir: Path = LOCKS_DIR
) -> bool:
    """Lock a release for CPython `python`; where it does not resolve (no wheel for that
    Python), write why in UNSUPPORTED instead. Whether it resolved."""
    folder = python_folder(version, python, locks_dir)
    folder.mkdir(parents=True, exist_ok=True)
    try:
        _lock_files(version, released or release_date(version), python, folder)
    except RuntimeError as e:
        (folder / UNSUPPORTED).write_text(
            f"# tensorflow-cpu=={version} does not resolve for CPython {python}, Linux "
            f"x86_64 ({uv_cause(str(e))})\n"
        )
        return False
    (folder / UNSUPPORTED).unlink(missing_ok=True)
    return True


def supports(version: str, python: str, locks_dir: Path = LOCKS_DIR) -> bool | None:
    """Whether a release runs on CPython `python` (by its lock); None: not locked for it."""
    folder = python_folder(version, python, locks_dir)
    if (folder / lock_file_name("cpu")).is_file():
        return True
    return False if (folder / UNSUPPORTED).is_file() else None


def _lock_files(version: str, released: str, python: str, folder: Path) -> None:
    """Every flavour's lock of a release for CPython `python`, written into `folder`
    (RuntimeError: the CPU build does not resolve)."""
    # A day's grace: the flavours' wheels are uploaded minutes to hours after `tensorflow`.
    as_of = _stamp(
        (
            dt.datetime.fromisoformat(released.replace("Z", "+00:00")) + dt.timedelta(days=1)
        ).isoformat()
    )
    target = f"CPython {python}, Linux x86_64"
    files = {}
    for flavour, spec in FLAVOURS.items():
        requirement = spec.format(version=version)
        notes = []
        try:
            pins, warnings = resolve([requirement, *HARNESS_REQUIREMENTS], as_of, python)
        except RuntimeError as e:
            if flavour != "gpu":
                raise
            # e.g. 2.14's and-cuda pins tensorrt 8.5.3.1, which PyPI has no cp311 wheel of.
            cause = uv_cause(str(e))
            notes.append(f"# note: {requirement} does not resolve ({cause})")
            requirement = f"tensorflow=={version}"
            pins, warnings = resolve([requirement, *HARNESS_REQUIREMENTS], as_of, python)
        if flavour == "gpu" and any("does not have an extra named" in w for w in warnings):
            notes.append(f"# note: tensorflow {version} has no and-cuda extra")
        if flavour == "gpu" and not any(p.startswith("nvidia-") for p in pins):
            notes.append(
                "# note: no CUDA wheels: the GPU build needs CUDA and cuDNN from the system"
            )
        header = [
            f"# tfbench lock: {requirement} and the harness ({', '.join(HARNESS_REQUIREMENTS)})"
            f" for {target}",
            f"# released: {released}",
            f"# resolved as of: {as_of} (what PyPI held then; uv pip compile --exclude-newer, "
            f"{PLATFORM})",
            *notes,
            "# generated by `tfbench releases`; do not edit by hand",
        ]
        files[lock_file_name(flavour)] = "\n".join(header + pins) + "\n"
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():  # written once every flavour resolved
        (folder / name).write_text(text)
