"""The report's first screen: the newest release in the patterns' own words, largest first,
each with its size and the CPUs it holds on; leaks; what got better."""

from types import SimpleNamespace

from tfbench.gate.rules import Change
from tfbench.publish import by_cpu, headline
from tfbench.publish.families import Family
from tfbench.units import MiB

LOOP = Family(
    "loops.MatrixPower",
    ["variant", "gradient", "size", "loop_iterations", "device"],
    [["'python_matmul'", "'numpy'"], ["'none'"], ["64"], ["100"], ["'CPU'"]],
)
CONFIRMED = {"readings": [5, 5]}


def _row(metric, variant, old, new, unit="bytes", direction="worse", evidence=CONFIRMED):
    params = {"variant": f"'{variant}'", "gradient": "'none'", "size": "64"}
    params |= {"loop_iterations": "100", "device": "'CPU'"}
    costs = "" if metric.startswith("time_") else "Costs"
    name = f"loops.MatrixPower{costs}.{metric}"
    return Change(name, name, params, metric, direction, old, new, unit, dict(evidence))


def _footprint(metric, old, new):
    name = f"footprint.Footprint.{metric}"
    return Change(name, name, {"device": "'CPU'"}, metric, "worse", old, new, "bytes", CONFIRMED)


def _screen(rows, cpus=None, leaking=()):
    newest = SimpleNamespace(pair=("v2.21.0", "v2.22.0rc0"), rows=rows)
    return headline.screen(newest, list(leaking), [LOOP], cpus, "on cpu amd-x")


def test_the_heap_leads_then_rss_then_time_each_largest_first():
    rows = [
        _row("time_step", "numpy", 1e-3, 1.5e-3, unit="seconds"),
        _row("time_step", "python_matmul", 1e-3, 1.1e-3, unit="seconds"),
        _footprint("track_footprint_rss", 500 * MiB, 531 * MiB),
        _footprint("track_footprint_heap", 173 * MiB, 185 * MiB),
        _row("track_retained_per_iteration", "python_matmul", 0, 2048, "bytes/iteration"),
    ]
    screen = _screen(rows)
    assert screen.title == "What changed in v2.22.0rc0 (candidate), against v2.21.0"
    (heading, worse), _, _ = screen.parts
    assert heading == "Worse"
    assert worse[0].startswith(
        "TensorFlow after import, in a fresh process (device=CPU): footprint heap 173 MiB -> "
        "185 MiB; footprint RSS 500 MiB -> 531 MiB (the heap's figure: any CPU)"
    )
    # the patterns' own words (the catalog's), the heap's figure before time
    assert worse[1].startswith("matrix power by naive Python for-loop of eager tf.matmul (")
    assert "retained 0 B/call -> 2 KiB/call" in worse[1]
    assert "time 1 ms -> 1.5 ms (x1.50) (on cpu amd-x)" in worse[2]  # numpy: the larger ratio
    assert len(worse) == 3  # python_matmul's time is told with its point, above


def test_a_row_read_too_few_times_or_rss_alone_is_not_on_the_first_screen():
    once = _row(
        "track_retained_per_iteration",
        "numpy",
        0,
        4096,
        "bytes/iteration",
        evidence={"readings": [1, 1]},
    )
    rss = _row("track_peak_increase", "numpy", 0, 8 * MiB, direction="rss only")
    (_, worse), (_, leaks), (_, better) = _screen([once, rss]).parts
    assert worse == ["nothing measured here got worse"]
    assert better == ["nothing measured here got better"]
    assert leaks == ["none: no pattern keeps memory without bound"]


def test_a_time_change_says_on_which_cpus_it_holds():
    point = "loops.MatrixPower('numpy', 'none', 64, 100, 'CPU')"
    general = by_cpu.ByCpu(
        ["cpu a", "cpu b"],
        [by_cpu.Group("worse", ("cpu a", "cpu b"), [(point, ["x1.5", "x1.4"])])],
    )
    one = by_cpu.ByCpu(
        ["cpu a", "cpu b"], [by_cpu.Group("worse", ("cpu b",), [(point, ["x1.0", "x1.4"])])]
    )
    row = _row("time_step", "numpy", 1e-3, 1.5e-3, unit="seconds")
    assert _screen([row], general).parts[0][1][0].endswith("(on each CPU that read it)")
    assert _screen([row], one).parts[0][1][0].endswith("(on cpu b only)")


def test_leaks_and_better_are_told_and_the_rest_counted():
    rows = [
        _row(
            "track_retained_per_iteration",
            "python_matmul",
            4096 + k,
            0,
            "bytes/iteration",
            "better",
        )
        for k in range(1)
    ]
    leaking = [(f"p{k}", "loop.python_matmul", {"size": k}) for k in range(headline.SHOWN + 2)]
    (_, _), (heading, leaks), (_, better) = _screen(rows, leaking=leaking).parts
    assert heading == "Leaks on v2.22.0rc0 (candidate)"
    assert leaks[0] == "matrix power by naive Python for-loop of eager tf.matmul (size=0)"
    assert leaks[-1] == "and 2 more" and len(leaks) == headline.SHOWN + 1
    assert better[0].endswith("retained 4 KiB/call -> 0 B/call (the heap's figure: any CPU)")


def test_no_pair_no_screen():
    assert headline.screen(None, [], [LOOP], None, "cpu") is None


def test_both_renderers_open_a_machine_with_its_first_screen():
    from test_report import data

    from tfbench.publish import html, markdown, report

    built = report.build(data(leak=(1, 1, 1), times=(0.010, 0.010, 0.010)))
    md = markdown.render(built)
    first = md.index("### What changed in v1.2.0, against v1.1.0")
    assert first < md.index("### Summary")
    assert md.index("#### Worse") < md.index("#### Leaks on v1.2.0") < md.index("#### Better")
    page = html.render(built)
    assert page.index('<h3 id="screen">What changed in v1.2.0') < page.index('id="summary"')
