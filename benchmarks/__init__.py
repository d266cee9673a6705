# asv imports this directory as a package; tfbench (the instrument) lives beside it and is
# not installed into asv's environments, so put the project root on the path.
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

# asv's forkserver (asv.conf.json) imports the suite once and forks every benchmark from
# that process, as tfbench's time server does its readings: importing TensorFlow here
# spares each one the import. (The glue, common.py, does not: a suite without TensorFlow,
# tests/planted, shares it.)
import tensorflow  # noqa: E402, F401
