"""Binding a scenario's params (as typed on the command line) and displaying units."""

import pytest

from tfbench.scenarios import ParamError, Scenario
from tfbench.units import format_bytes, format_seconds, format_value

S = Scenario(
    "fam.s",
    "a test scenario",
    prepare=lambda **p: p,
    params={"size": (64, 256), "mode": ("a", "b"), "device": ("CPU", "GPU")},
)


def test_defaults_are_the_first_values_and_text_becomes_numbers():
    assert S.bind({}) == {"size": 64, "mode": "a", "device": "CPU"}
    assert S.bind({"size": "1000", "mode": "b"}) == {"size": 1000, "mode": "b", "device": "CPU"}


@pytest.mark.parametrize(
    "given,message",
    [
        ({"colour": "red"}, "fam.s has no param colour; its params: size, mode, device"),
        ({"size": "big"}, "size must be a positive integer, got 'big'"),
        ({"size": "0"}, "size must be a positive integer, got '0'"),
        ({"mode": "c"}, "mode='c' is not one of a, b"),
    ],
)
def test_bad_params_name_the_valid_choices(given, message):
    with pytest.raises(ParamError) as caught:
        S.bind(given)
    assert message in str(caught.value)


def test_a_benchmark_point_the_scenario_lacks_is_a_skip():
    from tfbench.measure.devices import Unsupported

    with pytest.raises(Unsupported, match="is not one of"):
        S.benchmark_step(mode="z")


def test_units():
    assert format_bytes(None) == "n/a" and format_bytes(812) == "812 B"
    assert format_bytes(1536) == "1.5 KiB" and format_bytes(1 << 20, ".2f") == "1.00 MiB"
    # a figure that rounds to 1000 of a unit is told in the next (the report read 1.02e+03 KiB)
    assert format_bytes(1020 * 1024) == "0.996 MiB" and format_bytes(999 * 1024) == "999 KiB"
    assert format_seconds(0.0009997) == "1 ms" and format_seconds(0) == "0 ns"
    assert format_seconds(0.0025) == "2.5 ms" and format_seconds(3e-8) == "30 ns"
    assert format_value(2048, "bytes/iteration") == "2 KiB/it"
    assert format_value(7, "operations") == "7 operations"
    assert format_value(2048, "bytes/iteration", ".2f", per="call") == "2.00 KiB/call"
    assert format_value(1, "leak (1) or flat (0)") == "LEAK" and format_value(None, "s") == "n/a"
