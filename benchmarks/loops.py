"""Loop family: matrix power by Python loops of tf.matmul, tf.while_loop, tf.function, NumPy.

Scenario code: tfbench/scenarios/loops.py. Skipped points: NumPy with a gradient tape or
on GPU, and GPU where none is present.
"""

from tfbench import memory, probe, suite
from tfbench.devices import DEVICES
from tfbench.scenarios import loops

PARAMS = [loops.VARIANTS, loops.GRADIENTS, loops.SIZES, loops.LOOP_ITERATIONS, DEVICES]
NAMES = ["variant", "gradient", "size", "loop_iterations", "device"]


class MatrixPower(suite.StepBenchmark):
    family, params, param_names = "loop", PARAMS, NAMES
    version = suite.code_version(loops)


class MatrixPowerCosts(suite.ProbeCosts):
    family, params, param_names = "loop", PARAMS, NAMES
    version = suite.code_version(loops, probe, memory)

    def setup_cache(self):
        return self.measure()

    setup_cache.timeout = 1800
