"""TensorFlow's own footprint: a fresh process after `import tensorflow` and one op on the
device (tfbench/scenarios/footprint.py). GPU is a skip where there is none."""

from tfbench import probes, targets
from tfbench.measure.devices import DEVICES, Unsupported
from tfbench.scenarios import footprint

from . import common


class Footprint(common._Versioned):
    params, param_names = [DEVICES], ["device"]
    version = common.version(footprint)

    def setup_cache(self):  # each figure the median of the run's processes a probe point
        return {d: targets.measure_footprint(d, repeats=probes.REPEATS) for d in DEVICES}

    setup_cache.timeout = 600

    def setup(self, cache, device):
        self.result = cache[device]
        if self.result["status"] != "ok":
            raise Unsupported(f"{self.result['status']}: {self.result.get('error')}")

    track_footprint_rss = common.track("track_footprint_rss")
    track_footprint_heap = common.track("track_footprint_heap")
