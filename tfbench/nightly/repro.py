"""A standalone reproducer of a target: one Python file that needs TensorFlow, psutil and
the standard library only (NumPy comes with TensorFlow), for a TensorFlow issue.

A catalog scenario's module is inlined with the few tfbench helpers it imports written out
(a scenario that builds on another family's module gets that module first); a user's
`file::function` is inlined as it is. The file measures the step the way issue reporters
do: memory printed as the calls go, then per call RSS's growth (psutil), what the heap keeps
after a full collection and the garbage Python's collections freed (glibc's mallinfo2, with
every allocation through malloc: it re-executes itself with PYTHONMALLOC=malloc).
"""

from __future__ import annotations

import ast
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tfbench import grammar, scenarios, whole
from tfbench.measure.spawn import Spawned
from tfbench.measure.supervisor import default_budget_bytes
from tfbench.paths import PACKAGE
from tfbench.targets import (
    FootprintTarget,
    FunctionTarget,
    Limits,
    ScenarioTarget,
    Target,
    portable,
)

HELPERS = '''
class Unsupported(NotImplementedError):
    """A case that cannot run here."""


def require(device):
    if device == "GPU":
        import tensorflow as tf

        if not tf.config.list_physical_devices("GPU"):
            raise Unsupported("TensorFlow sees no GPU")


def tf_name(device):
    return f"/{device}:0"


CATALOG = {}


class Scenario:
    def __init__(self, id, description, prepare, params=None, iterations=40, warmup=10):
        self.id, self.prepare, self.params = id, prepare, params or {}


def register(scenario):
    CATALOG[scenario.id] = scenario
    return scenario


def register_family(table, params, iterations, warmup):
    for scenario_id, (prepare, description) in table.items():
        register(Scenario(scenario_id, description, prepare, params))
'''

MEASURE = '''
def heap_in_use():
    """Bytes glibc's malloc has handed out and not taken back (None where not glibc)."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallinfo2.restype = Mallinfo2
    except (OSError, AttributeError):
        return None
    info = libc.mallinfo2()
    return info.uordblks + info.hblkhd


FIELDS = "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost"


class Mallinfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in FIELDS.split()]


def main():
    if os.environ.get("PYTHONMALLOC") != "malloc":  # Python's objects counted in the heap
        env = {**os.environ, "PYTHONMALLOC": "malloc"}
        os.execve(sys.executable, [sys.executable, *sys.argv], env)
    import tensorflow as tf

    step = make_step()
    for _ in range(WARMUP):
        step()
    gc.collect()
    freed, started = [0, 0], [0]  # what Python's collections free: bytes, objects

    def count(phase, info):
        if phase == "start":
            started[0] = heap_in_use() or 0
        elif info["collected"]:  # one that frees no object only empties free lists
            freed[0] += started[0] - (heap_in_use() or 0)
            freed[1] += info["collected"]

    gc.callbacks.append(count)
    process = psutil.Process()
    rss0, heap0 = process.memory_info().rss, heap_in_use()
    every = max(1, CALLS // 10)
    for call in range(1, CALLS + 1):
        step()
        if call % every == 0:
            heap = heap_in_use()
            rss = process.memory_info().rss
            line = f"after {call:5d} calls: RSS {rss / 2**20:8.1f} MiB"
            if heap is not None:
                line += f", heap in use {heap / 2**20:8.1f} MiB"
            print(line)
    gc.collect()
    gc.callbacks.remove(count)
    rss, heap = process.memory_info().rss, heap_in_use()
    python = sys.version.split()[0]
    print(f"TensorFlow {tf.__version__} ({tf.version.GIT_VERSION}), Python {python}")
    if heap is not None:
        kept = (heap - heap0) / CALLS / 1024
        print(f"retained per call (heap in use after gc.collect()): {kept:.2f} KiB")
        garbage = freed[0] / CALLS / 1024
        print(f"garbage per call (what Python's collector freed): {garbage:.2f} KiB")
    print(f"RSS growth per call: {(rss - rss0) / CALLS / 1024:.2f} KiB")


if __name__ == "__main__":
    main()
'''


def _inlined(path: Path) -> str:
    """A module's source with its tfbench imports and its future import left out (the
    reproducer has its own, first)."""
    source = path.read_text()
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    dropped: set[int] = set()
    for node in tree.body:
        is_ours = isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tfbench")
        is_future = isinstance(node, ast.ImportFrom) and node.module == "__future__"
        if is_ours or is_future:
            dropped.update(range(node.lineno - 1, node.end_lineno or node.lineno))
    return "".join(line for i, line in enumerate(lines) if i not in dropped)


def _scenario_modules(module: str) -> list[str]:
    """The scenario module and the other scenario modules it imports, those first."""
    tree = ast.parse(PACKAGE.joinpath(*module.split(".")[1:]).with_suffix(".py").read_text())
    first = [
        node.module
        for node in tree.body
        if isinstance(node, ast.ImportFrom)
        and node.module
        and node.module.startswith("tfbench.scenarios.")
    ]
    return [*first, module]


FOOTPRINT = '''"""Standalone reproducer (tfbench upstream): TensorFlow's footprint after import.

Needs TensorFlow and psutil; run `python repro.py` (it runs itself a second time with
PYTHONMALLOC=malloc, so that Python's objects are counted in the heap).
"""

import ctypes
import os
import sys

import psutil

FIELDS = "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost"


class Mallinfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in FIELDS.split()]


def main():
    import tensorflow as tf

    with tf.device({device}):
        tf.reduce_sum(tf.ones((8, 8)) @ tf.ones((8, 8))).numpy()
    rss = psutil.Process().memory_info().rss
    version = f"{{tf.__version__}} ({{tf.version.GIT_VERSION}})"
    line = f"TensorFlow {{version}}: RSS {{rss / 2**20:.1f}} MiB"
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallinfo2.restype = Mallinfo2
        info = libc.mallinfo2()
        line += f", heap in use {{(info.uordblks + info.hblkhd) / 2**20:.1f}} MiB"
    except (OSError, AttributeError):
        pass
    print(line + f" (PYTHONMALLOC={{os.environ.get('PYTHONMALLOC', 'default')}})", flush=True)


if __name__ == "__main__":
    main()
    if os.environ.get("PYTHONMALLOC") != "malloc":
        env = {{**os.environ, "PYTHONMALLOC": "malloc"}}
        os.execve(sys.executable, [sys.executable, *sys.argv], env)
'''


class NotInlined(ValueError):
    """A step that cannot be written into a reproducer (its file is not Python, its name no
    plain name)."""


def source(target: Target, iterations: int, warmup: int) -> str:
    """The reproducer's text: the template, with checked names and literals written by
    `repr` its only inserted values; a user's step inlined from its file (given on the
    command line: never a path read from a kept file). NotInlined where it cannot be."""
    try:
        counts = f"\nCALLS, WARMUP = {grammar.integer(iterations, 'iterations')!r}, "
        counts += f"{grammar.integer(warmup, 'warmup')!r}\n"
        if isinstance(target, FootprintTarget):
            device = grammar.device(target.device, "device")
            return FOOTPRINT.format(device=repr(f"/{device}:0"))
        if isinstance(target, ScenarioTarget):
            name, body, make = _scenario(target)
        else:
            name, body, make = _function(target)
    except (grammar.Invalid, scenarios.ParamError) as e:
        raise NotInlined(f"{target.name}: {e}") from None
    head = [
        f'"""Standalone reproducer (tfbench upstream): {name}.\n\n'
        "Needs TensorFlow and psutil; run `python repro.py`.\n"
        '"""\n\n',
        "from __future__ import annotations\n\n",
        "import ctypes\nimport gc\nimport os\nimport sys\n\nimport psutil\n",
    ]
    return "".join([*head, *body, make, counts, MEASURE])


def _scenario(target: ScenarioTarget) -> tuple[str, list[str], str]:
    """A catalog scenario: its module (and the scenario modules it builds on) inlined."""
    scenario = scenarios.get(grammar.scenario(target.scenario, "scenario"))
    params = scenario.bind(target.params)  # the catalog's own values
    body = [HELPERS]
    for name in _scenario_modules(scenario.prepare.__module__):
        body.append(f"\n# ---- {name.replace('.', '/')}.py, as tfbench measures it ----\n")
        body.append(_inlined(PACKAGE.joinpath(*name.split(".")[1:]).with_suffix(".py")))
    prepare = f"CATALOG[{target.scenario!r}].prepare(**{params!r})"
    return target.scenario, body, f"\n\ndef make_step():\n    return {prepare}\n"


def _function(target: FunctionTarget) -> tuple[str, list[str], str]:
    """A user's function: its file inlined as it is, the function named."""
    file = Path(target.file)
    name = grammar.file_name(file.name, "file name")
    function = grammar.identifier(target.function, "function")
    try:
        inlined = _inlined(file)
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError) as e:
        raise NotInlined(f"{file.name}: not a Python file here ({type(e).__name__})") from None
    body = [f"\n# ---- {name}, as measured ----\n", inlined]
    return f"{name}::{function}", body, f"\n\ndef make_step():\n    return {function}\n"


def of(data: Mapping[str, Any], target: Target) -> str:
    """The reproducer of a bisection of `target` (the command line's: the kept file names
    it, never says where its code is), with the bisection's iterations."""
    limits = data["limits"]
    return source(target, limits["iterations"] or 200, limits["warmup"] or 10)


def run(code: str, python: Path, limits: Limits) -> str:
    """What the reproducer prints, run by `python` (a build's environment), as a reporter
    runs it; killed with its processes past the memory budget or the timeout, and said so
    with the end of its log."""
    with whole.temporary("tfbench-repro-") as tmp:
        script, out, err = (tmp / name for name in ("repro.py", "out", "err"))
        script.write_text(code)
        with open(out, "w") as printed, open(err, "w") as logged:
            process = Spawned(
                [str(python), str(script)],
                stdout=printed,
                stderr=logged,  # TensorFlow's log: shown only when the run fails
                env={"PATH": "/usr/bin:/bin", "TF_CPP_MIN_LOG_LEVEL": "3"},
                budget_bytes=limits.budget_bytes or default_budget_bytes(),
                timeout_s=limits.timeout_s,
            )
            ended = process.wait()
        lines = out.read_text(errors="replace").strip().splitlines()
        if process.stopped or ended:
            lines += err.read_text(errors="replace").strip().splitlines()[-10:]
            lines.append(f"({process.stopped or f'exit {ended}'})")
        said = "\n".join(lines).replace(f"{tmp}{os.sep}", "")  # kept: no path of this machine
    return portable(said)
