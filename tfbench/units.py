"""Units and their display: the one place that knows a MiB and how a figure is printed."""

from __future__ import annotations

KiB = 1 << 10
MiB = 1 << 20
GiB = 1 << 30


def _scaled(n: float, units: tuple[tuple[str, float], ...], spec: str) -> str:
    """n in the largest of `units` it reaches (the last at least); a figure that rounds to
    1000 of a unit (1023 KiB at 3 digits: 1.02e+03) in the unit above."""
    i = next((i for i, (_, size) in enumerate(units) if abs(n) >= size), len(units) - 1)
    name, size = units[i]
    text = f"{n / size:{spec}}"
    if "e" in text and i:
        name, size = units[i - 1]
        text = f"{n / size:{spec}}"
    return f"{text} {name}"


def format_bytes(n: float | None, spec: str = ".3g") -> str:
    """1.5 MiB, 812 B (the number formatted by `spec`); n/a for None."""
    if n is None:
        return "n/a"
    if abs(n) < KiB:
        return f"{n:.0f} B"
    return _scaled(n, (("GiB", GiB), ("MiB", MiB), ("KiB", KiB)), spec)


def format_precise(n: float | None) -> str:
    """Bytes to two decimals (1.00 MiB): a measurement's own figures, as the CLI prints them."""
    return format_bytes(n, ".2f")


def format_seconds(s: float | None) -> str:
    """2.5 ms, 1.2 s; n/a for None."""
    if s is None:
        return "n/a"
    return _scaled(s, (("s", 1), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9)), ".3g")


def format_value(value: float | None, unit: str, spec: str = ".3g", per: str = "it") -> str:
    """A figure in asv's unit for it (tfbench.figures): a time, bytes (a slope's bytes
    `per` iteration or call), a verdict (LEAK or flat), a count with its unit; n/a for
    None. The one way a figure is printed."""
    if value is None:
        return "n/a"
    if unit == "seconds":
        return format_seconds(value)
    if unit.startswith("bytes"):
        return format_bytes(value, spec) + (f"/{per}" if "/" in unit else "")
    if unit.startswith("leak"):
        return "LEAK" if value >= 0.5 else "flat"
    return f"{value:g} {unit}".rstrip()
