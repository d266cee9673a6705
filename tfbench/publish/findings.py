"""The report's "Articles" section: each article's examples as written (the `article`
family), what each literally does on every release, the catalog's isolating variants for
the cause the article names, and a one-line finding derived from those figures by the
rules in `finding` (no text is written per release by hand).
"""

from __future__ import annotations

from dataclasses import dataclass

from tfbench.publish.articles import ARTICLES, Article, Example, Isolating
from tfbench.publish.claims import GARBAGE
from tfbench.publish.families import Family, reason
from tfbench.publish.reasons import one_line
from tfbench.publish.results import MachineResults
from tfbench.units import MiB, format_bytes, format_seconds

FAMILY = "articles.Articles"  # the step benchmarks of tfbench/scenarios/articles.py
GRAPH_GROWTH = 0.5  # operations added per call, on average, that count as graph growth


@dataclass(frozen=True)
class Literal:
    """What an example as written did on one release."""

    release: str
    error: str | None = None  # why it has no figures (its exception), None if measured
    time: float | None = None
    peak: float | None = None  # the heap's where read, else RSS's
    growth: float | None = None  # what a step keeps (the heap) where read, else RSS's
    heap: bool = True  # growth is the heap's; False: RSS's (the heap was not read)
    garbage: float | None = None  # what Python's collector frees a call, where read
    leak: bool | None = None
    ops_per_call: float | None = None
    traces: float | None = None

    @property
    def measured(self) -> bool:
        return self.error is None and self.leak is not None

    def text(self) -> str:
        if self.error is not None:
            return f"fails: {self.error}"
        if self.leak is None:
            return "no value"
        parts = [
            format_seconds(self.time) if self.time is not None else "time n/a",
            f"peak +{format_bytes(self.peak)}" if self.peak is not None else "peak n/a",
            f"LEAK {format_bytes(self.growth)}/call" if self.leak else "flat",
        ]
        if self.garbage is not None and self.garbage >= GARBAGE:
            parts.append(f"garbage {format_bytes(self.garbage)}/call")
        if self.ops_per_call is not None:
            parts.append(f"{self.ops_per_call:+g} ops/call")
        if self.traces is not None:
            parts.append(f"{self.traces:g} trace(s)")
        return " · ".join(parts)


def _first(*values: float | None) -> float | None:
    """The heap's figure where it was read, else RSS's."""
    return next((v for v in values if v is not None), None)


def literal(
    family: Family, machine: MachineResults, variant: str, tag: str, python: str | None = None
) -> Literal:
    """What a variant did on a release, on the history's Python or `python` (where it has
    no figures, the probe's reason is kept for the history's Python only)."""
    combo = (repr(variant),)

    def value(figure: str) -> float | None:
        return machine.value(family.benchmark(figure), combo, tag, python)

    leak = value("leak")
    if leak is None:
        why = reason(family, machine, combo, tag) if python is None else None
        return Literal(tag, one_line(why) if why else None)
    retained = value("retained")
    return Literal(
        tag,
        time=value("time"),
        peak=_first(value("heap-peak"), value("peak")),
        growth=_first(retained, value("growth")),
        heap=retained is not None,
        garbage=value("garbage"),
        leak=leak >= 1,
        ops_per_call=value("graph-ops-per-call"),
        traces=value("traces"),
    )


def finding(
    example: Example, lit: Literal, other: Literal | None, causes: dict[str, bool | None]
) -> str:
    """The example's finding on one release, in plain words, from its figures: what it does,
    whether that agrees with the article, and what the isolating variants say of the cause.
    `other` is the example compared with (lower-*/higher-* claims); `causes` maps each
    isolating variant's label to its leak verdict there (None: no value)."""
    if lit.error is not None:
        return f"does not run: {lit.error}; the article's claim cannot be checked as written"
    if not lit.measured:
        return "not measured"
    if example.expects in ("leak", "flat"):
        what = "leaks" if lit.leak else "does not grow"
        grows = lit.ops_per_call is not None and lit.ops_per_call >= GRAPH_GROWTH
        if lit.leak and grows:
            what += f", from graph growth (+{lit.ops_per_call:g} ops/call)"
        elif grows:  # too little per call for the probe's window to call it a leak
            what = f"no leak verdict, but its graph grows (+{lit.ops_per_call:g} ops/call)"
        agrees = lit.leak == (example.expects == "leak")
        out = f"{what}: {'as the article says' if agrees else 'contrary to the article'}"
        first = example.isolating[0].label if example.isolating else None
        if example.cause and lit.leak and first and causes.get(first) is False:
            out += f"; not from {example.cause}: {first} is flat"
        leaking = [label for label, leak in causes.items() if leak]
        if lit.leak and leaking:
            out += f"; {', '.join(leaking)} leak{'s' if len(leaking) == 1 else ''} too"
        if lit.garbage is not None and lit.garbage >= GARBAGE:
            out += (
                f"; it leaves {format_bytes(lit.garbage)}/call of garbage that Python's "
                "collector frees (a loop holds it until a collection)"
            )
        return out
    if other is None or not other.measured:
        return f"{example.than} has no value to compare with"
    metric = example.expects.split("-")[1]
    mine, theirs = getattr(lit, metric), getattr(other, metric)
    if mine is None or theirs is None:
        return f"no {metric} to compare with {example.than}"
    if metric == "peak":  # the figures are in the table: the finding names the relation
        below, above = mine + MiB < theirs, mine > theirs + MiB
    else:
        below, above = mine < theirs / 1.1, mine > theirs * 1.1
    relation = "lower" if below else "higher" if above else "about the same"
    than = "as" if relation == "about the same" else "than"
    holds = below if example.expects.startswith("lower") else above
    return (
        f"{relation} {metric} {than} {example.than}: "
        f"{'as the article says' if holds else 'contrary to the article'}"
    )


ARTICLES_NOTE = (
    "Each example runs as the article prints it (adaptations named with it); the isolating "
    "columns are catalog variants that test the cause the article names (leak or flat)."
)
LEAK_WORD = {True: "LEAK", False: "flat", None: "n/a"}


def example_text(example: Example) -> str:
    """The catalog's description of the example's scenario: what runs, and its adaptations."""
    from tfbench import scenarios

    found = scenarios.CATALOG.get(f"article.{example.variant}")
    return found.description if found else "(not in this catalog)"


@dataclass(frozen=True)
class ExampleSection:
    example: Example
    literal: list[Literal]  # release by release
    isolating: list[tuple[Isolating, list[bool | None]]]  # leak verdict per release
    findings: list[tuple[str, list[str]]]  # (finding, the releases it holds on), in order


@dataclass(frozen=True)
class ArticleSection:
    article: Article
    examples: list[ExampleSection]


def sections(families: dict[str, Family], machine: MachineResults) -> list[ArticleSection]:
    """Every article's examples on every release of this machine (empty without the family)."""
    family = families.get(FAMILY)
    if family is None:
        return []
    out = []
    for article in ARTICLES:
        examples = []
        for ex in article.examples:
            lits = [literal(family, machine, ex.variant, t) for t in machine.releases]
            others = [
                literal(family, machine, ex.than, t) if ex.than else None for t in machine.releases
            ]
            isolating = []
            for iso in ex.isolating:
                fam = families.get(iso.family)
                combo = fam.match(iso.params) if fam else None
                verdicts: list[bool | None] = []
                for tag in machine.releases:
                    leak = (
                        machine.value(fam.benchmark("leak"), combo, tag) if fam and combo else None
                    )
                    verdicts.append(None if leak is None else leak >= 1)
                isolating.append((iso, verdicts))
            grouped: dict[str, list[str]] = {}
            for k, tag in enumerate(machine.releases):
                causes = {iso.label: verdicts[k] for iso, verdicts in isolating}
                grouped.setdefault(finding(ex, lits[k], others[k], causes), []).append(tag)
            examples.append(ExampleSection(ex, lits, isolating, list(grouped.items())))
        out.append(ArticleSection(article, examples))
    return out
