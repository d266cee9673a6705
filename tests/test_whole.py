"""Files whole under faults (issue 69): a kill as asv writes its results loses nothing and
does not stop the next run; one run at a time on a results folder."""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import keep_probes

from tfbench import whole

RESULT = {"commit_hash": "abc", "results": {"x.track_leak": [[1.0]]}}
PROBES = {"format": 3, "LoopCosts": {"a|CPU": [{"status": "ok"}]}}


def _folder(tmp_path: Path) -> tuple[Path, Path]:
    root, kept = tmp_path / "results", tmp_path / ".asv" / "results-kept"
    (root / "m").mkdir(parents=True)
    (root / "benchmarks.json").write_text(json.dumps({"version": 2}))
    (root / "m" / "machine.json").write_text(json.dumps({"machine": "m"}))
    (root / "m" / "abc-env.json").write_text(json.dumps(RESULT))
    (root / "probes" / "m").mkdir(parents=True)
    (root / "probes" / "m" / "abc-env-cpu.json").write_text(json.dumps(PROBES))
    return root, kept


def _killed_within(root: Path, kept: Path, cut: str) -> None:
    """A run that cuts files as a killed asv does, then dies by SIGKILL inside `kept()`:
    `cut` is Python run there, with `root` bound."""
    code = (
        "import os, signal, sys\nfrom pathlib import Path\nfrom tfbench import whole\n"
        f"root = Path({str(root)!r})\n"
        f"with whole.Results(root, 'm', Path({str(kept)!r}), print).kept():\n"
        f"    {cut}\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == -signal.SIGKILL, run.stderr


def test_write_is_whole_and_replaces_a_link(tmp_path):
    target, elsewhere = tmp_path / "a" / "f.json", tmp_path / "other"
    elsewhere.write_text("theirs")
    target.parent.mkdir()
    target.symlink_to(elsewhere)
    whole.write(target, "ours", sync=True)
    assert target.read_text() == "ours" and not target.is_symlink()
    assert elsewhere.read_text() == "theirs"
    assert sorted(p.name for p in target.parent.iterdir()) == ["f.json"]  # no partial left


def test_a_kill_as_asv_writes_is_healed_by_the_next_run(tmp_path):
    """The results file cut to half and benchmarks.json to nothing, then SIGKILL: the next
    run puts both back as they were, in one line each, and removes the copies."""
    root, kept = _folder(tmp_path)
    before = {p: p.read_bytes() for p in [root / "benchmarks.json", root / "m" / "abc-env.json"]}
    cut = (
        "p = root / 'm' / 'abc-env.json'; p.write_bytes(p.read_bytes()[:20]); "
        "(root / 'benchmarks.json').write_bytes(b'')"
    )
    _killed_within(root, kept, cut)
    assert not whole.parses(root / "m" / "abc-env.json")
    said: list[str] = []
    with whole.Results(root, "m", kept, said.append).kept():
        assert {p: p.read_bytes() for p in before} == before
    assert len(said) == 2 and all("put back as it was before" in s for s in said), said
    assert not (kept / "copies").exists()


def test_a_cut_file_with_no_copy_is_moved_aside_and_named(tmp_path):
    """A file the killed run made and cut has nothing to go back to: it is moved out of the
    results (kept for the user), named, and the run goes on."""
    root, kept = _folder(tmp_path)
    _killed_within(root, kept, "(root / 'm' / 'new-env.json').write_bytes(b'{\"resu')")
    said: list[str] = []
    with whole.Results(root, "m", kept, said.append).kept():
        assert not (root / "m" / "new-env.json").exists()
    (line,) = said
    assert "new-env.json: unreadable; moved aside to" in line
    assert (kept / "aside" / "m--new-env.json").read_bytes() == b'{"resu'
    assert json.loads((root / "m" / "abc-env.json").read_text()) == RESULT  # untouched


def _cross_device(monkeypatch) -> None:
    """os.replace between folders fails as between two file systems (EXDEV), as where the
    results are on a volume of their own (#79); within a folder it renames."""
    replace = os.replace

    def between_devices(source, target):
        if Path(source).parent != Path(target).parent:
            raise OSError(errno.EXDEV, os.strerror(errno.EXDEV), str(source), str(target))
        replace(source, target)

    monkeypatch.setattr(os, "replace", between_devices)


def test_a_cut_file_is_moved_aside_onto_another_file_system(tmp_path, monkeypatch):
    """The results on a volume of their own: a cut file still goes aside whole (copied,
    synced, renamed in, then removed) and the run goes on; before, the move raised EXDEV at
    every run's start."""
    root, kept = _folder(tmp_path)
    (root / "m" / "new-env.json").write_bytes(b'{"resu')
    _cross_device(monkeypatch, tmp_path)
    said: list[str] = []
    with whole.Results(root, "m", kept, said.append).kept():
        assert not (root / "m" / "new-env.json").exists()
    assert "new-env.json: unreadable; moved aside to" in said[0]
    assert (kept / "aside" / "m--new-env.json").read_bytes() == b'{"resu'
    assert not list((kept / "aside").glob(".*partial"))


def test_a_merge_lands_whole_across_file_systems(tmp_path, monkeypatch):
    """Staged beside the results, moved into a results folder that is a volume of its own."""
    from tfbench.publish import merge

    source, target = tmp_path / "theirs", tmp_path / "results"
    (source / "m").mkdir(parents=True)
    (source / "m" / "machine.json").write_text(json.dumps({"machine": "m", "version": 1}))
    (source / "probes" / "m").mkdir(parents=True)
    probes = keep_probes(source / "probes" / "m" / "abcdef01-env-cpu.json")
    _cross_device(monkeypatch, tmp_path)
    done = merge.merge([source], target)
    assert len(done.added) == 2
    assert (target / "probes" / "m" / "abcdef01-env-cpu.json").read_text() == probes
    assert not list(tmp_path.glob(".tfbench-merge-*"))


def test_an_interrupt_within_puts_back_what_it_cut(tmp_path):
    root, kept = _folder(tmp_path)
    said: list[str] = []
    with pytest.raises(KeyboardInterrupt), whole.Results(root, "m", kept, said.append).kept():
        (root / "m" / "abc-env.json").write_text('{"cut')
        raise KeyboardInterrupt
    assert json.loads((root / "m" / "abc-env.json").read_text()) == RESULT
    assert len(said) == 1 and not (kept / "copies").exists()


def test_whole_files_are_left_as_the_run_wrote_them(tmp_path):
    root, kept = _folder(tmp_path)
    said: list[str] = []
    with whole.Results(root, "m", kept, said.append).kept():
        (root / "m" / "abc-env.json").write_text(json.dumps({"new": 1}))
    assert json.loads((root / "m" / "abc-env.json").read_text()) == {"new": 1} and not said


def test_a_second_run_is_refused_naming_the_first_or_waits(tmp_path):
    lock = tmp_path / "lock"
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, time\nfrom pathlib import Path\nfrom tfbench import whole\n"
         f"with whole.only_run(Path({str(lock)!r}), 'tfbench run v2.21.0^!'):\n"
         "    print('held', flush=True); sys.stdin.readline()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert holder.stdout is not None and holder.stdin is not None
    assert holder.stdout.readline() == "held\n"
    with pytest.raises(whole.Busy) as busy, whole.only_run(lock, "tfbench run"):
        pass
    assert str(busy.value) == f"pid {holder.pid}: tfbench run v2.21.0^!"
    threading.Timer(0.3, holder.stdin.close).start()
    began = time.monotonic()
    with whole.only_run(lock, "tfbench run", wait=True):
        assert time.monotonic() - began >= 0.25  # held until the first one ended
        assert lock.read_text() == f"pid {os.getpid()}: tfbench run"
    holder.wait()


def test_run_refuses_while_another_holds_the_folder(tmp_path, monkeypatch, capsys):
    """`tfbench run` on a results folder another run holds: one line naming it, exit 2,
    nothing started."""
    from tfbench.cli import main
    from tfbench.cli import run as run_command
    from tfbench.measure import spawn

    root, kept = _folder(tmp_path)
    plan = run_command.Planned(["asv"], {}, "v1^!", "m", root / "m", kept)
    monkeypatch.setattr(run_command, "planned", lambda args: plan)
    monkeypatch.setattr(spawn, "Spawned", lambda *a, **k: pytest.fail("asv started"))
    with whole.writing(root, command="tfbench results merge (the first)"):
        assert main(["run"]) == 2
    err = capsys.readouterr().err
    assert f"pid {os.getpid()}: tfbench results merge (the first)" in err and "--wait" in err


def test_a_results_folder_the_run_may_not_write_is_said_before_asv_starts(tmp_path):
    """#79: results/<machine>/ not writable (root's override dropped, as for any other
    user): one line naming it, exit 74, asv not started, no "next:" (it was asv's
    PermissionError traceback at the end, exit 1, then "next: `tfbench report`")."""
    root, kept = _folder(tmp_path)
    (root / "m").chmod(0o555)
    code = (
        "import sys\nfrom pathlib import Path\nfrom tfbench.cli import main, run\n"
        "from tfbench.measure import spawn\n"
        f"root, kept = Path({str(root)!r}), Path({str(kept)!r})\n"
        "run.planned = lambda args: run.Planned(['asv'], {}, 'v1^!', 'm', root / 'm', kept)\n"
        "spawn.Spawned = lambda *a, **k: sys.exit('asv started')\n"
        "sys.exit(main(['run']))\n"
    )
    dropped = ["setpriv", "--bounding-set=-dac_override", "--inh-caps=-all"]
    out = subprocess.run(
        [*(dropped if os.geteuid() == 0 else []), sys.executable, "-c", code],
        capture_output=True, text=True,
    )  # fmt: skip
    assert out.returncode == 74, out.stderr
    assert out.stderr.splitlines() == [
        f"tfbench: {root / 'm'}: permission denied: run this where it can write, or as a "
        "user who may (exit 74)"
    ]
    assert out.stdout == "" and not [p for p in (root / "m").iterdir() if "writable" in p.name]


def test_a_merge_with_a_cut_file_takes_the_rest_names_it_and_exits_2(tmp_path, capsys):
    """#79: a runner's folder with one file a full disk cut: the whole files are merged, the
    cut one named and skipped, and the exit code says so (it was 0)."""
    from tfbench.cli import main

    kept = Path(__file__).parents[1] / "retired" / "results" / "linux-2cpu-24gb"
    source, into = tmp_path / "runner", tmp_path / "results"
    (source / "m").mkdir(parents=True)
    shutil.copy(kept / "machine.json", source / "m" / "machine.json")
    whole_file, cut = sorted(p.name for p in kept.glob("*-virtualenv-py3.11.json"))[:2]
    shutil.copy(kept / whole_file, source / "m" / whole_file)
    (source / "m" / cut).write_bytes((kept / cut).read_bytes()[:1000])
    for path in (source / "m").iterdir():  # the runner's files under its own name
        path.write_text(path.read_text().replace('"linux-2cpu-24gb"', '"m"'))
    assert main(["results", "merge", str(source), "--into", str(into)]) == 2
    said = capsys.readouterr()
    assert sorted(p.name for p in (into / "m").iterdir()) == sorted(["machine.json", whole_file])
    assert f"tfbench: skipped {source / 'm' / cut}: " in said.err
    assert said.out.strip().endswith("2 file(s) added, 0 replaced, 1 skipped")  # machine.json too


def test_a_merge_refuses_while_a_run_holds_the_folder(tmp_path, capsys):
    """A run and a merge take one lock: a merge into results a run is writing is refused
    in one line naming the run, and nothing is merged."""
    from tfbench.cli import main

    source, into = tmp_path / "runner", tmp_path / "results"
    (source / "m").mkdir(parents=True)
    (source / "m" / "machine.json").write_text(json.dumps({"machine": "m", "version": 1}))
    with whole.writing(into, command="tfbench run v2.21.0^!"):
        assert main(["results", "merge", str(source), "--into", str(into)]) != 0
    err = capsys.readouterr().err
    assert f"pid {os.getpid()}: tfbench run v2.21.0^!" in err
    assert not (into / "m").exists()


def _limited(size: int = 4096) -> None:  # in the child: writes past `size` fail (EFBIG)
    import resource

    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))


def test_a_full_disk_is_one_line_naming_the_file_and_loses_nothing(tmp_path):
    """A write that runs out of room: the file named, what to do, exit 74; the document as
    it was, no partial file left, no traceback."""
    kept = (
        Path(__file__).parents[1]
        / "retired/results/linux-2cpu-24gb/d2a6c68b-virtualenv-py3.11.json"
    )
    document = tmp_path / "profile.md"
    document.write_text("# Where the time goes\n\n" + "earlier reading\n" * 300)
    before = document.read_bytes()
    run = subprocess.run(
        [sys.executable, "-m", "tfbench", "profile", "release", "--result", str(kept),
         "--into", str(document)],
        capture_output=True, text=True, preexec_fn=_limited,
    )  # fmt: skip
    assert run.returncode == 74, run.stderr
    assert run.stderr.strip().splitlines()[-1] == (
        f"tfbench: {document}: the file is over the size this process may write "
        "(ulimit -f) (exit 74)"
    ), run.stderr
    assert "Traceback" not in run.stderr
    assert document.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == [
        "profile.md"
    ]


@pytest.mark.slow
def test_a_measurement_whose_record_cannot_be_written_ends_in_one_line(tmp_path):
    """#79: a temporary folder that cannot take the measuring child's record (TMPDIR nearly
    full; here, files over 1 KiB refused): one line naming the file, exit 74 (it was the
    child's "No space left on device" traceback, then the parent's JSONDecodeError, exit
    70)."""
    (tmp_path / "tiny.py").write_text("def step():\n    pass\n")
    run = subprocess.run(
        [sys.executable, "-m", "tfbench", "measure", f"{tmp_path / 'tiny.py'}::step",
         "--iterations", "20"],
        capture_output=True, text=True, preexec_fn=lambda: _limited(1024),
    )  # fmt: skip
    assert run.returncode == 74, run.stderr
    said = [ln for ln in run.stderr.splitlines() if ln.startswith("tfbench: ")]
    assert len(said) == 1 and said[0].endswith("(ulimit -f) (exit 74)"), run.stderr
    assert "Traceback" not in run.stderr and run.stdout == ""


def test_each_machine_fault_has_its_line_and_others_are_crashes(capsys):
    import errno

    from tfbench import faults

    for name, advice in faults.MACHINE_FAULTS.items():
        error = OSError(getattr(errno, name), os.strerror(getattr(errno, name)), "/r/f.json")
        assert faults.machine_fault(error) == faults.EXIT_IO
        assert capsys.readouterr().err == f"tfbench: /r/f.json: {advice} (exit 74)\n"
    assert faults.machine_fault(OSError(errno.ENOENT, "No such file", "/r/f.json")) is None


def test_a_killed_runs_scratch_folders_go_and_a_live_runs_stay(tmp_path, capsys):
    """A scratch folder whose owner was killed is removed by the next sweep, in one line; a
    live owner's, and a folder that names no owner, are left."""
    made = subprocess.run(
        [sys.executable, "-c",
         "import os, signal\nfrom pathlib import Path\nfrom tfbench import whole\n"
         f"print(whole.scratch('tfbench-run-', Path({str(tmp_path)!r})), flush=True)\n"
         "os.kill(os.getpid(), signal.SIGKILL)"],
        capture_output=True, text=True,
    )  # fmt: skip
    killed = Path(made.stdout.strip())
    (killed / "asv-forkserver-x").mkdir()
    live = whole.scratch("tfbench-run-", tmp_path)
    (tmp_path / "tfbench-run-someone-elses").mkdir()
    assert whole.sweep("tfbench-run-", tmp_path) == [killed]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [live.name, "tfbench-run-someone-elses"]
    )
    assert capsys.readouterr().err.count("\n") == 1
    assert whole.sweep("tfbench-run-", tmp_path) == [] and not capsys.readouterr().err


def test_a_killed_runs_probes_go_back_to_agree_with_asvs_results(tmp_path):
    """asv writes its results at a run's end, the probes a family at a time: the probes a
    killed run wrote (over a file, or a new one) go back as they were, each in one line."""
    root, kept = _folder(tmp_path)
    probes = root / "probes" / "m"
    cut = (
        "(root / 'probes/m/abc-env-cpu.json').write_text('{\"killed\": 1}'); "
        "(root / 'probes/m/def-env-cpu.json').write_text('{\"killed\": 2}')"
    )
    _killed_within(root, kept, cut)
    said: list[str] = []
    with whole.Results(root, "m", kept, said.append).kept():
        assert [p.name for p in probes.iterdir()] == ["abc-env-cpu.json"]
        assert json.loads((probes / "abc-env-cpu.json").read_text()) == PROBES
    assert len(said) == 2 and all("a run that did not end" in s for s in said), said


def test_probes_stay_where_the_run_ended_and_go_back_where_it_was_interrupted(tmp_path):
    root, kept = _folder(tmp_path)
    probes = root / "probes" / "m" / "abc-env-cpu.json"
    with pytest.raises(KeyboardInterrupt), whole.Results(root, "m", kept, print).kept():
        probes.write_text('{"interrupted": 1}')
        raise KeyboardInterrupt
    assert json.loads(probes.read_text()) == PROBES
    with whole.Results(root, "m", kept, print).kept():
        probes.write_text('{"ended": 1}')
    assert json.loads(probes.read_text()) == {"ended": 1}


def test_copies_cut_by_a_kill_are_not_taken_for_a_runs(tmp_path):
    """A kill while the copies are made leaves them partial: never read as a run's, whose
    probes would be put back (a probes file with no copy would go)."""
    root, kept = _folder(tmp_path)
    (kept / "copies.partial" / "benchmarks.json").parent.mkdir(parents=True)
    (kept / "copies.partial" / "benchmarks.json").write_text("{}")
    said: list[str] = []
    with whole.Results(root, "m", kept, said.append).kept():
        assert json.loads((root / "probes/m/abc-env-cpu.json").read_text()) == PROBES
    assert not said and sorted(p.name for p in kept.iterdir()) == []


def _site(folder: Path, page: str) -> Path:
    folder.mkdir(parents=True)
    (folder / "index.html").write_text(page)
    return folder


@pytest.mark.parametrize("exchange", [True, False], ids=["renameat2", "two-renames"])
def test_swap_puts_the_new_folder_in_place_and_the_old_at_its_name(
    tmp_path, monkeypatch, exchange
):
    if not exchange:  # a file system or libc without RENAME_EXCHANGE
        monkeypatch.setattr(whole, "_LIBC", object())
    built, into = _site(tmp_path / "built", "new"), _site(tmp_path / "html", "old")
    whole.swap(built, into)
    assert (into / "index.html").read_text() == "new"
    assert (built / "index.html").read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["built", "html"]
    whole.swap(_site(tmp_path / "first", "only"), tmp_path / "none")  # nothing there yet
    assert (tmp_path / "none" / "index.html").read_text() == "only"


def test_swap_through_a_link_replaces_what_it_points_to_and_keeps_the_link(tmp_path):
    """#79: .asv/html a link to where a web server reads: the site lands there, the link
    stays a link (it was replaced by a folder, and the server kept the old site)."""
    served = _site(tmp_path / "srv" / "www", "old")
    (tmp_path / "asv").mkdir()
    (tmp_path / "asv" / "html").symlink_to(served)
    whole.swap(_site(tmp_path / "srv" / "built", "new"), tmp_path / "asv" / "html")
    assert (tmp_path / "asv" / "html").is_symlink()
    assert (served / "index.html").read_text() == "new"


def _cross_device(monkeypatch, root: Path, code: int = errno.EXDEV) -> None:
    """Each folder in `root` a file system of its own: renames between them fail, EXDEV,
    and a move of such a folder itself fails with `code` (a mount point's: EBUSY)."""
    rename = os.rename

    def across(a, b):
        moved, to = Path(a).relative_to(root).parts, Path(b).relative_to(root).parts
        if moved[0] != to[0]:
            raise OSError(code if len(moved) == 1 else errno.EXDEV, "cannot", str(b))
        rename(a, b)

    monkeypatch.setattr(os, "rename", across)
    monkeypatch.setattr(whole, "_LIBC", object())  # the exchange would not ask os.rename


@pytest.mark.parametrize("code", [errno.EXDEV, errno.EBUSY], ids=["other-device", "mount"])
def test_a_folder_no_rename_may_replace_is_refilled_whole_in_place(tmp_path, monkeypatch, code):
    """#79: .asv/html a mount point (EBUSY) or across file systems (EXDEV): the new site's
    entries take the old ones' places inside it, an old entry the new site lacks goes, and
    nothing of the refill is left (publish exited 70 on '[Errno 16] Device or resource
    busy')."""
    into = _site(tmp_path / "html", "old")
    (into / "gone.html").write_text("old only")
    (into / "graphs").mkdir()
    (into / "graphs" / "a.json").write_text("old")
    built = _site(tmp_path / "scratch" / "built", "new")
    (built / "graphs").mkdir()
    (built / "graphs" / "a.json").write_text("new")
    inode = into.stat().st_ino
    _cross_device(monkeypatch, tmp_path, code)
    whole.swap(built, into)
    assert into.stat().st_ino == inode  # the same folder, refilled
    assert sorted(p.name for p in into.iterdir()) == ["graphs", "index.html"]
    assert (into / "index.html").read_text() == (into / "graphs" / "a.json").read_text() == "new"


def test_a_refill_that_runs_out_of_space_leaves_the_folder_as_it_was(tmp_path, monkeypatch):
    """#79: the new site is copied whole into the mount before any entry is replaced: a
    full disk stops it there, with one OSError naming where, the old site served."""
    into = _site(tmp_path / "html", "old")
    built = _site(tmp_path / "scratch" / "built", "new")
    _cross_device(monkeypatch, tmp_path)

    def full(source, target, **kwargs):
        Path(target).mkdir()
        (Path(target) / "index.html").write_text("cu")
        raise shutil.Error([(str(source), str(target), "[Errno 28] No space left on device")])

    monkeypatch.setattr(shutil, "copytree", full)
    with pytest.raises(OSError) as raised:
        whole.swap(built, into)
    assert raised.value.errno == errno.ENOSPC and str(into) in raised.value.filename
    assert [p.name for p in into.iterdir()] == ["index.html"]
    assert (into / "index.html").read_text() == "old"


def _publish_killed_at_the_swap(tmp_path: Path, conf: Path, kill: bool) -> int:
    """`tfbench publish` with asv's build stood in for by a one-page site; SIGKILL'd at its
    swap where `kill`."""
    code = (
        "import os, signal, types\nfrom tfbench import whole\nfrom tfbench.cli import main\n"
        "from tfbench.publish import site\n"
        "def build(conf_path, conf, data, scratch):\n"
        "    (scratch / 'html').mkdir(); (scratch / 'html' / 'index.html').write_text('new')\n"
        "    return scratch / 'html'\n"
        "site._build = build\n"
        "site.read = lambda conf_path: types.SimpleNamespace(problems=[], machines=[])\n"
        "real = whole.swap\n"
        "def swap(built, into):\n"
        f"    if {kill}: os.kill(os.getpid(), signal.SIGKILL)\n"
        "    real(built, into)\n"
        "whole.swap = swap\n"
        f"main(['publish', '--config', {str(conf)!r}])\n"
    )
    return subprocess.run([sys.executable, "-c", code], capture_output=True).returncode


def test_a_publish_killed_at_its_swap_keeps_the_site_and_a_rerun_publishes(tmp_path):
    """#69: killed as it puts the new site in place, publish leaves the previous site and
    its scratch (a dead owner's); the next publish puts its site in place and removes it."""
    from conftest import scratch_asv_conf

    conf = scratch_asv_conf(tmp_path, tmp_path / "results")
    _site(tmp_path / "html", "old")
    assert _publish_killed_at_the_swap(tmp_path, conf, kill=True) == -signal.SIGKILL
    assert (tmp_path / "html" / "index.html").read_text() == "old"
    assert [p for p in tmp_path.iterdir() if p.name.startswith(".tfbench-publish-")]
    assert _publish_killed_at_the_swap(tmp_path, conf, kill=False) == 0
    assert (tmp_path / "html" / "index.html").read_text() == "new"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".tfbench-publish-")]


def _gate_killed_midway(tmp_path: Path, kill: bool) -> int:
    """`run_gate` with its measurement stood in for by one run written into its folder;
    SIGKILL'd within the measurement where `kill`."""
    code = (
        "import os, signal\nfrom pathlib import Path\nfrom tfbench.gate import asvruns\n"
        "def gate(request, hashes, say, work):\n"
        "    (work / 'A1-full').mkdir(); (work / 'A1-full' / 'run.json').write_text('new')\n"
        f"    if {kill}: os.kill(os.getpid(), signal.SIGKILL)\n"
        "    return 'done'\n"
        "asvruns._gate, asvruns.commits = gate, lambda conf, tags: {}\n"
        f"request = asvruns.Request(Path({str(tmp_path / 'asv.conf.json')!r}), None, "
        "'v2.14.1', 'v2.15.1', 'm')\n"
        "assert asvruns.run_gate(request, print) == 'done'\n"
    )
    return subprocess.run([sys.executable, "-c", code], capture_output=True).returncode


def test_a_gate_killed_midway_keeps_the_previous_runs_until_it_is_done(tmp_path):
    """#69: a gate deleted the previous gate's runs before it had its own; killed midway,
    it now leaves them as they were, and the next gate puts its runs in their place and
    removes the killed one's scratch."""
    gates = tmp_path / ".asv" / "gate"
    (gates / "v2.14.1-v2.15.1" / "A1-full").mkdir(parents=True)
    (gates / "v2.14.1-v2.15.1" / "A1-full" / "run.json").write_text("old")
    assert _gate_killed_midway(tmp_path, kill=True) == -signal.SIGKILL
    assert (gates / "v2.14.1-v2.15.1" / "A1-full" / "run.json").read_text() == "old"
    assert [p for p in gates.iterdir() if p.name.startswith(".tfbench-gate-")]
    assert _gate_killed_midway(tmp_path, kill=False) == 0
    assert (gates / "v2.14.1-v2.15.1" / "A1-full" / "run.json").read_text() == "new"
    assert [p.name for p in gates.iterdir()] == ["v2.14.1-v2.15.1"]


def test_a_killed_measurements_temporary_folders_go_with_the_next_command(tmp_path):
    """#69: every temporary folder of tfbench's names its owner; a `tfbench measure` killed
    by SIGKILL leaves its folders, and the next tfbench command, whichever, removes them
    in one line."""
    (tmp_path / "slow.py").write_text("import time\n\ndef step():\n    time.sleep(0.01)\n")
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    env = {**os.environ, "TMPDIR": str(temporary)}
    measuring = subprocess.Popen(
        [sys.executable, "-m", "tfbench", "measure", f"{tmp_path / 'slow.py'}::step",
         "--iterations", "20000"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while not list(temporary.glob("tfbench-*/tfbench-children-*")):  # the step runs
        assert time.monotonic() < deadline, list(temporary.rglob("*"))
        time.sleep(0.1)
    os.killpg(measuring.pid, signal.SIGKILL)
    measuring.wait()
    assert [p.name.rpartition("-")[0] for p in temporary.iterdir()] == ["tfbench-spec"]
    listed = subprocess.run(
        [sys.executable, "-m", "tfbench", "list"], env=env, capture_output=True, text=True
    )
    assert listed.returncode == 0
    assert "tfbench: removed 1 folder(s) a stopped run left" in listed.stderr
    assert not list(temporary.iterdir())


def test_publish_on_a_full_disk_is_one_line_and_the_site_is_kept(tmp_path):
    """#69: publish ran out of room with a traceback, or asv's own, and "asv publish failed"
    (exit 3). Now: one line naming the folder, exit 74, the previous site as it was, no
    scratch left; and asv's publish itself, out of room, ends in one line, exit 74."""
    from conftest import scratch_asv_conf

    from tfbench.paths import ROOT
    from tfbench.publish import asv_publish

    source, results = ROOT / "retired" / "results", tmp_path / "results"
    (results / "linux-2cpu-24gb").mkdir(parents=True)
    (results / "benchmarks.json").write_bytes((ROOT / "results/benchmarks.json").read_bytes())
    for name in (
        "linux-2cpu-24gb/machine.json",
        "linux-2cpu-24gb/d2a6c68b-virtualenv-py3.11.json",
    ):
        (results / name).write_bytes((source / name).read_bytes())
    conf = scratch_asv_conf(tmp_path, results)
    site = _site(tmp_path / "html", "old")
    for command, folder in (
        ([sys.executable, "-m", "tfbench", "publish", "--config", str(conf)],
         rf"{tmp_path}/\.tfbench-publish-\w+/results"),
        (asv_publish.command(str(scratch_asv_conf(tmp_path / "asv", results))),
         str(tmp_path / "asv" / "html")),
    ):  # fmt: skip
        run = subprocess.run(
            command, capture_output=True, text=True, preexec_fn=_limited, timeout=300
        )
        assert run.returncode == 74, run.stderr
        said = [line for line in run.stderr.splitlines() if not line.startswith("[")]
        assert len(said) == 1 and re.fullmatch(
            rf"tfbench: {folder}: the file is over the size this process may write "
            r"\(ulimit -f\) \(exit 74\)",
            said[0],
        ), run.stderr
    assert [p.name for p in site.iterdir()] == ["index.html"]
    assert (site / "index.html").read_text() == "old"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".tfbench-publish-")]
