# asv imports this directory as a package; tfbench (the instrument) lives beside it and is
# not installed into asv's environments, so put the project root on the path.
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

# asv's forkserver (asv.conf.json) imports the suite once and forks every benchmark from
# that process, as tfbench's time server does its readings: importing TensorFlow here
# spares each one the import. asv's discovery and each family's setup_cache are processes
# of their own that never start it (a probe is measured in a process forked from a
# measuring parent, tfbench.measure.parents): they skip the import, seconds each. (The
# glue, common.py, does not import it: a suite without TensorFlow, tests/planted, shares it.)
if sys.argv[1:2] not in (["discover"], ["setup_cache"]):
    import tensorflow  # noqa: F401
