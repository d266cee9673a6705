"""tfbench: TensorFlow's memory and speed folklore, measured release by release.

Packages: measure (the instrument), scenarios (the catalog), pairs (time read in pairs of
processes), gate (two releases compared), history (releases as asv's history axis), nightly
(tf-nightly builds), explain (why a step grows), publish (the report and the site), cli
(the command). Modules: targets (what can be measured, and measuring it), probes (the
suite's probe contract: grids, figures, the probes file), sweep (a step release by release,
and the bisection over releases), figures (every figure once: name, unit, direction,
floor), floors (how far apart two readings must be to be a change), answers (a reported
leak's answer from its step's record), units (units and their display), cpu (the CPU a
figure was read on), grammar (the forms a kept value may take), keptfiles (every kept file,
a module a kind: its format, check, read and write), escape (kept text made inert in
Markdown and shell), whole (files written whole, asv's kept whole around a run, the run's
lock, scratch folders), faults (how a run ends outside its verdict), versions (benchmark
versions from a digest of the measuring code), sources (the modules a module imports, read
from its source), paths (where things are), naming (the suite's names: time_, the Costs
twin, the GPU param), profile (where a run's and the tests' time goes), __main__
(`python -m tfbench`).
"""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir(*parts: str) -> Path:
    """tfbench's directory in the user's cache (XDG_CACHE_HOME or ~/.cache), joined with parts."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base, "tfbench", *parts)
