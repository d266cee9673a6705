"""tfbench's `asv publish`: asv's own, each git range asked once."""

from __future__ import annotations

import subprocess
import sys

from asv.plugins.git import Git

from tfbench.publish import asv_publish


def test_a_range_is_asked_of_git_once_and_each_caller_gets_its_own_list(monkeypatch):
    asked = []

    def ask(repo, spec):
        asked.append(spec)
        return [f"{spec}-1", f"{spec}-2"]

    monkeypatch.setattr(Git, "get_hashes_from_range", ask)  # restored after the test
    asv_publish._remember_ranges()
    repo = object.__new__(Git)
    first = Git.get_hashes_from_range(repo, "a..b")
    first.append("changed by its caller")
    assert Git.get_hashes_from_range(repo, "a..b") == ["a..b-1", "a..b-2"]
    assert Git.get_hashes_from_range(repo, "b..c") == ["b..c-1", "b..c-2"]
    assert asked == ["a..b", "b..c"]


def test_the_command_is_asvs():
    command = asv_publish.command("conf.json")
    assert command[:3] == [sys.executable, "-m", "tfbench.publish.asv_publish"]
    shown = subprocess.run([*command[:3], "--help"], capture_output=True, text=True, check=True)
    assert "publish" in shown.stdout and "Airspeed Velocity" in shown.stdout
