"""Does freezing the live objects (gc.freeze) change what a step allocates or keeps?

    PYTHONMALLOC=malloc python tests/validation/freeze.py [CALLS] [EVERY]

`model.predict` of a small Keras model (tfbench/scenarios/predict.py's), warmed up, then CALLS
calls (200) with a full collection every EVERY calls (10), CPython's own full collections
off, read twice in fresh processes: once with every live object frozen after warm-up (as
tfbench.measure.collector reads a window), once not. Prints, for each, what a call keeps
(the heap's slope after the collections), the garbage the collections free, and what one
full collection costs; the two must agree (kept within 1 KiB/call, garbage within 2%).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import numpy as np

CHILD = """
import gc, sys, time
import numpy as np
from tfbench.measure import heap
from tfbench.measure.growth import theil_sen_slope
from tfbench.scenarios import predict

frozen, calls, every = sys.argv[1] == "frozen", int(sys.argv[2]), int(sys.argv[3])
step = predict.model_predict("CPU")
for _ in range(10):
    step()
gc.collect()
if frozen:
    gc.freeze()
gc.set_threshold(700, 10, 1 << 30)
kept, freed, spent = [heap.in_use()], 0, 0.0
for call in range(1, calls + 1):
    step()
    if call % every == 0:
        before = heap.in_use()
        began = time.perf_counter()
        gc.collect()
        spent += time.perf_counter() - began
        kept.append(heap.in_use())
        freed += before - kept[-1]
print(theil_sen_slope(np.array(kept)) / every, freed / calls, spent / (len(kept) - 1))
"""


def read(mode: str, calls: int, every: int) -> tuple[float, float, float]:
    env = {"PYTHONMALLOC": "malloc", "TF_CPP_MIN_LOG_LEVEL": "3"}
    run = subprocess.run(
        [sys.executable, "-c", CHILD, mode, str(calls), str(every)],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, **env},
    )
    kept, garbage, seconds = map(float, run.stdout.split())
    return kept, garbage, seconds


def main() -> int:
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    every = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    began = time.monotonic()
    found = {mode: read(mode, calls, every) for mode in ("frozen", "plain")}
    for mode, (kept, garbage, seconds) in found.items():
        print(
            f"{mode:<7} kept {kept:9.1f} B/call  garbage {garbage:10.1f} B/call  "
            f"a full collection {seconds * 1e3:7.1f} ms"
        )
    (k1, g1, _), (k2, g2, _) = found.values()
    same = abs(k1 - k2) <= 1024 and np.isclose(g1, g2, rtol=0.02)
    print(f"{'the same' if same else 'DIFFERENT'} ({time.monotonic() - began:.0f} s)")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
