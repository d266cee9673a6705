"""`tfbench results upgrade`: every kept file of a former format rewritten whole in its
kind's format, so that each reader reads one format. A kind that renamed its fields says
which formats it upgrades (UPGRADES) and how (`upgraded`: the former file's JSON in the
format's words); the upgraded record passes the kind's reader before it is written (its
writer's check), or the file is named and left as it was."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from tfbench import grammar
from tfbench.keptfiles import gate_run, gate_shard, place, reading


class Upgradable(Protocol):
    FOLDER: str
    INSIDE: int
    UPGRADES: tuple[int, ...]  # the former formats it rewrites as its own

    def upgraded(self, data: dict[str, Any], /) -> dict[str, Any]: ...
    def write(self, where: Path, record: dict[str, Any], /) -> Path: ...


UPGRADABLE: tuple[Upgradable, ...] = (gate_run, gate_shard)


@dataclass
class Upgraded:
    done: list[tuple[Path, int, int]] = field(default_factory=list)  # a file, from, to
    refused: list[str] = field(default_factory=list)  # a file, and why it was left


def upgrade(results: Path) -> Upgraded:
    """Every file of a former format under `results`, upgraded in place, whole."""
    found = Upgraded()
    for folder in sorted({k.FOLDER for k in UPGRADABLE}):  # gate runs and shards share one
        for path in sorted((results / folder).rglob("*.json")):
            placed = place(folder, path.relative_to(results / folder).parts)
            kind = next((k for k in UPGRADABLE if k is placed), None)
            if kind is None:
                continue  # another kind's, or in no kind's place (the readers name it)
            try:
                data = reading.load(path, kind.INSIDE)
                was = data.get(reading.KEY, 1) if isinstance(data, dict) else None
                if was not in kind.UPGRADES:
                    continue
                new = kind.upgraded(data)
                kind.write(path, new)
            except reading.KeptFileError as e:
                found.refused.append(str(e))
            except grammar.Invalid as e:
                found.refused.append(f"{path}: upgraded, {e}: left as it was")
            else:
                found.done.append((path, was, new[reading.KEY]))
    return found
