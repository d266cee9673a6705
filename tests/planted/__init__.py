"""A test-only asv suite with planted changes, for calibrating `tfbench gate` through the
path a user takes (asv results -> gate). Its commits name what each side plants; nothing
here is in the catalog."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
