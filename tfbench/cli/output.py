"""The commands' text output: a measurement, one per release, a bisection, a gate's rows."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from tfbench import escape, figures
from tfbench.measure.record import (
    FOOTPRINT,
    RSS_ONLY,
    Record,
    measured,
    rss_only_growth,
    stopped_in_warmup,
)
from tfbench.pairs.verdict import compared_line, time_line
from tfbench.units import format_precise as exact
from tfbench.units import format_value

if TYPE_CHECKING:
    from tfbench.sweep import Sweep


def _params(r: Record) -> str:
    return " ".join(f"{k}={v}" for k, v in r.get("params", {}).items())


def result(r: Record) -> str:
    """One measurement, figure by figure."""
    from tfbench.measure.growth import MIN_READINGS  # numpy: not for every command

    lines = [
        f"{r['scenario']}  {_params(r)}".rstrip(),
        f"  TensorFlow {r.get('tf_version') or 'not installed'}, device {r['device']}",
    ]
    if r["scenario"] == FOOTPRINT and measured(r):
        return "\n".join([*lines, *_footprint(r)])
    warmup_only = stopped_in_warmup(r)
    if not measured(r) and not warmup_only:
        lines.append(f"  {r['status']}: {r.get('error') or 'no reason given'}")
        return "\n".join(lines)
    if r["status"] == "over_budget":
        lines.append(f"  STOPPED {r.get('error', '')}; figures cover the iterations run")
    if warmup_only:
        ran = f"0 (stopped in warm-up, after {r['warmup_run']} of {r['warmup']})"
        verdict = "no verdict: stopped before the measured iterations (growth of the warm-up)"
        seconds = "n/a"
    else:
        ran = f"{r['iterations']} after {r['warmup']} warm-up"
        verdict = {True: "LEAK", False: "flat"}.get(
            r["leak"],
            f"no verdict: {r['iterations']} measured iterations, a verdict needs "
            f"at least {MIN_READINGS}",
        )
        seconds = f"{r['seconds_per_iteration'] * 1e3:.3f} ms"
    lines += [
        f"  iterations             {ran}",
        f"  time per iteration     {seconds}",
        *_heap_lines(r, verdict),
        f"  RSS peak increase      {exact(r['peak_increase_bytes'])}   (method {r['method']})",
        f"  RSS growth/iteration   {exact(r['growth_bytes_per_iteration'])}/iteration"
        + (f"   -> {verdict}" if r.get("leak_basis") != "heap" else ""),
        f"  allocator peak         {exact(r.get('allocator_peak_bytes'))}",
    ]
    if rss_only_growth(r):
        lines.append(f"  note: {RSS_ONLY}")
    return "\n".join(lines)


def _footprint(r: Record) -> list[str]:
    """TensorFlow's footprint: each figure the median of its fresh processes."""
    rss, heap = (figures.BY_NAME[f"footprint-{k}"] for k in ("rss", "heap"))
    return [
        f"  RSS after import       {exact(rss.of(r))}   (median of {r['repeats']} processes)",
        f"  heap in use            {exact(heap.of(r))}"
        + (f"   ({r['heap_note']})" if r.get("heap_note") else "   (every allocation counted)"),
        f"  import                 {r['import_seconds']:.2f} s",
    ]


def _heap_lines(r: Record, verdict: str) -> list[str]:
    """What the step keeps, the garbage Python's collector frees, the heap's growth between
    full collections and its peak (tfbench.measure.heap, .collector), or why not read."""
    lines = []
    if r.get("retained_bytes_per_iteration") is not None:
        low, high = r["retained_interval"]
        lines.append(
            f"  retained/iteration     {exact(r['retained_bytes_per_iteration'])}/iteration"
            f" [{exact(low)}, {exact(high)}]   -> {verdict}"
        )
    if r.get("confirmation"):
        lines.append(f"  confirmed              {confirmation_line(r)}")
    if r.get("garbage_bytes_per_iteration") is not None:
        objects = r.get("garbage_objects_per_iteration") or 0
        lines += [
            f"  garbage/iteration      {exact(r['garbage_bytes_per_iteration'])}/iteration"
            f" in {objects:,.0f} objects: what Python's collector frees",
            f"  heap growth/iteration  {exact(r.get('heap_growth_bytes_per_iteration'))}"
            "/iteration until a full collection",
        ]
    if r.get("collector"):
        lines.append(f"  collector              {collector_line(r['collector'])}")
    if r.get("heap_peak_increase_bytes") is not None:
        lines.append(f"  heap peak increase     {exact(r['heap_peak_increase_bytes'])}   (exact)")
    if r.get("heap_note"):
        lines.append(f"  heap: {r['heap_note']}")
    return lines


def confirmation_line(r: Record) -> str:
    """What the rounds read after a window that grew a little kept a call, the last round's
    interval, and what that says (tfbench.measure.growth)."""
    c = r["confirmation"]
    rates = ", ".join(exact(k["bytes_per_iteration"]) for k in c["rounds"])
    low, high = c["rounds"][-1]["interval"]
    said = "still growing as steadily: a leak" if r["leak"] else "a cache filling, not a leak"
    return (
        f"{rates}/iteration in {len(c['rounds'])} rounds of {c['calls']:,} calls more "
        f"(the last [{exact(low)}, {exact(high)}]): {said}"
    )


def collector_line(c: Mapping[str, Any]) -> str:
    """Python's collector as a reading found it, and the sawtooth a loop of the step draws:
    how high its garbage piles before a collection frees it, and how often."""
    from tfbench.explain.layers import advice

    said = (
        f"Python {c['python']}, thresholds {'/'.join(map(str, c['thresholds']))}, "
        f"{c['tracked']:,.0f} objects tracked"
    )
    if not c.get("tail_calls"):
        return f"{said}; no garbage"
    piles = []
    if c.get("young_every") and c.get("young_pile_bytes"):
        piles.append(f"{exact(c['young_pile_bytes'])} every {c['young_every']:,.1f} calls (young)")
    if c.get("full_every") and c.get("pile_bytes") is not None:
        piles.append(
            f"{exact(c['pile_bytes'])} every {c['full_every']:,.0f} calls (full: {advice(c)})"
        )
    if not piles:
        return f"{said}; no collection in {c['tail_calls']} calls of a loop"
    return f"{said}; a loop's garbage piles to {' and '.join(piles)}"


def _row(r: Record) -> str:
    if not measured(r):
        return f"{r['release']:<9} {r['status']}: {r.get('error') or ''}".rstrip()
    verdict = {True: "LEAK", False: "flat"}.get(r["leak"], "no verdict")
    retained = r.get("retained_bytes_per_iteration")
    interval = r.get("retained_interval") or (None, None)
    kept = (
        f"{exact(retained):>11} [{exact(interval[0])}, {exact(interval[1])}]"
        if retained is not None
        else f"{'n/a':>11}"
    )
    return (
        f"{r['release']:<9} {r['seconds_per_iteration'] * 1e3:>9.3f} ms  "
        f"{exact(r.get('heap_peak_increase_bytes')):>11}  {kept}"
        f"  {exact(r.get('garbage_bytes_per_iteration')):>11}  {_pile(r):>10}"
        f"  {exact(r['peak_increase_bytes']):>11}  {exact(r['growth_bytes_per_iteration']):>11}"
        f"  {verdict}{'*' if rss_only_growth(r) else ''}  {r['status']}"
    )


def _pile(r: Record) -> str:
    """How high a loop's garbage piles before Python's full collection frees it."""
    pile = (r.get("collector") or {}).get("pile_bytes")
    return exact(pile) if pile else "-"


HEADER = (
    "release    time/iter    heap peak  retained/iter [95% interval]  garbage/iter    piles to"
    "     RSS peak  RSS growth  leak  status"
)
PILES = (
    "piles to: how high a loop's garbage climbs before Python's full collection frees it "
    "(flat beside it is no leak, but a loop holds that much)"
)


FOOTPRINT_HEADER = "release      RSS after import  heap in use   import"


def _footprint_row(r: Record) -> str:
    if not measured(r):
        return f"{r['release']:<9} {r['status']}: {r.get('error') or ''}".rstrip()
    rss, heap = (exact(figures.BY_NAME[f"footprint-{k}"].of(r)) for k in ("rss", "heap"))
    return f"{r['release']:<9} {rss:>19} {heap:>12} {r['import_seconds']:>7.2f} s"


def releases(records: list[Record]) -> str:
    """One row per release: time per iteration, the heap's peak increase and what a step
    keeps (with its 95% interval), RSS's peak increase and growth, leak verdict, status."""
    head = records[0]
    footprint = head["scenario"] == FOOTPRINT
    lines = [f"{head['scenario']}  {_params(head)}".rstrip()]
    lines += [FOOTPRINT_HEADER, *map(_footprint_row, records)] if footprint else [HEADER]
    lines += [] if footprint else [_row(r) for r in records]
    return "\n".join(lines + _notes(records))


def _notes(records: list[Record]) -> list[str]:
    """What a table's marks mean, where a row carries one."""
    notes = []
    if any(measured(r) and _pile(r) != "-" for r in records):
        notes.append(PILES)
    if any(measured(r) and rss_only_growth(r) for r in records):
        notes.append(f"* {RSS_ONLY}")
    return notes


def bisection(found: Sweep) -> str:
    """Every change, largest first, each with its direction, releases and size; then every
    reading the bisection took, in release order."""
    rows = found.in_order()
    span = f"{rows[0]['release']} to {rows[-1]['release']}" if rows else "no release"
    read = f"{span} ({len(rows)} release{'s' * (len(rows) != 1)} read)"
    if found.changes:
        count = len(found.changes)
        head = [f"{found.metric}: {count} change{'s' * (count != 1)} over {read}, largest first"]
        width = max(len(f"{c.last_before} -> {c.first_after}") for c in found.changes)
        head += [
            f"  {c.direction:<6}  {f'{c.last_before} -> {c.first_after}':<{width}}  {c.said}"
            for c in found.changes
        ]
    else:
        head = [f"{found.metric}: no change over {read}"]
    return "\n".join(
        [*head, *_times(found.times), "readings (release order):", HEADER, *map(_row, rows)]
        + _notes(rows)
    )


def _times(times: list[Any]) -> list[str]:
    """Each two builds' times compared in pairs, a line each (kept text made plain)."""
    lines = [f"  {escape.plain(compared_line(c))}" for c in times]
    return ["time, read in pairs of processes:", *lines] if lines else []


def _gate(
    rows: list, old: str, new: str, time: Mapping[str, Any] | None, on: str | None
) -> list[Any]:
    """What a gate found, as blocks (tfbench.publish.blocks): its count, the time reader's
    line (the CPU it read `on`), and each row that changed with its evidence, worse first."""
    from tfbench.publish import blocks

    said: list[blocks.Block] = [
        blocks.Heading((blocks.Code(f"tfbench gate {old} {new}"), f": {len(rows)} change(s)"))
    ]
    if time:
        said.append(blocks.Paragraph((time_line(time, on),)))
    if not rows:
        said.append(blocks.Paragraph(("No change beyond the floors.",)))
        return said
    table = []
    for r in rows:
        was, now = (format_value(v, r.unit) for v in (r.old, r.new))
        cells = (r.direction, blocks.Code(r.name), r.metric, was, now, r.told)
        table.append(tuple(((cell,),) for cell in cells))
    said.append(blocks.Table(("", "point", "metric", "old", "new", "evidence"), tuple(table)))
    return said


def gate_markdown(
    rows: list, old: str, new: str, time: Mapping[str, Any] | None = None, on: str | None = None
) -> str:
    """The gate's rows as Markdown (a CI job's summary)."""
    from tfbench.publish import blocks

    return "\n".join(blocks.markdown(_gate(rows, old, new, time, on))) + "\n"


def gate(
    rows: list, old: str, new: str, time: Mapping[str, Any] | None = None, on: str | None = None
) -> str:
    """The gate's rows as a terminal shows them."""
    from tfbench.publish import blocks

    return "\n".join(blocks.terminal(_gate(rows, old, new, time, on)))


def _tf(found: dict) -> str:
    tf = found.get("tf") or {}
    if not tf:
        return "not imported"
    parts = [
        f"graph {tf.get('graph_ops') or 0:+.3g} ops",
        f"graphs alive {tf.get('graphs') or 0:+.3g}",
        f"variables {tf.get('variables') or 0:+.3g}",
        f"eager tensors {tf.get('tensors') or 0:+.3g}",
        f"traces {tf.get('traces') or 0:+.3g}",
        f"open Sessions {tf.get('sessions') or 0:+.3g}",
    ]
    if tf.get("gpu_bytes") is not None:
        parts.append(f"GPU memory {exact(tf['gpu_bytes'])}")
    return ", ".join(parts) + " a call"


def _made(found: dict) -> list[str]:
    """What a call makes of TensorFlow's, what holds what survives, and the cause."""
    from tfbench.explain.layers import cause_text

    made = found.get("made") or {}
    lines = []
    if made:
        at = f" (at {made['functions_at']})" if made.get("functions_at") else ""
        lines.append(
            f"  made a call            {made['functions']:.3g} tf.function{at}, "
            f"{made['graphs']:.3g} graphs traced"
        )
    held = found.get("holder")
    if held:
        lines.append(f"  what survives          a {held['type']}, held by {held['path']}")
    said = cause_text(found)
    return [*lines, f"  {said}"] if said else lines


def _kept_lines(found: dict) -> list[str]:
    """What the step keeps (the heap) and RSS's growth beside it, with the verdict."""
    verdict = "LEAK" if found["leak"] else "flat"
    rss, retained = found["rss_bytes_per_call"], found.get("retained_bytes_per_call")
    if retained is None:
        return [f"  RSS growth             {exact(rss):>12}/call  {verdict} (heap not read)"]
    return [
        f"  kept (the heap)        {exact(retained):>12}/call  {verdict}",
        f"  RSS growth             {exact(rss):>12}/call  of which not given back "
        f"{exact(found.get('unreturned_bytes_per_call'))}/call",
    ]


def explanation(found: dict) -> str:
    """An explaining run, layer by layer, and its conclusion."""
    from tfbench.explain.probe import NATIVE_CALLS, PYTHON_CALLS

    params = " ".join(f"{k}={v}" for k, v in found.get("params", {}).items())
    lines = [f"{found['scenario']}  {params}".rstrip()]
    if found["status"] != "ok":
        return "\n".join([*lines, f"  {found['status']}: {found.get('error') or ''}".rstrip()])
    rss, retained = found["rss_bytes_per_call"], found.get("retained_bytes_per_call")
    whole = rss if retained is None else retained

    def share(part: float) -> str:  # tracemalloc's window is its own: at most all of it
        return f"{min(part / whole, 1.0):>5.0%} of it" if whole > 0 else ""

    lines += [
        f"  TensorFlow {found.get('tf_version') or 'not installed'}, device {found['device']};"
        f" {found['iterations']} calls untraced, then {min(found['iterations'], PYTHON_CALLS)}"
        f" and {min(found['iterations'], NATIVE_CALLS)} traced, after {found['warmup']} warm-up"
        " (explain's own run: traced, its figures are its own)",
        *_kept_lines(found),
        f"  Python (tracemalloc)   {exact(found['python_bytes_per_call']):>12}/call  "
        f"{share(found['python_bytes_per_call'])}",
        *(f"    {s['where']}  {exact(s['bytes_per_call'])}/call" for s in found["sites"]),
        "  objects                "
        + (", ".join(f"{o['per_call']:+.3g} {o['type']}" for o in found["objects"]) or "none")
        + " a call" * bool(found["objects"]),
        f"  TensorFlow             {_tf(found)}",
        *_made(found),
        f"  native, unowned        {exact(found['native_bytes_per_call']):>12}/call  "
        f"{share(found['native_bytes_per_call'])}",
    ]
    if found.get("garbage_bytes_per_call") is not None:
        lines.append(
            f"  garbage (collected)    {exact(found['garbage_bytes_per_call']):>12}/call  "
            f"{found.get('garbage_objects_per_call') or 0:.3g} objects a call"
        )
        cycles = found.get("garbage") or {}
        lines += [f"    {t['per_call']:+.3g} {t['type']}/call" for t in cycles.get("types", [])]
        lines += [
            f"    {s['where']}  {s['per_call']:+.3g} objects/call" for s in cycles.get("sites", [])
        ]
    if found.get("collector"):
        lines.append(f"    collector: {collector_line(found['collector'])}")
    memray = found["native"]
    if memray.get("available"):
        lines.append(f"    memray: {exact(memray['bytes_per_call'])}/call never freed")
        lines += [f"    {s['where']}  {exact(s['bytes_per_call'])}/call" for s in memray["stacks"]]
    else:
        lines.append(f"    native stacks unavailable: {memray.get('why')}")
    return "\n".join([*lines, f"  -> {found['conclusion']}"])


def explanations(records: list[dict]) -> str:
    """One line per release: its conclusion, or why it has none."""
    head = records[0]
    params = " ".join(f"{k}={v}" for k, v in head.get("params", {}).items())
    lines = [f"{head['scenario']}  {params}".rstrip()]
    for r in records:
        said = r.get("conclusion") if r["status"] == "ok" else f"{r['status']}: {r.get('error')}"
        lines.append(f"{r['release']:<10} {said}")
    return "\n".join(lines)


def nightly(data: Mapping[str, Any]) -> str:
    """A nightly bisection (tfbench.nightly.run.kept): the commits that changed the figure,
    or why no build is named; every build read, with its figure."""
    from tfbench.nightly import builds, policy

    metric, kind = data["metric"], data["kind"]
    commits = {b["version"]: b.get("git_version") for b in data["builds"]}
    good, bad = data["last_good"], data["first_bad"]
    if kind == "step":
        head = [
            f"{metric} changes between nightlies {good} and {bad}: a change made after "
            f"{builds.commit(commits.get(good)) or good}, no later than "
            f"{builds.commit(commits.get(bad)) or bad}",
            f"  last good  {good}  {commits.get(good) or '?'}",
            f"  first bad  {bad}  {commits.get(bad) or '?'}",
            f"  commits    {data.get('compare_url') or 'n/a (a GIT_VERSION is missing)'}",
        ]
        head += _steps(data)
    elif kind == "drift":
        head = [f"{metric} drifts over the nightlies: no single build holds the change"]
    elif kind == "none":
        first, last = data["builds"][0]["version"], data["builds"][-1]["version"]
        head = [
            f"{metric}: the range's ends ({first}, {last}) read alike: no nightly shows the "
            "change; it is on the release branch (a cherry-pick) or in a dependency"
        ]
        if data.get("dependencies"):
            head.append(
                "  locked versions that differ between the releases: "
                + ", ".join(data["dependencies"])
            )
    else:
        after = "in pairs" if data.get("times") else f"after {policy.MAX_READINGS} readings"
        why = (
            f"{data['undecided']} reads neither like the first build nor like the last {after}"
            if data.get("undecided")
            else "the ends' times read neither apart nor alike in pairs"
            if data.get("times")
            else "too few builds could be measured"
            if data["builds"]
            else "the index holds no nightly build between them"
        )
        head = [f"{metric}: undecided: {why}"]
    rows = []
    for b in data["builds"]:
        readings = data["readings"].get(b["version"])
        if readings:
            value = policy.median(metric, readings)
            mark = {good: "  last good", bad: "  first bad"}.get(b["version"], "")
            rows.append(
                f"  {b['version']:<20} {policy.figure_text(metric, value):>18}  ({len(readings)} "
                f"readings)  {commits.get(b['version']) or ''}{mark}"
            )
    skipped = [f"  {v}: skipped, {escape.plain(why)}" for v, why in data["broken"].items()]
    return "\n".join(
        [*head, *_times(data.get("times", [])), "builds read (oldest first):", *rows, *skipped]
        + [f"({data['seconds']:.0f} s)"]
    )


def _steps(data: Mapping[str, Any]) -> list[str]:
    """Every step of a nightly bisection, largest first, with its direction and size (its
    builds' medians; time, the pairs' ratio)."""
    from tfbench.nightly import policy

    metric, lines = data["metric"], []
    ratios = {(t["old"], t["new"]): t.get("ratio") for t in data.get("times", [])}
    for a, b in data.get("steps", []):
        if metric == "time":
            ratio = ratios.get((a, b)) or 1.0
            worse, said = ratio > 1, f"x{ratio:.3f}"
        else:
            va, vb = (policy.median(metric, data["readings"].get(v, [])) for v in (a, b))
            worse = (vb or 0.0) > (va or 0.0)
            said = f"{policy.figure_text(metric, va)} -> {policy.figure_text(metric, vb)}"
        lines.append(f"  {'worse' if worse else 'better':<6}  {a} -> {b}  {escape.plain(said)}")
    return ["  every step, largest first:", *lines] if len(lines) > 1 else []


def watch_calls(read: list[str], calls: list[Any]) -> str:
    """A run of the nightly watch (tfbench.nightly.watch): the builds read, each step and
    drift over the history with its builds' commits, or that none is called."""
    from tfbench.nightly import watch

    lines = [f"read: {', '.join(read) or 'no build (none new)'}"]
    for c in calls:
        a, b = c.shown()
        lines += [
            f"{c.kind}: {c.sentinel} {c.metric} {a} -> {b}, "
            f"{c.before.version} -> {c.after.version}" + (f" ({c.state})" if c.state else ""),
            f"  readings {c.readings_text()}",
            f"  commits  {c.compare_url or 'n/a (a GIT_VERSION is missing)'}",
        ]
    if not calls:
        lines.append("no step and no drift in the nightly history")
    waiting = sum(c.kind == "step" and not c.confirmed for c in calls)
    if waiting:
        lines.append(
            f"{waiting} step(s) not confirmed: tfbench watch again reads toward them "
            f"({watch.ROUNDS} builds a run)"
        )
    return "\n".join(lines)
