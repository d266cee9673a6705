"""Make asv's published site work offline: its CDN scripts and styles, vendored.

asv's index.html loads jQuery, flot, Bootstrap and friends from public CDNs and shows
nothing without internet. The same files come from the npm registry as package tarballs,
fetched once into a cache (each checked against the registry's sha512 integrity pinned
here), unpacked into the site's `vendor/`, and the page is rewritten to load them from
there. The CDN tags' `integrity` hashes are of the CDNs' own minified builds, not of the npm
files: the tarball hash pinned here takes their place.
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import re
import tarfile
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import tfbench

REGISTRY = os.environ.get("TFBENCH_NPM_REGISTRY", "https://registry.npmjs.org")


@dataclass(frozen=True)
class Package:
    name: str
    version: str
    integrity: str  # the registry's dist.integrity of the tarball
    files: dict[str, str]  # path in the tarball -> the CDN URL asv's index.html loads it from
    # ("" for a file the others load, such as fonts)

    @property
    def tarball(self) -> str:
        return f"{self.name}-{self.version}.tgz"


# The versions asv 0.6.6's index.html names. npm has stupid-table-plugin only as 1.1.3 (the
# CDN serves 1.0.1): same plugin and API, the nearest version the registry has.
PACKAGES = [
    Package(
        "jquery",
        "3.3.1",
        "sha512-Ubldcmxp5np52/ENotGxlLe6aGMvmF4R8S6tZjsP6Knsaxd/xp3Zrh50cG93lR6nPXyUFwzN3ZSOQI0wRJNdGg==",
        {"dist/jquery.min.js": "https://code.jquery.com/jquery-3.3.1.min.js"},
    ),
    Package(
        "flot",
        "0.8.3",
        "sha512-xg2otcTJDvS+ERK+my4wxG/ASq90QURXtoM4LhacCq0jQW2jbyjdttbRNqU2cPykrpMvJ6b2uSp6SAgYAzj9tQ==",
        {
            f"jquery.flot{part}.js": f"https://cdnjs.cloudflare.com/ajax/libs/flot/0.8.3/jquery.flot{part}.min.js"
            for part in ("", ".time", ".selection", ".categories")
        },
    ),
    Package(
        "flot-orderbars",
        "1.0.0",
        "sha512-Jv51fvzevUjNXEeozpwEKfPjhiZhfiJddv0WHjduUTCmSF+7T5K7C9c9Y1wIVmUhDBv5fLMjgbwKecT0GIKPZA==",
        {
            "js/jquery.flot.orderBars.js": "https://cdn.jsdelivr.net/npm/flot-orderbars@1.0.0/js/jquery.flot.orderBars.js"
        },
    ),
    Package(
        "stupid-table-plugin",
        "1.1.3",
        "sha512-2Vk7XouQPxUQPRe9w0Fu7ZZ8kHLK7rDoLMsCgtKxRNJ7f4dSOGvW9CkHsq5wD6QsaEnWoyLBYH3xOEsrK3yWBg==",
        {
            "stupidtable.min.js": "https://cdnjs.cloudflare.com/ajax/libs/stupidtable/1.0.1/stupidtable.min.js"
        },
    ),
    Package(
        "blueimp-md5",
        "2.19.0",
        "sha512-DRQrD6gJyy8FbiE4s+bDoXS9hiW3Vbx5uCdwvcCf3zLHL+Iv7LtGHLpr+GZV8rHG8tK766FGYBwRbu8pELTt+w==",
        {
            "js/md5.min.js": "https://cdnjs.cloudflare.com/ajax/libs/blueimp-md5/2.19.0/js/md5.min.js"
        },
    ),
    Package(
        "bootstrap",
        "3.1.1",
        "sha512-TAzqS8E/ISpVHP29gYhy+1NSV+FJwApDVQhDfgLYsIuUDJiqJzH2DfORN5tiu+Ie2iBLrzEG34t4Rf465cigqg==",
        {
            "dist/js/bootstrap.min.js": "https://cdn.jsdelivr.net/npm/bootstrap@3.1.1/dist/js/bootstrap.min.js",
            "dist/css/bootstrap.min.css": "https://cdn.jsdelivr.net/npm/bootstrap@3.1.1/dist/css/bootstrap.min.css",
            # bootstrap.min.css loads its icon font from ../fonts/
            **{
                f"dist/fonts/glyphicons-halflings-regular.{ext}": ""
                for ext in ("eot", "svg", "ttf", "woff")
            },
        },
    ),
]
# A link to the release report in asv's navigation bar, after "Regressions".
NAV_ANCHOR = '<li id="nav-li-regressions"><a href="#/regressions">Regressions</a></li>'
NAV_REPORT = '<li id="nav-li-report"><a href="report.html">Release report</a></li>'
_TAG = re.compile(r"""<(script|link)\b[^>]*?(?:src|href)="(https?://[^"]+)"[^>]*>(?:</script>)?""")


class AssetError(RuntimeError):
    """An asset could not be fetched or did not match its pinned hash."""


def cache_dir() -> Path:
    return tfbench.cache_dir("npm")


def _verified(data: bytes, integrity: str) -> bool:
    algorithm, _, expected = integrity.partition("-")
    return base64.b64encode(hashlib.new(algorithm, data).digest()).decode() == expected


def fetch(package: Package, cache: Path | None = None) -> bytes:
    """The package's tarball, from the cache or else the registry (then cached)."""
    path = (cache or cache_dir()) / package.tarball
    if path.exists() and _verified(path.read_bytes(), package.integrity):
        return path.read_bytes()
    url = f"{REGISTRY}/{package.name}/-/{package.tarball}"
    try:
        with urllib.request.urlopen(url, timeout=60) as response:
            data = response.read()
    except OSError as e:
        raise AssetError(
            f"cannot fetch {url} (needed once, then cached in {path.parent}): {e}"
        ) from e
    if not _verified(data, package.integrity):
        raise AssetError(f"{url} does not match its pinned integrity {package.integrity}")
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}")  # another process may read it
    partial.write_bytes(data)
    partial.replace(path)
    return data


def vendor(html_dir: Path, cache: Path | None = None) -> list[Path]:
    """Unpack the assets into html_dir/vendor, point every page at them, link the report.

    Raises AssetError if a page still loads something from the internet afterwards (a new
    asv version with new assets): an offline site must not depend on it silently.
    """
    local: dict[str, str] = {}
    for package in PACKAGES:
        with tarfile.open(fileobj=io.BytesIO(fetch(package, cache))) as tar:
            for member, url in package.files.items():
                target = html_dir / "vendor" / package.name / member
                target.parent.mkdir(parents=True, exist_ok=True)
                member_file = tar.extractfile(f"package/{member}")
                if member_file is None:
                    raise AssetError(f"{package.tarball}: package/{member} is not a file")
                target.write_bytes(member_file.read())
                if url:
                    local[url] = target.relative_to(html_dir).as_posix()
    pages = sorted(html_dir.glob("*.html"))
    for page in pages:
        text = _TAG.sub(lambda m: _local_tag(m, local), page.read_text())
        if NAV_ANCHOR in text and NAV_REPORT not in text:
            text = text.replace(NAV_ANCHOR, NAV_ANCHOR + NAV_REPORT)
        remote = [m.group(2) for m in _TAG.finditer(text)]
        if remote:
            raise AssetError(
                f"{page.name} still loads {', '.join(remote)}: not in PACKAGES "
                "(tfbench/publish/assets.py)"
            )
        page.write_text(text)
    return pages


def _local_tag(match: re.Match, local: dict[str, str]) -> str:
    kind, url = match.group(1), match.group(2)
    if url not in local:
        return match.group(0)
    if kind == "script":
        return f'<script src="{local[url]}" onerror="js_load_failure()"></script>'
    return f'<link rel="stylesheet" href="{local[url]}">'
