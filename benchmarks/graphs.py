"""Graph construction vs eager, and TF1 sessions (tfbench/scenarios/graphs.py).

`allow_growth` is a GPU setting: CPU points with it on are skipped, as is GPU without one.
"""

from tfbench import memory, probe, suite
from tfbench.devices import DEVICES
from tfbench.scenarios import graphs, variants

GRAPH = [variants(i for i in graphs.GRAPH if i.startswith("graph.")), ["off", "on"], DEVICES]
SESSION = [variants(i for i in graphs.GRAPH if i.startswith("session.")), ["off", "on"], DEVICES]
EAGER = [variants(graphs.EAGER), DEVICES]
GROWTH_NAMES = ["variant", "allow_growth", "device"]
VERSION = suite.code_version(graphs)
COSTS_VERSION = suite.code_version(graphs, probe, memory)


class GraphConstruction(suite.StepBenchmark):
    family, params, param_names, version = "graph", GRAPH, GROWTH_NAMES, VERSION


class GraphConstructionCosts(suite.ProbeCosts, suite.GraphOps):
    family, params, param_names, version = "graph", GRAPH, GROWTH_NAMES, COSTS_VERSION

    def setup_cache(self):
        return self.measure()

    setup_cache.timeout = 1800


class Sessions(suite.StepBenchmark):
    family, params, param_names, version = "session", SESSION, GROWTH_NAMES, VERSION


class SessionsCosts(suite.ProbeCosts, suite.GraphOps):
    family, params, param_names, version = "session", SESSION, GROWTH_NAMES, COSTS_VERSION

    def setup_cache(self):
        return self.measure()

    setup_cache.timeout = 1800


class Eager(suite.StepBenchmark):
    family, params, param_names, version = "eager", EAGER, ["variant", "device"], VERSION


class EagerCosts(suite.ProbeCosts):
    family, params, param_names, version = "eager", EAGER, ["variant", "device"], COSTS_VERSION

    def setup_cache(self):
        return self.measure()

    setup_cache.timeout = 1800
