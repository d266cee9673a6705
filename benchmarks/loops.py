"""Loop family: matrix power by Python loops of tf.matmul, tf.while_loop, tf.function, NumPy.

Scenario code: tfbench/scenarios/loops.py. Skipped points: NumPy with a gradient tape or
on GPU, and GPU where none is present.
"""

from asv_runner.benchmarks.mark import SkipNotImplemented

from tfbench import memory, probe, suite
from tfbench.devices import DEVICES
from tfbench.scenarios import loops

PARAMS = [loops.VARIANTS, loops.GRADIENTS, loops.SIZES, loops.LOOP_ITERATIONS, DEVICES]
PARAM_NAMES = ["variant", "gradient", "size", "loop_iterations", "device"]


class MatrixPower:
    """asv's own figures for one step, the matrix power (with its gradient, if any)."""

    params = PARAMS
    param_names = PARAM_NAMES
    version = suite.code_version(loops)
    processes = 1  # each process imports TensorFlow (~4 s): asv's default 2 rounds double that
    timeout = 120

    def setup(self, *params):
        self.step = suite.warm_step("loop", PARAM_NAMES, *params)

    def time_matrix_power(self, *params):
        self.step()

    def peakmem_matrix_power(self, *params):
        self.step()


class MatrixPowerMemory:
    """The probe's costs: each point run in a fresh process, many steps, from before the first."""

    params = PARAMS
    param_names = PARAM_NAMES
    version = suite.code_version(loops, probe, memory)

    def setup_cache(self):
        return suite.measure_grid("loop", PARAMS, PARAM_NAMES)

    setup_cache.timeout = 1800

    def setup(self, cache, *params):
        self.result = suite.reading(cache, params)

    def track_peak_increase(self, cache, *params):
        return self.result["peak_increase_bytes"]

    track_peak_increase.unit = "bytes"

    def track_growth_per_iteration(self, cache, *params):
        return self.result["growth_bytes_per_iteration"]

    track_growth_per_iteration.unit = "bytes/iteration"

    def track_allocator_peak(self, cache, *params):
        if self.result["allocator_peak_bytes"] is None:
            raise SkipNotImplemented("allocator peak is read on GPU only")
        return self.result["allocator_peak_bytes"]

    track_allocator_peak.unit = "bytes"
