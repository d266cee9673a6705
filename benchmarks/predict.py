"""Prediction with a small Keras model, and sessions shared by threads
(tfbench/scenarios/predict.py, tfbench/scenarios/threads.py)."""

from tfbench.measure.devices import DEVICES
from tfbench.scenarios import predict, threads, variants

from . import common

PREDICT = [variants(predict.PREDICT), DEVICES]
THREADS = [variants(threads.THREADED), threads.THREADS, DEVICES]


class Prediction(common.StepBenchmark):
    family, params, param_names = "predict", PREDICT, ["variant", "device"]
    version = common.version(predict)


class PredictionCosts(common.ProbeCosts):
    family, params, param_names = "predict", PREDICT, ["variant", "device"]
    version = common.version(predict)

    def setup_cache(self):
        return self.measure()

    setup_cache.timeout = 1800


class Threads(common.StepBenchmark):
    family, params, param_names = "threads", THREADS, ["variant", "threads", "device"]
    version = common.version(threads)
    timeout = 300  # JOIN_TIMEOUT_S per thread, with room to report it


class ThreadsCosts(common.ProbeCosts, common.GraphOps):
    family, params, param_names = "threads", THREADS, ["variant", "threads", "device"]
    version = common.version(threads)

    def setup_cache(self):
        return self.measure()

    setup_cache.timeout = 1800
