"""tf.function: accumulating in loops, and retracing (tfbench/scenarios/functions.py).

function.list_in_tf_range fails on releases that reject it: those points are skips whose
reason is the error, printed in asv's log.
"""

from tfbench.measure.devices import DEVICES
from tfbench.scenarios import functions, variants

from . import common

ACCUMULATION = [variants(functions.COUNTED), functions.COUNTS, DEVICES]
RETRACING = [variants(functions.PLAIN), DEVICES]
VERSION = common.version(functions)


class Accumulation(common.StepBenchmark):
    family, params, param_names = "function", ACCUMULATION, ["variant", "count", "device"]
    version = VERSION


class AccumulationCosts(common.ProbeCosts, common.Traces):
    family, params, param_names = "function", ACCUMULATION, ["variant", "count", "device"]
    version = VERSION

    def setup_cache(self):
        return self.measure()

    setup_cache.timeout = 1800


class Retracing(common.StepBenchmark):
    family, params, param_names = "function", RETRACING, ["variant", "device"]
    version = VERSION


class RetracingCosts(common.ProbeCosts, common.Traces):
    family, params, param_names = "function", RETRACING, ["variant", "device"]
    version = VERSION

    def setup_cache(self):
        return self.measure()

    setup_cache.timeout = 1800
