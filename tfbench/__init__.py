"""tfbench: TensorFlow's memory and speed folklore, measured release by release."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir(*parts: str) -> Path:
    """tfbench's directory in the user's cache (XDG_CACHE_HOME or ~/.cache), joined with parts."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base, "tfbench", *parts)
