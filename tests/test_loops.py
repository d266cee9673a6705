"""The loop family computes what it claims, and its memory figures can be checked by hand."""

import re
import subprocess
import sys

import numpy as np
import pytest

from tfbench import scenarios, targets
from tfbench.measure import devices
from tfbench.scenarios import loops

LOOP_IDS = sorted(sid for sid in scenarios.CATALOG if sid.startswith("loop."))
CASES = [(sid, g) for sid in LOOP_IDS for g in scenarios.CATALOG[sid].params["gradient"]]


def test_orthogonal_input_keeps_powers_finite():
    x = loops.orthogonal(64)
    assert np.allclose(x.T @ x, np.eye(64), atol=1e-5)
    assert np.isfinite(np.linalg.matrix_power(x, 1000)).all()
    # why: a random normal matrix of that size overflows float32 within 100 products
    with np.errstate(over="ignore", invalid="ignore"):
        normal = np.random.default_rng(0).standard_normal((64, 64)).astype(np.float32)
        assert not np.isfinite(np.linalg.matrix_power(normal, 100)).all()


@pytest.mark.slow
@pytest.mark.parametrize("size", loops.SIZES)
@pytest.mark.parametrize("scenario_id,gradient", CASES)
def test_every_variant_computes_the_same_matrix(scenario_id, gradient, size):
    pytest.importorskip("tensorflow")
    n = loops.LOOP_ITERATIONS[0]
    expected = np.linalg.matrix_power(loops.orthogonal(size).astype(np.float64), n)
    step = scenarios.get(scenario_id).step(gradient=gradient, size=size)
    first, second = step(), step()  # the second call reuses traces and caches
    for got in (first, second):
        assert got.shape == (size, size) and np.isfinite(got).all()
        np.testing.assert_allclose(got, expected, atol=2e-4)


def test_numpy_has_no_tape_and_no_gpu():
    numpy = scenarios.get("loop.numpy")
    with pytest.raises(devices.Unsupported, match="gradient='tape'"):
        numpy.benchmark_step(gradient="tape", size=64, loop_iterations=100, device="CPU")
    with pytest.raises(devices.Unsupported, match="device='GPU'"):
        numpy.benchmark_step(gradient="none", size=64, loop_iterations=100, device="GPU")


def test_gpu_without_a_gpu_is_a_skip_with_its_reason():
    reason = devices.skip_reason("GPU")
    if reason is None:
        pytest.skip("this machine has a usable GPU")
    with pytest.raises(devices.Unsupported, match=re.escape(reason)):
        scenarios.get("loop.python_matmul").step(device="GPU", size=64)


def test_the_footprint_of_a_gpu_it_cannot_use_is_told_without_importing_tensorflow():
    if devices.skip_reason("GPU", tensorflow=False) is None:
        pytest.skip("this machine may have a usable GPU")
    code = (
        "import sys\nfrom tfbench.measure import devices\n"
        "from tfbench.scenarios import footprint\n"
        "try:\n    footprint.read('GPU')\nexcept devices.Unsupported as e:\n    print(e)\n"
        "print('tensorflow' in sys.modules)"
    )
    told = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert told.stdout.splitlines() == [devices.skip_reason("GPU"), "False"], told.stderr


@pytest.mark.slow
def test_tape_keeps_every_intermediate_product_alive():
    """By hand: 100 products of 256x256 float32 are 100 x 256 KiB = 25 MiB held by the tape.
    The peak is read in the window: no confirming rounds after it (31 times its calls)."""
    pytest.importorskip("tensorflow")
    limits = targets.Limits(iterations=10, warmup=2, confirm=False)

    def peak(gradient: str) -> int:
        point = targets.ScenarioTarget("loop.python_matmul", {"size": 256, "gradient": gradient})
        return targets.measure(point, limits)["peak_increase_bytes"]

    plain, taped = peak("none"), peak("tape")
    held = 100 * 256 * 256 * 4
    assert taped - plain >= 0.9 * held
    assert plain < held
