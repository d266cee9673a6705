"""This project's asv configuration: read, and copied with its paths absolute (asv reads
them from the configuration's directory) for `tfbench publish`, which builds in a scratch
directory, and `tfbench gate`, which gives each run a results directory of its own.

`read` needs only the standard library: the suite's benchmarks call it inside release
environments, which hold no asv (tfbench.probes).
"""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from asv.config import Config

# asv's defaults for the paths a configuration may leave out
PATHS = {
    "repo": None,
    "benchmark_dir": "benchmarks",
    "results_dir": "results",
    "env_dir": "env",
    "html_dir": "html",
}


def read(conf_path: str | Path) -> dict[str, Any]:
    """An asv configuration as a dict: JSON with whole-line // comments, as asv writes it
    (asv itself reads JSON5); OSError or ValueError where it cannot be read."""
    text = Path(conf_path).read_text(encoding="utf-8")
    return json.loads(re.sub(r"^\s*//.*$", "", text, flags=re.M))


def derived_config(conf_path: str | Path, target: Path, **paths: str | Path) -> Path:
    """A copy of an asv configuration as target/asv.conf.json, its paths made absolute
    (asv reads them from the configuration's directory) and `paths` put in their place."""
    conf = read(conf_path)
    base = Path(conf_path).resolve().parent
    for key, default in PATHS.items():
        value = conf.get(key, default)
        if value is not None and "://" not in str(value):
            conf[key] = str(base / value)
    conf.update({k: str(v) for k, v in paths.items()})
    target.mkdir(parents=True, exist_ok=True)
    path = target / "asv.conf.json"
    path.write_text(json.dumps(conf, indent=1))
    return path


def load_config(conf_path: str | Path) -> Config:
    """The configuration with its paths absolute, whatever the working directory."""
    from asv.config import Config

    with tempfile.TemporaryDirectory() as tmp:
        return Config.load(str(derived_config(conf_path, Path(tmp))))
