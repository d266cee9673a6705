"""The forms a value read from a kept file may take (docs/formats.md). Kept files may come
from another machine: every field is checked against one of these before it is shown,
linked, put into a command or written into code, and a value of no form is refused with
the field that holds it."""

from __future__ import annotations

import datetime
import math
import re
import typing
from collections.abc import Callable
from typing import Any, TypeVar

Record = TypeVar("Record")


class Invalid(ValueError):
    """A value of a kept file that is not of its field's form; `field` is where it stands
    (builds[3].git_version)."""

    def __init__(self, field: str, why: str) -> None:
        super().__init__(f"{field}: {why}" if field else why)
        self.field, self.why = field, why


IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+")  # a benchmark
SCENARIO = re.compile(r"[a-z_][a-z0-9_]*(\.[a-z0-9_]+)*")  # a catalog id
RELEASE = re.compile(r"\d{1,3}\.\d{1,3}\.\d{1,3}(?:(?:a|b|rc)\d{1,3})?")  # 2.22.0rc0
TAG = re.compile(r"v" + RELEASE.pattern)  # the history's tag of a release
NIGHTLY = re.compile(r"\d{1,3}\.\d{1,3}\.\d{1,3}\.dev\d{8}")  # 2.22.0.dev20260215
DEVICE = re.compile(r"CPU|GPU")
PYTHON = re.compile(r"3\.\d{1,2}")  # X.Y
# asv's results' python: X.Y, or an existing environment's interpreter (`--python=same`)
PYTHON_PARAM = re.compile(rf"{PYTHON.pattern}|/[A-Za-z0-9_./+-]{{1,200}}")
PYTHON_VERSION = re.compile(r"3\.\d{1,2}\.\d{1,3}(?:(?:a|b|rc)\d{1,3})?\+?")  # 3.11.7
NAME = r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,98}[A-Za-z0-9])?"  # a distribution's
VERSION = r"[A-Za-z0-9][A-Za-z0-9.+!_-]{0,99}"  # a distribution's, as a lock pins it
PACKAGE = re.compile(rf"{NAME}=={VERSION}")  # name==version
PIN_CHANGE = re.compile(rf"{NAME} (?:{VERSION}) -> (?:{VERSION})")  # name old -> new
GIT_VERSION = re.compile(r"v[0-9A-Za-z.-]{1,60}-\d{1,9}-g[0-9a-f]{7,40}")  # TF's GIT_VERSION
COMPARE_URL = re.compile(
    r"https://github\.com/tensorflow/tensorflow/compare/[0-9a-f]{7,40}\.\.\.[0-9a-f]{7,40}"
)
UPLOADED = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})")
MACHINE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")  # asv's machine name, a folder
SLUG = re.compile(r"[a-z0-9][a-z0-9-]{0,199}")  # a report's folder
FILE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,199}\.py")  # a user's step file
# asv's description of a machine (CPU, OS): its site shows it as HTML in a tooltip
MACHINE_TEXT = re.compile(r"[A-Za-z0-9 _.,:;()@/+#*=-]{0,200}")
PLAIN = re.compile(r"[A-Za-z0-9_ .+-]{0,100}")  # a param's string value
LITERAL = re.compile(r"[A-Za-z0-9_ .+-]{0,100}|'[A-Za-z0-9_ .+-]{0,100}'")  # asv's repr
GRID_KEY = re.compile(r"[A-Za-z0-9_ .+|-]{0,400}")  # a probe grid point: its values joined by |
POINT = re.compile(  # a grid point as the report names it: family(param values)
    rf"{DOTTED.pattern}(?:\((?:{LITERAL.pattern})(?:, (?:{LITERAL.pattern}))*\))?"
)
COMMIT = re.compile(r"[0-9a-f]{8,40}")  # a git commit's hash, or its first digits
ENVIRONMENT = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")  # asv's environment name
# an asv results file's name (a chain link's too): <commit8>-<environment>
RESULTS_NAME = re.compile(rf"[0-9a-f]{{8}}-{ENVIRONMENT.pattern}")
# a probes or packages record: <commit8>-<environment>-<cpu|gpu>
RECORD_NAME = re.compile(rf"[0-9a-f]{{8}}-{ENVIRONMENT.pattern}-(?:cpu|gpu)")
TEXT_LIMIT = 1 << 20  # characters of free text (an error, a log): shown escaped, never parsed


def matching(pattern: re.Pattern[str]) -> Callable[[Any, str], str]:
    """A check that a value is a string of the pattern's form, whole."""

    def check(value: Any, field: str) -> str:
        if not isinstance(value, str) or not pattern.fullmatch(value):
            shown = repr(value) if len(repr(value)) <= 80 else repr(value)[:77] + "..."
            raise Invalid(field, f"{shown} is not of the form {pattern.pattern}")
        return value

    return check


identifier = matching(IDENTIFIER)
dotted = matching(DOTTED)
scenario = matching(SCENARIO)
release = matching(RELEASE)
tag = matching(TAG)
nightly = matching(NIGHTLY)
device = matching(DEVICE)
python = matching(PYTHON)
python_version = matching(PYTHON_VERSION)
package = matching(PACKAGE)
pin_change = matching(PIN_CHANGE)
git_version = matching(GIT_VERSION)
compare_url = matching(COMPARE_URL)
_uploaded = matching(UPLOADED)
# the window an upload time may lie in: tf-nightly began after it; and not in the future (a
# build from a future day would hold the nightly watch's window shut)
FIRST_UPLOAD = datetime.datetime(2015, 1, 1, tzinfo=datetime.UTC)
FUTURE = datetime.timedelta(days=1)


def uploaded(value: Any, field: str) -> str:
    """An upload time: ISO 8601 of its form, a real moment, within the window."""
    stamp = _uploaded(value, field)
    try:
        moment = datetime.datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        raise Invalid(field, f"{stamp!r} is no moment") from None
    latest = datetime.datetime.now(datetime.UTC) + FUTURE
    if not FIRST_UPLOAD <= moment <= latest:
        raise Invalid(field, f"{stamp!r} lies outside {FIRST_UPLOAD:%Y}-now")
    return stamp


machine = matching(MACHINE)
machine_text = matching(MACHINE_TEXT)
slug = matching(SLUG)
file_name = matching(FILE_NAME)
literal = matching(LITERAL)
grid_key = matching(GRID_KEY)
point = matching(POINT)


def text(value: Any, field: str) -> str:
    """Free text: any string up to TEXT_LIMIT (its readers escape it)."""
    if not isinstance(value, str):
        raise Invalid(field, f"{type(value).__name__} where text is expected")
    if len(value) > TEXT_LIMIT:
        raise Invalid(field, f"{len(value)} characters, more than {TEXT_LIMIT}")
    return value


NUMBER_LIMIT = 1e18  # beyond any figure, count or size tfbench keeps


def number(value: Any, field: str) -> float:
    """A finite JSON number within NUMBER_LIMIT either way (a bool is not one; an integer
    of 400 digits is none a float can hold)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise Invalid(field, f"{_shown(value)} is not a finite number")
    if not -NUMBER_LIMIT <= value <= NUMBER_LIMIT or not math.isfinite(value):
        raise Invalid(field, f"{_shown(value)} is not a finite number within ±1e18")
    return value


def _shown(value: Any) -> str:
    """A value in a message, at most 80 characters (a 400-digit integer is not repr'd)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > NUMBER_LIMIT:
        return "an integer beyond 1e18"
    shown = repr(value)
    return shown if len(shown) <= 80 else shown[:77] + "..."


def integer(value: Any, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise Invalid(field, f"{_shown(value)} is not an integer")
    return int(number(value, field))


def boolean(value: Any, field: str) -> bool:
    if not isinstance(value, bool):
        raise Invalid(field, f"{value!r} is not true or false")
    return value


DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


def day(value: Any, field: str) -> str:
    """A day, YYYY-MM-DD, that the calendar has (2026-02-30 is none)."""
    found = matching(DAY)(value, field)
    try:
        datetime.date.fromisoformat(found)
    except ValueError:
        raise Invalid(field, f"{found!r} is no day") from None
    return found


def one_of(choices: tuple[str, ...]) -> Callable[[Any, str], str]:
    def check(value: Any, field: str) -> str:
        if value not in choices:
            raise Invalid(field, f"{value!r} is not one of {', '.join(choices)}")
        return value

    return check


def optional(check: Callable[[Any, str], Any]) -> Callable[[Any, str], Any]:
    """`check`, or None."""
    return lambda value, field: None if value is None else check(value, field)


def param_value(value: Any, field: str) -> str | int | float | bool | None:
    """A param's value: a plain string (letters, digits, ' ', '_', '.', '+', '-'), a
    number, a bool or None."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return number(value, field)
    if isinstance(value, str) and PLAIN.fullmatch(value):
        return value
    raise Invalid(field, f"{value!r} is no plain value (letters, digits, ' ', '_', '.', '+', '-')")


def obj(value: Any, field: str) -> dict[str, Any]:
    """A JSON object."""
    if not isinstance(value, dict):
        raise Invalid(field, f"{type(value).__name__} where an object is expected")
    return value


def array(value: Any, field: str) -> list[Any]:
    if not isinstance(value, list):
        raise Invalid(field, f"{type(value).__name__} where a list is expected")
    return value


def each(value: Any, field: str, check: Callable[[Any, str], Any]) -> list[Any]:
    """A list, every item checked."""
    return [check(v, f"{field}[{k}]") for k, v in enumerate(array(value, field))]


def mapping(
    value: Any,
    field: str,
    key: Callable[[Any, str], str],
    check: Callable[[Any, str], Any],
) -> dict[str, Any]:
    """An object, every key and value checked."""
    return {
        key(k, f"{field} key"): check(v, f"{field}[{k!r}]") for k, v in obj(value, field).items()
    }


def each_of(check: Callable[[Any, str], Any]) -> Callable[[Any, str], list[Any]]:
    """The form of a list whose every item is of `check`'s form (each)."""
    return lambda value, field: each(value, field, check)


def absent(default: Any, check: Callable[[Any, str], Any]) -> Callable[[Any, str], Any]:
    """`check`'s form, where a file kept before the field may lack it (null reads as
    `default`)."""
    return lambda value, field: check(default if value is None else value, field)


def mapping_of(
    key: Callable[[Any, str], str], check: Callable[[Any, str], Any]
) -> Callable[[Any, str], dict[str, Any]]:
    """The form of an object whose every key and value are of their forms (mapping)."""
    return lambda value, field: mapping(value, field, key, check)


def field(
    data: dict[str, Any], name: str, check: Callable[[Any, str], Any], where: str = ""
) -> Any:
    """data[name], checked; a missing key is refused (optional fields: data.get is used)."""
    path = f"{where}.{name}" if where else name
    if name not in data:
        raise Invalid(path, "missing")
    return check(data[name], path)


def schema(kind: type[Record]) -> Callable[[Any, str], Record]:
    """The check of a record declared once: a TypedDict whose every key is Annotated with
    the check of its form (`Annotated[str, grammar.text]`). It reads a JSON object, each
    declared key by its form, an absent key as null (so refused as missing unless its form
    takes null: `optional`), and keeps nothing else of it."""
    forms: dict[str, Callable[[Any, str], Any]] = {}
    for name, hint in typing.get_type_hints(kind, include_extras=True).items():
        checks = [m for m in getattr(hint, "__metadata__", ()) if callable(m)]
        if len(checks) != 1:
            raise TypeError(f"{kind.__name__}.{name}: Annotated with no check of its form")
        forms[name] = checks[0]

    def check(value: Any, where: str = "") -> Record:
        data = obj(value, where)
        found = {}
        for name, form in forms.items():
            path = f"{where}.{name}" if where else name
            if name in data:
                found[name] = form(data[name], path)
                continue
            try:
                found[name] = form(None, path)
            except Invalid:
                raise Invalid(path, "missing") from None
        return typing.cast(Record, found)

    return check
