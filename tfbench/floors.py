"""How far apart two readings must be before tfbench calls them a change: the floors, and
the one rule that applies them (`apart`, and `flipped` for a verdict), which `tfbench gate`
(tfbench.gate.rules), the nightly bisection (tfbench.nightly.policy) and `tfbench bisect`
(tfbench.sweep: one reading a side, whose slope's interval must part too) ask. Each floor
was set from the same release measured against itself on one machine; docs/gate.md has how,
and the figures.
"""

from __future__ import annotations

from collections.abc import Callable

from tfbench.units import KiB, MiB

# time: a shift of the whole suite's times (gate.shifts) beyond 1 + TIME_FLOOR; the gate's and
# bisect's time verdicts are the pair reader's (tfbench.pairs), not a floor
TIME_FLOOR = 0.15
# two single measurements, one process each (the report's Python axis): only a ratio this large
TIME_RATIO = 1.25
# a whole process's peak RSS (peakmem_: TensorFlow's own ~0.5 GiB included)
PEAKMEM_FLOOR = 8 * MiB
# the probe's peak increase and allocator peak: the larger of a size and a share
PEAK_FLOOR, PEAK_SHARE = 1 * MiB, 0.05
# growth per iteration: a 40-iteration window's slope is coarse
GROWTH_FLOOR, GROWTH_SHARE = 16 * KiB, 0.25
# what a step keeps (the heap in use, tfbench.measure.heap) is read to the byte: the
# history's three fresh processes a point read within 1 KiB/iteration at 887 of 891
# point-releases, the largest leaks within 0.6% (docs/validation/gate.md)
RETAINED_FLOOR, RETAINED_SHARE = 1 * KiB, 0.02
# garbage: what collections free a call, summed at each of a window's points; model.predict
# on 2.22.0rc0 read 180,431-180,743 B/call in three fresh processes, a planted 64 KiB cycle
# its own size in each (tests/test_calibration.py): a tenth leaves room for a young
# collection's timing
GARBAGE_FLOOR, GARBAGE_SHARE = 1 * KiB, 0.10
# the heap's growth between full collections rests on the tail's few young collections:
# model.predict read 15.7 and 21.1 KiB/call in two processes
HEAP_GROWTH_FLOOR, HEAP_GROWTH_SHARE = 2 * KiB, 0.50
# the heap's peak is exact, but at the loop family's size-256 points TensorFlow's threads
# take 2.06 MiB more in some processes than in others (22 of 891 point-releases of the
# history read so in one of their three processes)
HEAP_PEAK_FLOOR = 5 * MiB // 2
# TensorFlow's footprint after import: RSS read 0.2 MiB apart, the heap 4 KiB
FOOTPRINT_RSS_FLOOR, FOOTPRINT_HEAP_FLOOR = 4 * MiB, 512 * KiB


def _largest(values: list[float]) -> float:
    return max(map(abs, values))


def peak(values: list[float]) -> float:
    """The floor of a peak change between readings `values` (both sides')."""
    return max(PEAK_FLOOR, PEAK_SHARE * _largest(values))


def growth(values: list[float]) -> float:
    """The floor of a growth change between readings `values` (both sides')."""
    return max(GROWTH_FLOOR, GROWTH_SHARE * _largest(values))


def retained(values: list[float]) -> float:
    """The floor of a change in what a step keeps, per iteration."""
    return max(RETAINED_FLOOR, RETAINED_SHARE * _largest(values))


def garbage(values: list[float]) -> float:
    """The floor of a change in the garbage a step leaves, per iteration."""
    return max(GARBAGE_FLOOR, GARBAGE_SHARE * _largest(values))


def heap_growth(values: list[float]) -> float:
    """The floor of a change in the heap's growth between full collections."""
    return max(HEAP_GROWTH_FLOOR, HEAP_GROWTH_SHARE * _largest(values))


def heap_peak(values: list[float]) -> float:
    """The floor of a change in the heap's peak increase."""
    return max(HEAP_PEAK_FLOOR, PEAK_SHARE * _largest(values))


def leaking_peak(values: list[float]) -> float:
    """A leaking pattern's peak is its growth over the window: read as precisely as that."""
    return max(PEAK_FLOOR, GROWTH_SHARE * _largest(values))


def time(values: list[float]) -> float:
    """Two single measurements' times: a ratio beyond TIME_RATIO of the smaller."""
    return (TIME_RATIO - 1) * min(map(abs, values))


def process_peak(values: list[float]) -> float:
    """A whole process's peak RSS (asv's peakmem_)."""
    return PEAKMEM_FLOOR


def apart(floor: Callable[[list[float]], float], a: list[float], b: list[float]) -> int:
    """Whether two sides' readings of a figure part: 1 where every reading of `b` lies above
    every one of `a` by more than the floor of both sides' readings, -1 below, 0 not."""
    gap = floor(a + b)
    if min(b) - max(a) > gap:
        return 1
    if min(a) - max(b) > gap:
        return -1
    return 0


def flipped(a: list[float], b: list[float]) -> int | None:
    """A verdict's change between two sides' readings (1 leak, 0 flat): 1 where every
    reading of `a` is flat and every one of `b` a leak, -1 the other way, 0 where the two
    sides agree throughout, None where a side is split (no verdict of its own)."""
    if len(set(a)) != 1 or len(set(b)) != 1:
        return None
    return (b[0] > a[0]) - (b[0] < a[0])
