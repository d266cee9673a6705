"""Why a point has no value, in one line: the exception's type and the first line of its
message (TensorFlow's "in user code:" messages carry the real one further down), said once
for every release that shares it. The whole message stays in the probes file."""

from __future__ import annotations

import re

LONGEST = 160
# "SomeError: message" at the start of a line (TensorFlow indents the real one)
RAISED = re.compile(r"^\s*([A-Za-z_][\w.]*(?:Error|Exception|Warning|Exit)): (.+)$", re.M)


def one_line(why: str) -> str:
    """'error: InaccessibleTensorError: in user code: ...' -> 'InaccessibleTensorError:
    <tf.Tensor 'while/mul:0' ...> is out of scope and cannot be used here.'"""
    text = why.split(": ", 1)[1] if why.startswith(("error: ", "skipped: ", "timeout: ")) else why
    raised = RAISED.findall(text)
    informative = [
        (kind, message) for kind, message in raised if message.strip() != "in user code:"
    ]
    if informative:
        kind, message = informative[-1]
        line = f"{kind}: {message.strip()}"
    else:
        line = text.strip().splitlines()[0] if text.strip() else why
    return line if len(line) <= LONGEST else line[: LONGEST - 3] + "..."


def span(tags: list[str], releases: list[str]) -> str:
    """Some of `releases` (in order) as few words as they allow: every release, or runs of
    consecutive ones as first-last."""
    if tags == releases:
        return "every release"
    runs: list[list[str]] = []
    for tag in tags:
        if runs and releases.index(tag) == releases.index(runs[-1][-1]) + 1:
            runs[-1].append(tag)
        else:
            runs.append([tag])
    return ", ".join(r[0] if len(r) == 1 else f"{r[0]}-{r[-1]}" for r in runs)


def by_release(reasons: list[tuple[str, str]], releases: list[str]) -> list[str]:
    """(release, reason) pairs as one line per distinct reason, with the releases that
    share it."""
    grouped: dict[str, list[str]] = {}
    for release, why in reasons:
        grouped.setdefault(one_line(why), []).append(release)
    return [f"on {span(tags, releases)}: {why}" for why, tags in grouped.items()]
