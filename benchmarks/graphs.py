"""Graph construction vs eager, and TF1 sessions (tfbench/scenarios/graphs.py).

`allow_growth` is a GPU setting: CPU points with it on are skipped, as is GPU without one.
"""

from tfbench.measure.devices import DEVICES
from tfbench.scenarios import graphs, variants

from . import common

GRAPH = [variants(i for i in graphs.GRAPH if i.startswith("graph.")), ["off", "on"], DEVICES]
SESSION = [variants(i for i in graphs.GRAPH if i.startswith("session.")), ["off", "on"], DEVICES]
EAGER = [variants(graphs.EAGER), DEVICES]
GROWTH_NAMES = ["variant", "allow_growth", "device"]
VERSION = common.version(graphs)


class GraphConstruction(common.StepBenchmark):
    family, params, param_names, version = "graph", GRAPH, GROWTH_NAMES, VERSION


class GraphConstructionCosts(common.ProbeCosts, common.GraphOps):
    family, params, param_names, version = "graph", GRAPH, GROWTH_NAMES, VERSION

    def setup_cache(self):
        return self.measure()

    setup_cache.timeout = 1800


class Sessions(common.StepBenchmark):
    family, params, param_names, version = "session", SESSION, GROWTH_NAMES, VERSION


class SessionsCosts(common.ProbeCosts, common.GraphOps):
    family, params, param_names, version = "session", SESSION, GROWTH_NAMES, VERSION

    def setup_cache(self):
        return self.measure()

    setup_cache.timeout = 1800


class Eager(common.StepBenchmark):
    family, params, param_names, version = "eager", EAGER, ["variant", "device"], VERSION


class EagerCosts(common.ProbeCosts):
    family, params, param_names, version = "eager", EAGER, ["variant", "device"], VERSION

    def setup_cache(self):
        return self.measure()

    setup_cache.timeout = 1800
