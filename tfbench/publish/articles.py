"""The five articles the suite answers, described once: each article's number, title and
the name its claims go by, its examples (the `article` family's variants: what each says,
what it expects, the catalog's isolating variants for the cause it names) and the claims of
it the catalog's figures judge (tfbench.publish.claims). The report's "Articles" section
(tfbench.publish.findings) and its claims table both derive from this table.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from tfbench.publish.claims import Claim, p


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
    short: str  # the name its claims go by in the report
    examples: tuple[Example, ...]
    claims: tuple[Claim, ...] = ()


def _v(family: str, variant: str, isolates: str, **params: object) -> Isolating:
    return Isolating(family, p(variant=variant, **params), isolates)


ARTICLES = (
    Article(
        "000",
        "Does TensorFlow's graph construction in a loop cause memory leaks?",
        "graph construction",
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
        (
            Claim(
                "New ops and a Session every iteration leak",
                "graphs.GraphConstruction",
                "leak",
                p(variant="session_per_iteration", allow_growth="off"),
            ),
            Claim(
                "reset_default_graph each iteration stops the growth",
                "graphs.GraphConstruction",
                "flat",
                p(variant="reset_default_graph", allow_growth="off"),
            ),
            Claim(
                "Eager ops in a loop, with .numpy() and del, do not grow",
                "graphs.Eager",
                "flat",
                p(variant="loop"),
            ),
            Claim(
                "A tf.Variable created per iteration under a tape leaks",
                "graphs.Eager",
                "leak",
                p(variant="variable_per_iteration"),
            ),
        ),
    ),
    Article(
        "001",
        "What causes TensorFlow 1 CPU memory leaks?",
        "TF1 sessions",
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
        (
            Claim(
                "Sessions kept referenced and never closed leak",
                "graphs.Sessions",
                "leak",
                p(variant="unclosed", allow_growth="off"),
            ),
            Claim(
                "A `with tf.Session()` block leaves the session open (leaks)",
                "graphs.Sessions",
                "leak",
                p(variant="with_block", allow_growth="off"),
            ),
            Claim(
                "a = tf.add(a, c) with sess.run every iteration leaks",
                "graphs.Sessions",
                "leak",
                p(variant="graph_accumulation", allow_growth="off"),
            ),
        ),
    ),
    Article(
        "002",
        "Does custom TensorFlow training using @tf.function exhibit memory leaks?",
        "tf.function",
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
        (
            Claim(
                "Appending to a Python list in a tf.range loop leaks",
                "functions.Accumulation",
                "leak",
                p(variant="list_in_tf_range", count=1000),
            ),
            Claim(
                "Retracing on every new Python scalar leaks",
                "functions.Retracing",
                "leak",
                p(variant="retrace_python_scalar"),
            ),
        ),
    ),
    Article(
        "003",
        "How can I optimize TensorFlow loop memory usage?",
        "loop memory",
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
        (
            Claim(
                "A Python loop of tf.matmul is slower than tf.while_loop in a tf.function",
                "loops.MatrixPower",
                "time",
                p(variant="python_matmul", gradient="none", size=256),
                p(variant="while_loop_function", gradient="none", size=256),
            ),
            Claim(
                "A GradientTape over the loop keeps every product alive (more peak memory)",
                "loops.MatrixPower",
                "peak",
                p(variant="python_matmul", gradient="tape", size=256),
                p(variant="python_matmul", gradient="none", size=256),
            ),
            Claim(
                "NumPy's matrix_power beats a Python loop of tf.matmul",
                "loops.MatrixPower",
                "time",
                p(variant="python_matmul", gradient="none", size=256),
                p(variant="numpy_matrix_power", gradient="none", size=256),
            ),
        ),
    ),
    Article(
        "004",
        "Why is my TensorFlow model experiencing memory leaks during prediction?",
        "prediction",
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
        (
            Claim(
                "model.predict called in a loop leaks",
                "predict.Prediction",
                "leak",
                p(variant="model_predict"),
            ),
            Claim(
                "model.predict called in a loop leaves garbage that only Python's collector frees",
                "predict.Prediction",
                "garbage",
                p(variant="model_predict"),
            ),
            Claim(
                "model(x) called in a loop instead leaves no garbage",
                "predict.Prediction",
                "no-garbage",
                p(variant="model_call"),
            ),
            Claim(
                "tf.random.normal inside call() leaks",
                "predict.Prediction",
                "leak",
                p(variant="random_noise_model"),
            ),
            Claim(
                "Ops built and .eval()'d inside a thread loop leak",
                "predict.Threads",
                "leak",
                p(variant="new_op_per_run", threads=4),
            ),
            Claim(
                "One Session shared by four threads does not grow",
                "predict.Threads",
                "flat",
                p(variant="shared_session", threads=4),
            ),
        ),
    ),
)


CLAIMS = [replace(c, article=a.short) for a in ARTICLES for c in a.claims]
