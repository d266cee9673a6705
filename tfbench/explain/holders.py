"""What holds an object alive: the path of references from a module (or from an object no
Python object refers to: held from native code) down to it, read from Python's collector.

One pass over every object the collector tracks builds the reverse of `gc.get_referents`
(about 2 s and 1.7 million references with TensorFlow and Keras imported); a breadth-first
search up from the object then finds the nearest module. The path reads as Python: a
module's attribute, a dict's key, a list's index, a closure's cell, an object's attribute.
"""

from __future__ import annotations

import gc
import sys
import types
from collections import deque
from collections.abc import Iterable
from pathlib import Path
from typing import Any

# At most this many objects are visited up from the one asked about: a path longer than
# the nearest module's is not a useful answer.
VISITED = 200_000
SHOWN = 99  # steps of a path spelled out; the middle of a longer one is elided


class Index:
    """Every tracked object's referrers, read once (objects given in `leave_out`, and this
    index's own lists, are no referrers)."""

    def __init__(self, leave_out: Iterable[Any] = ()) -> None:
        found = gc.get_objects()
        ours = {id(found), *map(id, leave_out)}
        self.referrers: dict[int, list[Any]] = {}
        for holder in found:
            if id(holder) in ours or isinstance(holder, types.FrameType):
                continue
            for held in gc.get_referents(holder):
                self.referrers.setdefault(id(held), []).append(holder)
        self.modules = {
            id(vars(module)): name
            for name, module in list(sys.modules.items())
            if module is not None and name != "__main__"
        }
        self.referrers.pop(id(self.referrers), None)
        del found

    def holder(self, obj: Any) -> str | None:
        """The nearest module's path down to `obj` (`module.name[key].attr ...`), or the
        outermost object that nothing Python refers to (held from native code); None where
        the search ends without either."""
        parent: dict[int, Any] = {id(obj): None}
        queue = deque([obj])
        root = None
        while queue and len(parent) < VISITED:
            current = queue.popleft()
            referrers = self.referrers.get(id(current), [])
            if not referrers and current is not obj and root is None:
                root = current
            for holder in referrers:
                if id(holder) in parent:
                    continue
                parent[id(holder)] = current
                name = self.modules.get(id(holder)) or _namespace(holder)
                if name:
                    return _spelled(name, holder, parent)
                queue.append(holder)
        if root is None:
            return None
        return _spelled(f"<{type(root).__qualname__} held from native code>", root, parent)


def _namespace(holder: Any) -> str | None:
    """The name of a module's globals that are not in sys.modules (a user's file, loaded
    by path under a name of tfbench's): its file's stem."""
    if not isinstance(holder, dict) or not {"__name__", "__spec__"} <= holder.keys():
        return None
    file = holder.get("__file__")
    return Path(file).stem if isinstance(file, str) else None


def _spelled(start: str, top: Any, parent: dict[int, Any]) -> str:
    """The path from `top` down to the object asked about, as Python spells each step."""
    steps, current, attributes = [], top, True  # the top: a module's attributes
    while (below := parent[id(current)]) is not None:
        steps.append(_step(current, below, attributes))
        attributes = getattr(current, "__dict__", None) is below
        current = below
    steps.append(f" ({type(current).__qualname__})")
    if len(steps) > SHOWN:
        steps = [*steps[: SHOWN // 2], " ...", *steps[-SHOWN // 2 :]]
    return start + "".join(steps)


def _step(holder: Any, held: Any, attributes: bool) -> str:
    """How `holder` refers to `held`, as Python would write it after `holder` (a dict of
    `attributes`: a module's or an object's)."""
    if isinstance(holder, dict):
        key = next((k for k, v in holder.items() if v is held), None)
        if attributes and isinstance(key, str) and key.isidentifier():
            return f".{key}"
        return f"[{_key(key)}]"
    if isinstance(holder, list | tuple):
        index = next((i for i, v in enumerate(holder) if v is held), None)
        return f"[{index}]"
    if isinstance(holder, types.CellType):
        return ".cell_contents"
    if isinstance(holder, types.FunctionType):
        name = holder.__name__
        return f" ({name}).__closure__" if held is holder.__closure__ else f" ({name})"
    attrs = getattr(holder, "__dict__", None)
    if attrs is held:
        return ""  # the object's attributes: the next step names one
    names = list(attrs) if isinstance(attrs, dict) else []  # 3.11+: refers to their values
    names += [n for kind in type(holder).__mro__ for n in getattr(kind, "__slots__", ())]
    found = next((n for n in names if getattr(holder, n, None) is held), None)
    return f".{found}" if isinstance(found, str) else f" ({type(holder).__qualname__})"


def _key(key: Any) -> str:
    text = repr(key)
    return text if len(text) <= 40 else text[:37] + "..."
