"""Prediction with a small Keras model, and sessions shared by threads
(tfbench/scenarios/predict.py, tfbench/scenarios/threads.py)."""

from tfbench import memory, probe, suite
from tfbench.devices import DEVICES
from tfbench.scenarios import predict, threads, variants

PREDICT = [variants(predict.PREDICT), DEVICES]
THREADS = [variants(threads.THREADED), threads.THREADS, DEVICES]


class Prediction(suite.StepBenchmark):
    family, params, param_names = "predict", PREDICT, ["variant", "device"]
    version = suite.code_version(predict)


class PredictionCosts(suite.ProbeCosts):
    family, params, param_names = "predict", PREDICT, ["variant", "device"]
    version = suite.code_version(predict, probe, memory)

    def setup_cache(self):
        return self.measure()

    setup_cache.timeout = 1800


class Threads(suite.StepBenchmark):
    family, params, param_names = "threads", THREADS, ["variant", "threads", "device"]
    version = suite.code_version(threads)
    timeout = 300  # JOIN_TIMEOUT_S per thread, with room to report it


class ThreadsCosts(suite.ProbeCosts, suite.GraphOps):
    family, params, param_names = "threads", THREADS, ["variant", "threads", "device"]
    version = suite.code_version(threads, probe, memory)

    def setup_cache(self):
        return self.measure()

    setup_cache.timeout = 1800
