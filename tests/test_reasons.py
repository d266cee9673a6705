"""Reasons in one line, said once for the releases that share them (tfbench.publish.reasons)."""

from tfbench.publish import reasons

TF_MESSAGE = (
    "error: InaccessibleTensorError: in user code:\n\n"
    '    File "tfbench/scenarios/functions.py", line 46, in values  *\n'
    "        return tf.stack(out)\n\n"
    "    InaccessibleTensorError: <tf.Tensor 'while/mul:0' shape=() dtype=float32> is out of "
    "scope and cannot be used here. Use return values, explicit Python locals or TensorFlow "
    "collections to access it.\n"
    "    Please see https://www.tensorflow.org/guide/function for more information.\n"
)


def test_the_informative_line_of_a_tensorflow_message():
    line = reasons.one_line(TF_MESSAGE)
    assert line.startswith(
        "InaccessibleTensorError: <tf.Tensor 'while/mul:0' shape=() dtype=float32> is out of scope"
    )
    assert "\n" not in line and len(line) <= reasons.LONGEST and line.endswith("...")
    assert "File" not in line


def test_plain_reasons_keep_their_first_line():
    assert reasons.one_line("error: AttributeError: `dense` is not available with Keras 3.") == (
        "AttributeError: `dense` is not available with Keras 3."
    )
    assert reasons.one_line("timeout: run killed after 600 s") == "run killed after 600 s"
    assert reasons.one_line("skipped: no NVIDIA GPU on this machine") == (
        "no NVIDIA GPU on this machine"
    )


def test_a_reason_shared_by_releases_is_said_once():
    releases = ["v2.12.1", "v2.13.1", "v2.14.1", "v2.15.1"]
    every = [(r, TF_MESSAGE) for r in releases]
    (line,) = reasons.by_release(every, releases)
    assert line.startswith("on every release: InaccessibleTensorError:")
    some = [("v2.12.1", "error: KeyError: 'x'"), ("v2.13.1", "error: KeyError: 'x'")]
    some.append(("v2.15.1", "timeout: run killed after 600 s"))
    assert reasons.by_release(some, releases) == [
        "on v2.12.1-v2.13.1: KeyError: 'x'",
        "on v2.15.1: run killed after 600 s",
    ]
