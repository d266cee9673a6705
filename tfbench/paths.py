"""Where things are, derived from this file once: the tfbench package's source, the project
that holds it (asv.conf.json, releases/, results/), and the path this process imported the
package by (a measuring process imports it through a link: tfbench.targets.run_isolated)."""

from __future__ import annotations

from pathlib import Path

IMPORTED_FROM = Path(__file__).parents[1]  # unresolved: as this process's tracebacks name it
PACKAGE = Path(__file__).resolve().parent
ROOT = PACKAGE.parent
