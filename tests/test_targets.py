"""Targets: building a step, and what a record says of a failure."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tfbench import scenarios, targets
from tfbench.measure.devices import Unsupported


def test_a_failure_keeps_no_machine_path():
    """Records are committed (results/probes): a message and its traceback name files
    relative to the project or to site-packages, never this machine's checkout."""
    here = targets.ROOT / "tfbench" / "scenarios" / "functions.py"
    env = "/home/u/.cache/tfbench/envs/2.21.0-cpu/lib/python3.11/site-packages"
    try:
        raise TypeError(f'in user code:\n File "{here}", line 46\n File "{env}/tf/x.py"')
    except TypeError as e:
        found = targets.failure(e)
    assert found["status"] == "error"
    assert found["error"].startswith("TypeError: in user code")
    for text in (found["error"], found["traceback"]):
        assert str(targets.ROOT) not in text and "/home/u" not in text
    assert '"tfbench/scenarios/functions.py", line 46' in found["error"]
    assert '"<site-packages>/tf/x.py"' in found["error"]


def test_bad_input_and_skips_say_so():
    assert targets.failure(scenarios.ParamError("no param x"))["status"] == "bad_input"
    assert targets.failure(LookupError("no such file"))["status"] == "bad_input"
    assert targets.failure(Unsupported("no GPU")) == {"status": "skipped", "error": "no GPU"}


def test_a_users_function_gets_default_counts(tmp_path):
    mine = tmp_path / "mine.py"
    mine.write_text("def step():\n    return 1\n")
    ready = targets.prepare(targets.FunctionTarget(str(mine), "step"))
    assert (ready.iterations, ready.warmup, ready.device) == (100, 10, "default")
    assert ready.step() == 1
    with pytest.raises(LookupError, match="has no function 'nope'"):
        targets.prepare(targets.FunctionTarget(str(mine), "nope"))


def test_a_measuring_process_keeps_its_temporary_files_in_its_own_folder(tmp_path):
    """A forked reading exits without Python's exit handlers, so what TensorFlow's autograph
    writes to the temporary folder would stay there: the folder is the measurement's own,
    removed with it."""
    env = targets.isolated_env(tmp_path, [])
    code = "import tempfile; print(tempfile.NamedTemporaryFile(delete=False).name)"
    made = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    assert Path(made.stdout.strip()).parent == tmp_path


def test_a_measurement_imports_its_parents_tfbench_whatever_the_folder_holds(
    tmp_path, monkeypatch
):
    """Run from a folder that holds another tfbench (a clone), the measuring child imports
    its parent's, not the folder's (`python -m` puts the folder first on its path): one
    version of the instrument in one measurement (#79)."""
    clone = tmp_path / "clone"
    (clone / "tfbench").mkdir(parents=True)
    (clone / "tfbench" / "__init__.py").write_text("raise ImportError('a clone, not the parent')")
    mine = tmp_path / "mine.py"
    mine.write_text("def step():\n    return 1\n")
    monkeypatch.chdir(clone)
    limits = targets.Limits(iterations=5, warmup=1, quiet=True)
    found = targets.measure_isolated(targets.FunctionTarget(str(mine), "step"), limits)
    assert found["status"] == "ok", found.get("error")


@pytest.mark.slow  # a process that imports TensorFlow
@pytest.mark.parametrize("uses", [False, True])
def test_a_measuring_parent_imports_tensorflow_only_for_a_step_that_uses_it(uses):
    """Once in the parent for every child where the scenario uses it (tests/planted's do
    not: they skip the import)."""
    pytest.importorskip("tensorflow")
    code = f"""
import sys
from tfbench import scenarios, targets
scenarios.register(scenarios.Scenario("x.y", "", lambda: (lambda: None), tensorflow={uses}))
(found,) = targets.measure_forked([targets.ScenarioTarget("x.y")], targets.Limits(iterations=2))
print(found["status"], "tensorflow" in sys.modules)
"""
    run = subprocess.run(
        [sys.executable, "-c", code], cwd=targets.ROOT, capture_output=True, text=True
    )
    assert run.stdout.split() == ["ok", str(uses)], run.stderr[-2000:]
