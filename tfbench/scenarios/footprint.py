"""TensorFlow's own footprint: what a fresh process holds after `import tensorflow` and one
op on the device (an eager op and a graph run, devices.start_runtime), before any pattern
runs. Every user pays it; a release that makes it larger costs every program.

Read in a process of its own (tfbench.targets.measure_footprint):
    python -m tfbench.scenarios.footprint SPEC OUT
SPEC: {"device": "CPU" | "GPU"}; OUT: the process's RSS, heap in use, import seconds.
"""

from __future__ import annotations

import gc
import json
import sys
import time
from pathlib import Path
from typing import Any

from tfbench.measure import devices, heap
from tfbench.measure.meter import rss_bytes


def read(device: str) -> dict[str, Any]:
    """This process's footprint once TensorFlow is imported and started on `device`."""
    devices.require(device, tensorflow=False)  # a skip told without the import
    start = time.perf_counter()
    import tensorflow as tf

    seconds = time.perf_counter() - start
    devices.require(device)
    devices.start_runtime(device)
    gc.collect()
    return {
        "rss_bytes": rss_bytes(),
        "heap_bytes": heap.in_use(),
        "heap_note": heap.why_not(),
        "import_seconds": seconds,
        "tf_version": tf.__version__,
    }


def _main(spec_path: str, out_path: str) -> None:
    device = json.loads(Path(spec_path).read_text())["device"]
    try:
        found = {"status": "ok", **read(device)}
    except devices.Unsupported as e:
        found = {"status": "skipped", "error": str(e)}
    Path(out_path).write_text(json.dumps(found))


if __name__ == "__main__":
    _main(*sys.argv[1:3])
