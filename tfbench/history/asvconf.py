"""This project's asv configuration, copied with its paths absolute (asv reads them from the
configuration's directory): for `tfbench publish`, which builds in a scratch directory, and
`tfbench gate`, which gives each run a results directory of its own."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from asv.config import Config
from asv.util import load_json

# asv's defaults for the paths a configuration may leave out
PATHS = {
    "repo": None,
    "benchmark_dir": "benchmarks",
    "results_dir": "results",
    "env_dir": "env",
    "html_dir": "html",
}


def derived_config(conf_path: str | Path, target: Path, **paths: str | Path) -> Path:
    """A copy of an asv configuration as target/asv.conf.json, its paths made absolute
    (asv reads them from the configuration's directory) and `paths` put in their place."""
    conf = load_json(str(conf_path), js_comments=True)
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
    with tempfile.TemporaryDirectory() as tmp:
        return Config.load(str(derived_config(conf_path, Path(tmp))))
