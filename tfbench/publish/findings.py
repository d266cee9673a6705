"""The report's "Articles" section: each article's examples as written (the `article`
family), what each literally does on every release, the catalog's isolating variants for
the cause the article names, and a one-line finding derived from those figures by the
rules in `finding` (no text is written per release by hand).
"""

from __future__ import annotations

from dataclasses import dataclass

from tfbench.publish.claims import GARBAGE
from tfbench.publish.families import Family, reason
from tfbench.publish.reasons import one_line
from tfbench.publish.results import MachineResults
from tfbench.units import MiB, format_bytes, format_seconds

FAMILY = "articles.Articles"  # the step benchmarks of tfbench/scenarios/articles.py
GRAPH_GROWTH = 0.5  # operations added per call, on average, that count as graph growth


@dataclass(frozen=True)
class Isolating:
    family: str  # a catalog family's step benchmark class, e.g. graphs.Sessions
    params: dict[str, str]  # asv's reprs; device CPU and other params' first values implied
    isolates: str  # what it tests, in a few words

    @property
    def label(self) -> str:
        return f"{self.family.rpartition('.')[2]}({self.params['variant'].strip(chr(39))})"


@dataclass(frozen=True)
class Example:
    variant: str  # the article family's variant, e.g. sessions.ex1
    says: str  # the article's claim about it
    expects: str  # leak | flat | lower-time | lower-peak (than `than`)
    cause: str = ""  # what the article blames
    isolating: tuple[Isolating, ...] = ()
    than: str | None = None  # for lower-*: the example compared with


@dataclass(frozen=True)
class Article:
    number: str
    title: str
    examples: tuple[Example, ...]


def _v(family: str, variant: str, isolates: str, **params: object) -> Isolating:
    return Isolating(
        family, {k: repr(v) for k, v in dict(variant=variant, **params).items()}, isolates
    )


ARTICLES = (
    Article(
        "000",
        "Does TensorFlow's graph construction in a loop cause memory leaks?",
        (
            Example(
                "graphs.ex1",
                "leaks: x and y stay in memory after each closed Session",
                "leak",
                "tensors kept past the with-block Session",
                (
                    _v("graphs.Sessions", "with_block", "a Session per iteration, graph fixed"),
                    _v(
                        "graphs.GraphConstruction",
                        "session_per_iteration",
                        "new ops per iteration",
                    ),
                    _v("graphs.GraphConstruction", "fresh_graph", "new ops, in a fresh graph"),
                ),
            ),
            Example(
                "graphs.ex2",
                "does not grow: eager, .numpy() and del release the tensors",
                "flat",
                isolating=(_v("graphs.Eager", "loop", "eager ops per iteration"),),
            ),
            Example(
                "graphs.ex3",
                "leaks: the Variable made per iteration persists",
                "leak",
                "a tf.Variable created per iteration",
                (
                    _v("graphs.Eager", "variable_per_iteration", "a Variable per iteration"),
                    _v("graphs.Eager", "variable_reused", "one Variable, reused"),
                ),
            ),
        ),
    ),
    Article(
        "001",
        "What causes TensorFlow 1 CPU memory leaks?",
        (
            Example(
                "sessions.ex1",
                "leaks: the session remains open",
                "leak",
                "the with-block Session left open",
                (
                    _v("graphs.Sessions", "with_block", "a with-block Session, graph fixed"),
                    _v("graphs.Sessions", "unclosed", "Sessions never closed"),
                    _v("graphs.GraphConstruction", "session_per_iteration", "new ops per call"),
                ),
            ),
            Example(
                "sessions.ex2",
                "does not leak: sess.close() releases the memory",
                "flat",
                "",
                (
                    _v("graphs.Sessions", "explicit_close", "closed Sessions, graph fixed"),
                    _v("graphs.GraphConstruction", "session_per_iteration", "new ops per call"),
                ),
            ),
            Example(
                "sessions.ex3",
                "leaks: every tf.add in the loop adds to memory",
                "leak",
                "ops added to the graph every iteration",
                (
                    _v("graphs.Sessions", "graph_accumulation", "a = tf.add(a, c) per run"),
                    _v("graphs.Sessions", "assign_in_place", "one assign_add, built once"),
                ),
            ),
        ),
    ),
    Article(
        "002",
        "Does custom TensorFlow training using @tf.function exhibit memory leaks?",
        (
            Example(
                "functions.ex1",
                "memory grows every call: the Python list holds 10,000 tensors",
                "leak",
                "tensors accumulated in a Python list",
                (
                    _v(
                        "functions.Accumulation",
                        "list_in_tf_range",
                        "a list in tf.range",
                        count=100,
                    ),
                    _v("functions.Accumulation", "tensorarray", "a TensorArray", count=100),
                ),
            ),
            Example(
                "functions.ex2",
                "no memory issue: the captured counter is frozen at trace time",
                "flat",
                isolating=(_v("functions.Retracing", "captured_state", "a captured dict"),),
            ),
            Example(
                "functions.ex3",
                "no growth: one accumulator, a constant number of tensors per call",
                "flat",
                isolating=(
                    _v("functions.Accumulation", "accumulator", "an accumulator", count=100),
                ),
            ),
        ),
    ),
    Article(
        "003",
        "How can I optimize TensorFlow loop memory usage?",
        (
            Example(
                "loops.ex1",
                "memory skyrockets: every intermediate is kept (more than tf.while_loop)",
                "higher-peak",
                "intermediates kept for gradients",
                (
                    _v("loops.MatrixPower", "python_matmul", "no tape", gradient="none"),
                    _v("loops.MatrixPower", "python_matmul", "under a tape", gradient="tape"),
                ),
                than="loops.ex2",
            ),
            Example(
                "loops.ex2",
                "tf.while_loop is faster than the Python loop",
                "lower-time",
                isolating=(
                    _v("loops.MatrixPower", "while_loop_eager", "run eagerly", gradient="none"),
                    _v(
                        "loops.MatrixPower",
                        "while_loop_function",
                        "in a tf.function",
                        gradient="none",
                    ),
                ),
                than="loops.ex1",
            ),
            Example(
                "loops.ex3",
                "NumPy gives a significant performance boost",
                "lower-time",
                isolating=(
                    _v("loops.MatrixPower", "numpy", "NumPy matmul loop", gradient="none"),
                ),
                than="loops.ex1",
            ),
        ),
    ),
    Article(
        "004",
        "Why is my TensorFlow model experiencing memory leaks during prediction?",
        (
            Example(
                "predict.ex1",
                "leaks: tf.random.normal in call() caches state",
                "leak",
                "a random op in call()",
                (
                    _v("predict.Prediction", "random_noise_model", "random op, model.predict"),
                    _v("predict.Prediction", "model_call", "plain model(x)"),
                ),
            ),
            Example(
                "predict.ex2",
                "the returned tensor reference can keep memory",
                "leak",
                "returned tensors",
                (_v("predict.Prediction", "returned_tensor", "every output kept"),),
            ),
            Example(
                "predict.ex3",
                "a Session shared between threads is problematic",
                "leak",
                "one Session shared by threads",
                (
                    _v("predict.Threads", "shared_session", "one shared Session", threads=4),
                    _v("predict.Threads", "new_op_per_run", "ops built per run", threads=4),
                ),
            ),
        ),
    ),
)


@dataclass(frozen=True)
class Literal:
    """What an example as written did on one release."""

    release: str
    error: str | None = None  # why it has no figures (its exception), None if measured
    time: float | None = None
    peak: float | None = None  # the heap's where read, else RSS's
    growth: float | None = None  # what a step keeps (the heap) where read, else RSS's
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


def literal(family: Family, machine: MachineResults, variant: str, tag: str) -> Literal:
    combo = (repr(variant),)

    def value(figure: str) -> float | None:
        return machine.value(family.benchmark(figure), combo, tag)

    leak = value("leak")
    if leak is None:
        why = reason(family, machine, combo, tag)
        return Literal(tag, one_line(why) if why else None)
    return Literal(
        tag,
        time=value("time"),
        peak=_first(value("heap-peak"), value("peak")),
        growth=_first(value("retained"), value("growth")),
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
