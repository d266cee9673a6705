"""Is a reported leak's answer what a plain long loop says? The second reading of #81.

    python tests/validation/reported_second.py STEP [STEP ...] [--steps N] > table.md

Run with the Python of a release's environment (PYTHONPATH at this checkout) to read that
release. For each reported step (tfbench/scenarios/reported.py): tfbench's reading (the
probe, in a fresh process: its answer, what a step keeps, its garbage) beside a plain loop
in a fresh process of its own, as a user would read it: 10 warm-up steps, a full
gc.collect(), then N steps with a gc.collect() every 10 and one at the end, RSS and glibc's
heap in use (mallinfo2) read before and after. Prints a Markdown table: both readings a
step, and whether the long loop's RSS agrees with the answer (grows by at least half of
what the probe says a step keeps, where it reproduces; by less than the garbage floor and
a tenth of a page a step, where not).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

from tfbench import answers, floors, targets
from tfbench.units import format_bytes

LOOP = """
import gc, json, sys
from tfbench import scenarios
from tfbench.measure import heap
from tfbench.measure.meter import rss_bytes
step = scenarios.get(sys.argv[1]).step()
n = int(sys.argv[2])
for _ in range(10):
    step()
gc.collect()
rss, used = rss_bytes(), heap.in_use()
for k in range(n):
    step()
    if k % 10 == 9:
        gc.collect()
gc.collect()
after = heap.in_use()
print(json.dumps({
    "rss": (rss_bytes() - rss) / n,
    "heap": None if used is None or after is None else (after - used) / n,
}))
"""


def long_loop(step: str, n: int) -> dict:
    run = subprocess.run(
        [sys.executable, "-c", LOOP, step, str(n)],
        capture_output=True,
        text=True,
        check=True,
        timeout=3600,
    )
    return json.loads(run.stdout.splitlines()[-1])


def agrees(answer: answers.Answer, rss: float) -> bool:
    if answer.text == answers.REPRODUCES and answer.kept is not None:
        return rss >= answer.kept / 2
    return rss < max(floors.GARBAGE_FLOOR, 4096 / 10)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("steps", nargs="+", help="reported.tfNUMBER_... scenario ids")
    parser.add_argument("--steps-run", "--steps", dest="n", type=int, default=400)
    args = parser.parse_args()
    import tensorflow as tf

    print(f"TensorFlow {tf.__version__}, Python {sys.version.split()[0]}, {args.n} steps\n")
    print(
        "| step | tfbench's answer | kept a step | garbage a step | long loop: RSS a step "
        "| long loop: heap a step | agree |"
    )
    print("|---|---|---|---|---|---|---|")
    for step in args.steps:
        answer = answers.answer(targets.measure(targets.ScenarioTarget(step)))
        if answer.text == answers.FAILS:
            print(f"| {step} | {answer.said()} | | | | | |")
            continue
        loop = long_loop(step, args.n)
        print(
            f"| {step} | {answer.text} | {format_bytes(answer.kept)} | "
            f"{format_bytes(answer.garbage)} | {format_bytes(loop['rss'])} | "
            f"{format_bytes(loop['heap'])} | {'yes' if agrees(answer, loop['rss']) else 'NO'} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
