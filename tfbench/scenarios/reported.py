"""TensorFlow's reported memory leaks: each report's reproducer as a step (tfbench.answers
says, from a step's record, whether the report reproduces).

Each report below was read in its public text on github.com/tensorflow/tensorflow: its
title, its state, the release and Python it was reported on and what its reporter says
happens are the report's; the step is the reporter's reproducer with the smallest
adaptation that makes it a step, and every adaptation is stated in the report's row
(Report.adapted), under the rules of the articles' examples (tfbench.scenarios.articles):
- TF1 names through tf.compat.v1, and TF1's graph mode for code written for TF1, in the
  step's own process; TF1's `tf.enable_eager_execution()` dropped where TF2 is eager already;
- the reporter's loop body is the step, and the probe supplies the iterations; where the
  reporter read memory every N calls of an inner loop, that inner loop is the step;
- the reporter's memory readings, prints and progress bars left out (the probe reads memory);
- a size reduced where the literal one cannot fit the memory budget or time (the factor
  is stated).
A reproducer that raises on a release is measured as such: its error is the answer there.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tfbench.scenarios import Scenario, articles, register

Step = Callable[[], Any]
# Iterations of a step that is one call of microseconds: enough calls for bytes a call to
# stand out of the heap's readings (the probe reads them once a step).
MANY = 2000


@dataclass(frozen=True)
class Report:
    number: int  # its issue on github.com/tensorflow/tensorflow
    title: str
    state: str  # "open" or "closed", as the report was read
    release: str  # the TensorFlow it was reported on; "" where the report does not say
    python: str  # the Python it was reported on; "" where the report does not say
    claim: str  # what the reporter says happens, in brief
    adapted: str  # what the step changes of the reproducer
    steps: dict[str, tuple[Callable[[], Step], str, int]]  # scenario id -> (prepare, what, n)

    @property
    def url(self) -> str:
        return f"https://github.com/tensorflow/tensorflow/issues/{self.number}"


# --- eager ops and tf.function


def constant_in_a_loop() -> Step:
    import tensorflow as tf

    def loop_copy():
        for _ in range(2000):
            y = tf.constant(5.0)  # noqa: F841 - the reporter's (still leaks with this)

    return loop_copy


# 1/5 of the reporter's 5,000 calls between readings, for time: 5,000 tf.function calls take
# 0.9 s, 5,000 normals of 10,000 floats 2 s (2.22, this machine), 50 steps of them a process.
CALLS = 5000 // 5


def _zeros():
    import tensorflow as tf

    def fn():
        return tf.zeros(shape=(1,))

    return tf, fn


def zeros_eager() -> Step:
    tf, fn = _zeros()
    fn()  # the reporter's warm-up

    def calls():
        for _ in range(CALLS):
            fn()

    return calls


def zeros_function() -> Step:
    tf, fn = _zeros()
    tf_fn = tf.function(fn)
    tf_fn()  # the reporter's warm-up

    def calls():
        for _ in range(CALLS):
            tf_fn()

    return articles._counted(calls, function=tf_fn)


def random_normal() -> Step:
    import tensorflow as tf

    def calls():
        for _ in range(CALLS):
            x = tf.random.normal(shape=(10000, 1))  # noqa: F841 - the reporter's

    return calls


def function_identity() -> Step:
    import tensorflow as tf

    @tf.function
    def operate(img):
        return img

    img = tf.zeros((6, 6, 7))
    return articles._counted(lambda: operate(img), function=operate)


def tensor_to_numpy() -> Step:
    import numpy as np
    import tensorflow as tf

    x = tf.random.normal((1024, 1024))

    def body():
        y = np.array(x)  # noqa: F841 - the reporter's

    return body


def loss_under_a_tape() -> Step:
    import tensorflow as tf

    layer = tf.keras.layers.Dense(5)
    inputs = tf.zeros([32, 100], tf.float32)
    labels = tf.zeros([32], tf.int64)

    def body():
        with tf.GradientTape() as tape:  # the reporter's: no gradient taken
            logits = layer(inputs)
            loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
        return tape, loss

    return body


# --- Keras models: a call, fit, predict


def subclassed_conv_call() -> Step:
    import tensorflow as tf

    class Net(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.conv1 = tf.keras.layers.Conv2D(32, 3)

        def call(self, x):
            y = self.conv1(x)
            return y

    inputs = tf.zeros([1, 10, 10, 3], tf.float32)
    net = Net()
    return lambda: net(inputs)


def fit_new_model() -> Step:
    import numpy as np
    from tensorflow import keras
    from tensorflow.keras import layers

    def body():
        inputs = keras.Input(shape=(10,))
        out = layers.Dense(1)(inputs)
        model = keras.Model(inputs=inputs, outputs=out)
        model.compile(optimizer="adam", loss="mse")
        train = np.random.rand(1000, 10)
        label = np.random.rand(1000)
        model.fit(train, label, verbose=0)

    return body


def predict_small_model() -> Step:
    import numpy as np
    from tensorflow.keras import Input, Model
    from tensorflow.keras.layers import Dense

    inputs = Input(shape=(10,))
    x = Dense(32)(inputs)
    outputs = Dense(2)(x)
    model = Model(inputs=inputs, outputs=outputs)
    dummy = np.zeros((1, 10), dtype=np.float32)
    return lambda: model.predict(dummy, verbose=0)


def predict_new_sizes() -> Step:
    import numpy as np
    import tensorflow as tf

    np.random.seed(0)  # the same sizes in every repeat
    inputs = tf.keras.layers.Input((None, None, 3))
    x = tf.keras.layers.Conv2D(filters=64, kernel_size=(3, 3), padding="same")(inputs)
    model = tf.keras.models.Model(inputs=inputs, outputs=x)

    def body():
        image_shape = [*np.random.randint(128, 1024, (2,)).tolist(), 3]
        image = np.random.uniform(0, 256, image_shape)
        model.predict(image[np.newaxis], verbose=0)

    return body


VGG_SIDE = 256 // 2  # 1/4 of the report's 256x256 pixels: two 64-filter convolutions a call


def _two_convolutions():
    import numpy as np
    import tensorflow as tf

    class TestModel(tf.keras.models.Model):
        def __init__(self):
            super().__init__()
            self.layer_1 = tf.keras.layers.Conv2D(
                64, (3, 3), activation="relu", padding="same", name="block1_conv1"
            )
            self.layer_2 = tf.keras.layers.Conv2D(
                64, (3, 3), activation="relu", padding="same", name="block1_conv2"
            )

        def call(self, inputs):
            return self.layer_2(self.layer_1(inputs))

    input_shape = 1, VGG_SIDE, VGG_SIDE, 3
    return TestModel(), np.random.rand(*input_shape)


def two_convolutions_predict() -> Step:
    model, inputs = _two_convolutions()
    return lambda: model.predict(inputs, batch_size=1, verbose=0)


def two_convolutions_call() -> Step:
    model, inputs = _two_convolutions()
    return lambda: model(inputs)


# --- tf.data, py_function


DATASET_ROWS = 60000 // 100  # 1/100 of the report's rows: its zeros are 1.47 GB of float64


def dataset_in_eager_mode() -> Step:
    import numpy as np
    import tensorflow as tf

    def run():
        data = tf.data.Dataset.from_tensor_slices(np.zeros((DATASET_ROWS, 32, 32, 3)))
        data = data.shuffle(10000 // 100)
        data = data.batch(128)
        x = next(iter(data))  # noqa: F841 - the reporter's

    return run


PY_FUNCTION_SIDE = 1000 // 10  # 1/100 of the report's arrays: its two are 240 MB a call


def py_function_arrays() -> Step:
    import numpy as np
    import tensorflow as tf

    def test(xyz_batch, k):
        indices = np.zeros((PY_FUNCTION_SIDE, PY_FUNCTION_SIDE, 20), dtype=np.int64)
        dist = np.zeros((PY_FUNCTION_SIDE, PY_FUNCTION_SIDE, 20), dtype=np.float32)
        return indices, dist

    return lambda: tf.py_function(test, [0, 0], [tf.int64, tf.int64])


# --- TF1 graphs and sessions: strings, images, ragged tensors, distributions


def py_func_string() -> Step:
    tf = articles._graph_mode()
    v1 = tf.compat.v1
    v1.InteractiveSession()
    s = b" " * 1000000
    x = v1.py_func(lambda: s[1:], [], tf.string)  # leaks
    return articles._counted(lambda: x.op.run(), articles._default_graph)


IMAGE_SHAPE = (480, 640, 3)  # the report encodes files read with cv2.imread: their size unsaid


def encode_jpeg_in_a_loop() -> Step:
    import numpy as np

    tf = articles._graph_mode()
    im = np.zeros(IMAGE_SHAPE, dtype=np.uint8)

    def body():
        image_data = tf.image.encode_jpeg(im, format="rgb")  # noqa: F841 - the reporter's

    return articles._counted(body, articles._default_graph)


# The fragment's shapes, which the report does not give: batch, sequence, embedding.
BATCH_SIZE, SEQ_LENGTH, EMB_SIZE = 8, 20, 16


def ragged_boolean_mask() -> Step:
    import numpy as np

    tf = articles._graph_mode()
    v1 = tf.compat.v1
    text_input_flatten = v1.placeholder(tf.float32, [BATCH_SIZE, SEQ_LENGTH, EMB_SIZE])
    text_mask = v1.placeholder(tf.bool, [BATCH_SIZE, SEQ_LENGTH])
    seq_length, emb_size = SEQ_LENGTH, EMB_SIZE

    text_input_ragged = tf.RaggedTensor.from_tensor(text_input_flatten)
    text_input_ragged = tf.ragged.boolean_mask(
        text_input_ragged, text_mask, name="ragged_text_input"
    )
    new_text_input = text_input_ragged.to_tensor(default_value=0)
    new_length = tf.shape(new_text_input)[1]
    new_text_input = tf.pad(
        new_text_input,
        [[0, 0], [0, seq_length * emb_size - new_length], [0, 0]],
        constant_values=0,
    )
    rng = np.random.default_rng(0)
    feed = {
        text_input_flatten: rng.standard_normal((BATCH_SIZE, SEQ_LENGTH, EMB_SIZE)).astype(
            np.float32
        ),
        text_mask: rng.random((BATCH_SIZE, SEQ_LENGTH)) < 0.5,
    }
    sess = v1.Session()
    return articles._counted(lambda: sess.run(new_text_input, feed), articles._default_graph)


def normal_sample() -> Step:
    tf = articles._graph_mode()
    dist = tf.compat.v1.distributions.Normal(loc=0.0, scale=1.0)

    def body():
        a = dist.sample()  # noqa: F841 - the reporter's

    return articles._counted(body, articles._default_graph)


STEP = "the reporter's loop body is the step"
INNER = "the reporter's inner loop between two of its RSS readings is the step"
TF1 = f"{articles.TF1}; {STEP}"
REPORTS = (
    Report(
        68196,
        "Memory leak from using tf.constant in loop in TF 2.16",
        "open",
        "2.16.1",
        "3.12.3",
        "memory grows while tf.constant(5.0) is created in a loop, eagerly; del and "
        "gc.collect() do not help; it seemed fixed by 2.15 and back in 2.16",
        f"{INNER} (loop_copy: 2,000 constants)",
        {
            "reported.tf68196_constant": (
                constant_in_a_loop,
                "2,000 eager tf.constant(5.0)",
                40,
            ),
        },
    ),
    Report(
        62551,
        "Python >=3.11 TF memory leaks",
        "closed",
        "2.15",
        "3.11",
        "basic calls leak on Python 3.11 and not on 3.10: tf.zeros(shape=(1,)) in a loop, "
        "eagerly and as a tf.function",
        f"{INNER}, at {CALLS:,} calls, 1/5 of the report's 5,000, for time; both of the "
        "reporter's benches, eager and tf.function",
        {
            "reported.tf62551_eager": (zeros_eager, f"{CALLS:,} eager tf.zeros(shape=(1,))", 40),
            "reported.tf62551_function": (
                zeros_function,
                f"{CALLS:,} calls of tf.function(tf.zeros(shape=(1,)))",
                40,
            ),
        },
    ),
    Report(
        62203,
        "tf.random.normal() causes RAM usage to keep growing",
        "closed",
        "2.13.0",
        "3.8.3",
        "RAM grows while tf.random.normal(shape=(10000, 1)) runs eagerly in a loop, not on "
        "2.12.1; inside a tf.function it does not",
        f"{INNER}, at {CALLS:,} calls, 1/5 of the report's 5,000, for time",
        {
            "reported.tf62203_random_normal": (
                random_normal,
                f"{CALLS:,} eager tf.random.normal(shape=(10000, 1))",
                40,
            ),
        },
    ),
    Report(
        57982,
        "Ram memory leak when using tf.function at tf 2.8,2.9 and 2.10, doesn't happen "
        "with tf 2.5",
        "closed",
        "2.10",
        "3.10, 3.9",
        "RAM grows with every call of a tf.function that returns its input",
        f"{STEP} (one call; its print every 20,000 calls left out)",
        {
            "reported.tf57982_function": (
                function_identity,
                "a tf.function returning its (6, 6, 7) input",
                MANY,
            ),
        },
    ),
    Report(
        30165,
        "TF 2.0 - Put Tensor into some Numpy functions continuously increases memory usage",
        "closed",
        "2.0.0-beta1",
        "3.7.3",
        "memory grows without end while np.array() copies the same 1024x1024 tensor in a loop",
        f"{STEP}; its time.sleep(0.01) a call left out (a pause, not the pattern)",
        {
            "reported.tf30165_numpy_array": (
                tensor_to_numpy,
                "np.array(x) of one eager 1024x1024 float32 tensor",
                40,
            ),
        },
    ),
    Report(
        20062,
        "Memory leak using loss in Eager Execution",
        "closed",
        "1.9.0-rc0",
        "3.6.5",
        "memory grows while a Dense layer's logits and a sparse softmax cross-entropy loss "
        "are computed under a GradientTape in a loop; other losses leak alike",
        f"{STEP}; the loss through tf.compat.v1.losses; tf.enable_eager_execution() dropped",
        {
            "reported.tf20062_loss_under_a_tape": (
                loss_under_a_tape,
                "Dense(5) logits and tf.compat.v1.losses.sparse_softmax_cross_entropy under "
                "a GradientTape",
                400,
            ),
        },
    ),
    Report(
        19385,
        "Memory leak in Eager execution",
        "closed",
        "1.8.0",
        "3.6.5",
        "RAM grows without end while a subclassed Keras model of one Conv2D is called "
        "eagerly in a loop (GPU memory stays constant)",
        f"{STEP}; tf.enable_eager_execution() dropped (TF2 is eager)",
        {
            "reported.tf19385_model_call": (
                subclassed_conv_call,
                "net(inputs): a subclassed model of Conv2D(32, 3) on zeros [1, 10, 10, 3]",
                400,
            ),
        },
    ),
    Report(
        41973,
        "Memory Leak with latest Tensorflow",
        "closed",
        "2.3.0",
        "3.7.4",
        "memory traced by tracemalloc grows while a new small model is built, compiled and "
        "fit in a loop, with gc.collect() each pass",
        f"{STEP}; fit's progress bar off (verbose=0); its gc.collect() and tracemalloc left "
        "out (the probe collects and reads the heap)",
        {
            "reported.tf41973_fit_new_model": (
                fit_new_model,
                "build Input(10) -> Dense(1), compile (adam, mse), fit on 1,000 random rows",
                40,
            ),
        },
    ),
    Report(
        33009,
        "Memory leak",
        "closed",
        "2.0.0",
        "3.6.8",
        "memory grows without end while predict() of a trivially small model is called in a "
        "loop on dummy input; not on 1.14",
        f"{STEP}; predict's progress bar off (verbose=0, TF 2.0's default)",
        {
            "reported.tf33009_predict": (
                predict_small_model,
                "model.predict of Input(10) -> Dense(32) -> Dense(2) on zeros (1, 10)",
                100,
            ),
        },
    ),
    Report(
        38598,
        "Memory-leak-like behavior on subsequent predictions (since TF 2.1.0)",
        "closed",
        "2.1.0",
        "",
        "memory grows continuously while predict() runs on images of new random sizes",
        f"{STEP}; the sizes seeded, so repeats read the same ones; its CPU-only setting "
        "left to the probe's device; predict's progress bar off",
        {
            "reported.tf38598_predict_new_sizes": (
                predict_new_sizes,
                "model.predict of one Conv2D(64) on an image of a random size, 128-1023 a side",
                40,
            ),
        },
    ),
    Report(
        46661,
        "Memory Leak in VGG16 based model",
        "closed",
        "2.4",
        "",
        "predict() in a loop leaks on 2.4 (the reason to stay on 2.2); calling the model "
        "directly does not",
        f"{STEP}; the input {VGG_SIDE}x{VGG_SIDE}, 1/4 of the report's pixels, for time; the "
        "reporter's two-layer example (a comment of the report), with both of its loops",
        {
            "reported.tf46661_predict": (
                two_convolutions_predict,
                "model.predict of two Conv2D(64, 3x3) layers, batch_size=1",
                40,
            ),
            "reported.tf46661_call": (
                two_convolutions_call,
                "model(inputs) of the same two Conv2D layers",
                40,
            ),
        },
    ),
    Report(
        20436,
        "Memory leaking in tf.data.Dataset in eager mode",
        "closed",
        "1.8.0",
        "3.6",
        "memory grows each time a Dataset is built (from_tensor_slices, shuffle, batch) and "
        "its first batch read; gc.collect() has no effect",
        f"{STEP} (run()); tf.enable_eager_execution() dropped; {DATASET_ROWS:,} rows and a "
        "shuffle buffer of 100, 1/100 of the report's (its zeros are 1.47 GB)",
        {
            "reported.tf20436_dataset": (
                dataset_in_eager_mode,
                "a Dataset from zeros, shuffled, batched, and its first batch",
                40,
            ),
        },
    ),
    Report(
        51839,
        "memory leak in tf.py_function",
        "closed",
        "2.7",
        "3.7",
        "memory grows while tf.py_function returning two large NumPy arrays is called in a loop",
        f"{STEP}; arrays of {PY_FUNCTION_SIDE}x{PY_FUNCTION_SIDE}x20, 1/100 of the "
        "report's (its two are 240 MB a call)",
        {
            "reported.tf51839_py_function": (
                py_function_arrays,
                "tf.py_function returning two arrays (int64 and float32, declared int64)",
                40,
            ),
        },
    ),
    Report(
        10822,
        "py_func returning string leaks memory",
        "closed",
        "1.2.0",
        "",
        "a py_func returning a slice of a 1 MB bytes object leaks when run in a loop "
        "(returning the object itself does not)",
        TF1,
        {
            "reported.tf10822_py_func_string": (
                py_func_string,
                "x.op.run() of a py_func returning s[1:] of 1 MB of bytes",
                40,
            ),
        },
    ),
    Report(
        14185,
        "memory leak with tf.image.encode_jpeg",
        "closed",
        "",
        "",
        "memory grows while tf.image.encode_jpeg is called on each image until the server "
        "runs out of memory",
        f"{TF1}; a {IMAGE_SHAPE[0]}x{IMAGE_SHAPE[1]} image of zeros stands for the one "
        "cv2.imread reads (the report does not say its size)",
        {
            "reported.tf14185_encode_jpeg": (
                encode_jpeg_in_a_loop,
                "tf.image.encode_jpeg(im, format='rgb') of one image, in graph mode",
                40,
            ),
        },
    ),
    Report(
        46735,
        "RaggedTensor processing float type causes memory leak",
        "closed",
        "1.15.3",
        "3.7",
        "memory grows fast and the program crashes when a float32 tensor goes through "
        "RaggedTensor.from_tensor and ragged.boolean_mask; int32 works",
        f"{TF1}; the report's fragment run by a Session per step on tensors fed of "
        f"[{BATCH_SIZE}, {SEQ_LENGTH}, {EMB_SIZE}] (the report does not give its sizes)",
        {
            "reported.tf46735_ragged": (
                ragged_boolean_mask,
                "from_tensor, boolean_mask, to_tensor and pad of float32, one Session run",
                40,
            ),
        },
    ),
    Report(
        25473,
        "tf.distribution.Normal memory leak on calls to sample()",
        "closed",
        "1.12.0",
        "3.6.7",
        "memory grows while sample() of a tf.distributions.Normal is called in a loop",
        TF1,
        {
            "reported.tf25473_normal_sample": (
                normal_sample,
                "dist.sample() of tf.compat.v1.distributions.Normal(0, 1), in graph mode",
                40,
            ),
        },
    ),
)
BY_STEP = {sid: report for report in REPORTS for sid in report.steps}
WARMUP = 10

for _report in REPORTS:
    for _id, (_prepare, _what, _iterations) in _report.steps.items():
        register(
            Scenario(
                _id,
                f"tensorflow#{_report.number}: {_what}",
                _prepare,
                {},
                _iterations,
                max(WARMUP, _iterations // 10),
            )
        )
