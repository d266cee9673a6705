"""`tfbench explain`: why a step grows, layer by layer (Python objects, TensorFlow's state,
native memory), in a run of its own.

probe    the explaining run, in a bounded child: four windows, one instrument each
holders  what holds an object alive: the path of references from a module down to it
layers   which layer holds the growth, its cause and fix, the one-line conclusion (pure)
"""

from __future__ import annotations

import sys
from pathlib import Path

import tfbench
from tfbench.targets import DEFAULTS, Limits, Step, died, run_isolated, to_json

MEMRAY = "memray==1.20.0"  # native attribution (Bloomberg's; Linux and macOS)


def memray_path(python: str | None) -> str | None:
    """A directory holding memray for `python` (a release environment's interpreter, which
    has no memray of its own), made once with uv; None for this interpreter (a dependency
    of tfbench here) or where it cannot be made (explain then says native stacks are
    unavailable)."""
    if python is None:
        return None
    from tfbench.history import envs

    folder = tfbench.cache_dir("memray", MEMRAY.replace("==", "-"))
    if not (folder / "memray").is_dir():
        try:
            envs.uv_target(Path(python), folder, MEMRAY)
        except envs.EnvError as e:
            print(f"tfbench: memray not installed: {e}", file=sys.stderr)
            return None
    return str(folder)


def explain_isolated(target: Step, limits: Limits = DEFAULTS) -> dict:
    """Explain a target's growth in a fresh process (this interpreter's, or a release
    environment's), bounded like a measurement: its record, with `layer` and `conclusion`."""
    spec = {"targets": [to_json(target)], "memray_path": memray_path(limits.python)}
    out, exit_code, last = run_isolated("tfbench.explain.probe", spec, limits)
    return out[0] if out else dict(died(target, exit_code, last, limits.python))
