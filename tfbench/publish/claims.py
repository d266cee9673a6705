"""The seed articles' claims, and whether each holds on each release, by the numbers."""

from __future__ import annotations

from dataclasses import dataclass

from tfbench.publish.families import Family, reason
from tfbench.publish.results import MachineResults


@dataclass(frozen=True)
class Claim:
    article: str
    text: str
    family: str
    # "leak": `a` leaks (what it keeps); "flat": `a` does not; "garbage": `a` leaves garbage
    # Python's collector frees; "no-garbage": it leaves none; "time"/"peak": `a` above `b`
    metric: str
    a: dict[str, str]
    b: dict[str, str] | None = None


def _p(**params: object) -> dict[str, str]:
    return {k: repr(v) for k, v in params.items()}


CLAIMS = [
    Claim(
        "loop memory",
        "A Python loop of tf.matmul is slower than tf.while_loop in a tf.function",
        "loops.MatrixPower",
        "time",
        _p(variant="python_matmul", gradient="none", size=256),
        _p(variant="while_loop_function", gradient="none", size=256),
    ),
    Claim(
        "loop memory",
        "A GradientTape over the loop keeps every product alive (more peak memory)",
        "loops.MatrixPower",
        "peak",
        _p(variant="python_matmul", gradient="tape", size=256),
        _p(variant="python_matmul", gradient="none", size=256),
    ),
    Claim(
        "loop memory",
        "NumPy's matrix_power beats a Python loop of tf.matmul",
        "loops.MatrixPower",
        "time",
        _p(variant="python_matmul", gradient="none", size=256),
        _p(variant="numpy_matrix_power", gradient="none", size=256),
    ),
    Claim(
        "graph construction",
        "New ops and a Session every iteration leak",
        "graphs.GraphConstruction",
        "leak",
        _p(variant="session_per_iteration", allow_growth="off"),
    ),
    Claim(
        "graph construction",
        "reset_default_graph each iteration stops the growth",
        "graphs.GraphConstruction",
        "flat",
        _p(variant="reset_default_graph", allow_growth="off"),
    ),
    Claim(
        "graph construction",
        "Eager ops in a loop, with .numpy() and del, do not grow",
        "graphs.Eager",
        "flat",
        _p(variant="loop"),
    ),
    Claim(
        "graph construction",
        "A tf.Variable created per iteration under a tape leaks",
        "graphs.Eager",
        "leak",
        _p(variant="variable_per_iteration"),
    ),
    Claim(
        "TF1 sessions",
        "Sessions kept referenced and never closed leak",
        "graphs.Sessions",
        "leak",
        _p(variant="unclosed", allow_growth="off"),
    ),
    Claim(
        "TF1 sessions",
        "A `with tf.Session()` block leaves the session open (leaks)",
        "graphs.Sessions",
        "leak",
        _p(variant="with_block", allow_growth="off"),
    ),
    Claim(
        "TF1 sessions",
        "a = tf.add(a, c) with sess.run every iteration leaks",
        "graphs.Sessions",
        "leak",
        _p(variant="graph_accumulation", allow_growth="off"),
    ),
    Claim(
        "tf.function",
        "Appending to a Python list in a tf.range loop leaks",
        "functions.Accumulation",
        "leak",
        _p(variant="list_in_tf_range", count=1000),
    ),
    Claim(
        "tf.function",
        "Retracing on every new Python scalar leaks",
        "functions.Retracing",
        "leak",
        _p(variant="retrace_python_scalar"),
    ),
    Claim(
        "prediction",
        "model.predict called in a loop leaks",
        "predict.Prediction",
        "leak",
        _p(variant="model_predict"),
    ),
    Claim(
        "prediction",
        "model.predict called in a loop leaves garbage that only Python's collector frees",
        "predict.Prediction",
        "garbage",
        _p(variant="model_predict"),
    ),
    Claim(
        "prediction",
        "model(x) called in a loop instead leaves no garbage",
        "predict.Prediction",
        "no-garbage",
        _p(variant="model_call"),
    ),
    Claim(
        "prediction",
        "tf.random.normal inside call() leaks",
        "predict.Prediction",
        "leak",
        _p(variant="random_noise_model"),
    ),
    Claim(
        "prediction",
        "Ops built and .eval()'d inside a thread loop leak",
        "predict.Threads",
        "leak",
        _p(variant="new_op_per_run", threads=4),
    ),
    Claim(
        "prediction",
        "One Session shared by four threads does not grow",
        "predict.Threads",
        "flat",
        _p(variant="shared_session", threads=4),
    ),
]


@dataclass(frozen=True)
class Outcome:
    release: str
    holds: bool | None  # None: no value on this release
    ratio: float | None  # a / b, for claims that compare two points
    reason: str | None = None  # why there is no value, where the probe kept it


@dataclass(frozen=True)
class Verdict:
    claim: Claim
    outcomes: list[Outcome]

    @property
    def newest(self) -> Outcome | None:
        return self.outcomes[-1] if self.outcomes else None

    @property
    def reasons(self) -> list[str]:
        """The distinct reasons for the releases without a value, in release order."""
        return list(dict.fromkeys(o.reason for o in self.outcomes if o.reason))


# A call leaves garbage where Python's collector frees this much of it a call, or more.
GARBAGE = 1024


def holds(claim: Claim, a: float, b: float | None) -> bool:
    """The claim's polarity: a leak claim holds where `a` leaks, a flat claim where it does
    not, a garbage claim where `a` leaves GARBAGE a call or more (no-garbage: less), a
    comparison where `a` is above `b`."""
    if claim.metric in ("leak", "flat"):
        return (a >= 1) == (claim.metric == "leak")
    if claim.metric in ("garbage", "no-garbage"):
        return (a >= GARBAGE) == (claim.metric == "garbage")
    return b is not None and a > b


def judge(claim: Claim, family: Family | None, machine: MachineResults) -> Verdict:
    """Whether the claim holds on each release of this machine."""
    a = family.match(claim.a) if family else None
    b = family.match(claim.b) if family and claim.b else None
    metric = {"flat": "leak", "no-garbage": "garbage"}.get(claim.metric, claim.metric)
    outcomes = []
    for tag in machine.releases:

        def value(point: tuple[str, ...] | None, read: str, tag: str = tag) -> float | None:
            return machine.value(family.benchmark(read), point, tag) if family and point else None

        # a peak is the heap's where it was read (both points), else RSS's
        heap = metric == "peak" and all(
            value(p, "heap-peak") is not None for p in (a, b) if p is not None
        )
        read = "heap-peak" if heap else metric
        va, vb = value(a, read), value(b, read)
        if va is None or (claim.b and vb is None):
            missing = a if va is None else b
            why = family and missing and reason(family, machine, missing, tag)
            outcomes.append(Outcome(tag, None, None, why or None))
            continue
        outcomes.append(Outcome(tag, holds(claim, va, vb), va / vb if claim.b and vb else None))
    return Verdict(claim, outcomes)
