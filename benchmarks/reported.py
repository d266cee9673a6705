"""TensorFlow's reported memory leaks, each its reporter's reproducer
(tfbench/scenarios/reported.py); tfbench.answers reads each one's answer from its record.

A reproducer that fails on a release is a skip there whose reason is its error."""

from tfbench.scenarios import reported, variants

from . import common

REPORTS = [variants(reported.BY_STEP)]


class Reported(common.StepBenchmark):
    family, params, param_names = "reported", REPORTS, ["variant"]
    version = common.version(reported)
    timeout = 300  # a fit of a new model a call


class ReportedCosts(common.ProbeCosts, common.GraphOps, common.Traces):
    family, params, param_names = "reported", REPORTS, ["variant"]
    version = common.version(reported)

    def setup_cache(self):
        return self.measure()

    setup_cache.timeout = 3600

    track_graph_ops_per_call = common.track("track_graph_ops_per_call")
