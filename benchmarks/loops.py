"""Loop family: matrix power by Python loops of tf.matmul, tf.while_loop, tf.function, NumPy.

Scenario code: tfbench/scenarios/loops.py. Skipped points: NumPy with a gradient tape or
on GPU, and GPU where none is present.
"""

from tfbench.measure.devices import DEVICES
from tfbench.scenarios import loops

from . import common

PARAMS = [loops.VARIANTS, loops.GRADIENTS, loops.SIZES, loops.LOOP_ITERATIONS, DEVICES]
NAMES = ["variant", "gradient", "size", "loop_iterations", "device"]


class MatrixPower(common.StepBenchmark):
    family, params, param_names = "loop", PARAMS, NAMES
    version = common.version(loops)


class MatrixPowerCosts(common.ProbeCosts):
    family, params, param_names = "loop", PARAMS, NAMES
    version = common.version(loops)

    def setup_cache(self):
        return self.measure()

    setup_cache.timeout = 1800
