"""The leak verdict's false-positive rate at full size: a flat loop read in 20 fresh
processes (README command 2 reads it in 3: tests/test_calibration.py)."""

from __future__ import annotations

import pytest
from conftest import measure_json

pytestmark = pytest.mark.validation


def test_flat_loop_reads_flat_20_of_20(synthetic):
    verdicts = [measure_json(synthetic("flat"), "--iterations", "500")["leak"] for _ in range(20)]
    assert verdicts == [False] * 20
