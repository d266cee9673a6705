"""TensorFlow's own footprint: a fresh process after `import tensorflow` and one op on the
device (tfbench/scenarios/footprint.py). GPU is a skip where there is none."""

from tfbench import targets
from tfbench.measure.devices import DEVICES, Unsupported
from tfbench.scenarios import footprint

from . import common


class Footprint(common._Versioned):
    params, param_names = [DEVICES], ["device"]
    version = common.version(footprint)

    def setup_cache(self):
        found = {d: targets.FootprintTarget({"device": d}) for d in DEVICES}
        return {d: targets.measure(target) for d, target in found.items()}

    setup_cache.timeout = 600

    def setup(self, cache, device):
        self.result = cache[device]
        if self.result["status"] != "ok":
            raise Unsupported(f"{self.result['status']}: {self.result.get('error')}")

    track_footprint_rss = common.track("track_footprint_rss")
    track_footprint_heap = common.track("track_footprint_heap")
