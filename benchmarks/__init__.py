# asv imports this directory as a package; tfbench (the instrument) lives beside it and is
# not installed into asv's environments, so put the project root on the path.
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
