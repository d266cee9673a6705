"""Probe grid points measured again in a release's environment, the way asv's setup_cache
measures them (tfbench.probes.measure_grid: children forked from a process that imported
TensorFlow), each point on its own grid: re-measuring one point costs its own readings,
not its family's whole grid.

Run by the gate (tfbench.gate.session) in the side's interpreter, the project on
PYTHONPATH (as the suite's benchmarks/__init__ puts it on sys.path under asv):
    python -m tfbench.gate.confirm SPEC OUT
SPEC: {"suite": benchmark_dir, "points": [[module.Class, [param values]], ...], "repeats": N}
OUT: {module.Class: {probe key: [each repeat's kept record]}}, the shape of a probes file.
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path


def main(spec_path: str, out_path: str) -> None:
    spec = json.loads(Path(spec_path).read_text())
    suite = Path(spec["suite"])
    sys.path.insert(0, str(suite.parent))
    from tfbench import probes
    from tfbench.measure import record

    out: dict[str, dict[str, list]] = {}
    for module_class, values in spec["points"]:
        module, _, name = module_class.rpartition(".")
        costs = getattr(importlib.import_module(f"{suite.name}.{module}"), name)
        grid = probes.measure_grid(
            costs.family,
            [[v] for v in values],
            costs.param_names,
            (costs.__module__,),
            repeats=spec["repeats"],
        )
        for key, repeats in grid.items():
            out.setdefault(module_class, {})[key] = [record.kept(r) for r in repeats]
    Path(out_path).write_text(json.dumps(out))


if __name__ == "__main__":
    main(*sys.argv[1:3])
