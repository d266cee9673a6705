"""Units and their display: the one place that knows a MiB and how a figure is printed."""

from __future__ import annotations

KiB = 1 << 10
MiB = 1 << 20
GiB = 1 << 30


def format_bytes(n: float | None, spec: str = ".3g") -> str:
    """1.5 MiB, 812 B (the number formatted by `spec`); n/a for None."""
    if n is None:
        return "n/a"
    for name, size in (("GiB", GiB), ("MiB", MiB), ("KiB", KiB)):
        if abs(n) >= size:
            return f"{n / size:{spec}} {name}"
    return f"{n:.0f} B"


def format_seconds(s: float | None) -> str:
    """2.5 ms, 1.2 s; n/a for None."""
    if s is None:
        return "n/a"
    for name, scale in (("s", 1), ("ms", 1e-3), ("us", 1e-6)):
        if abs(s) >= scale:
            return f"{s / scale:.3g} {name}"
    return f"{s * 1e9:.3g} ns"


def format_value(value: float | None, unit: str) -> str:
    """A benchmark value in asv's unit for it (seconds, bytes, bytes/iteration, or a count)."""
    if value is None:
        return "n/a"
    if unit == "seconds":
        return format_seconds(value)
    if unit.startswith("bytes"):
        return format_bytes(value) + ("/it" if "iteration" in unit else "")
    return f"{value:g}"
