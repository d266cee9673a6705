"""The CPU a figure is read on (tfbench.cpu): read twice it names one CPU alike; any field
that changes a kernel's speed names it apart; what says nothing of speed does not; a kept
identity is checked field by field, its id the one its fields derive; a second reader
(py-cpuinfo) reads the same CPU."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tfbench import cpu, keptfiles
from tfbench.grammar import Invalid

DATA = Path(__file__).parent / "data" / "cpu"
# /proc/cpuinfo's first processor on a VM of the project's kind, read 2026-12-02
INTEL = (DATA / "intel-6.167.1.cpuinfo.txt").read_text()
CACHES = {"L1d": 48 << 10, "L1i": 64 << 10, "L2": 2 << 20, "L3": 480 << 20}
# CPUs of the project's kind recorded whole: /proc/cpuinfo, sysfs's caches and what
# py-cpuinfo 9.0.0 returned on each (name: the id the machine itself read)
RECORDED = {
    "amd-23.49.0": "amd-23.49.0-2c-f77e56",  # stepping 0: py-cpuinfo leaves it out
    "intel-6.106.6": "intel-6.106.6-2c-22f061",
}


def _edited(text: str, name: str, value: str) -> str:
    """cpuinfo with one field's value replaced."""
    return "\n".join(
        f"{name}\t\t: {value}" if line.split(":")[0].strip() == name else line
        for line in text.splitlines()
    )


def test_a_cpuinfo_reads_as_its_fields_and_an_id_they_derive():
    found = cpu.parse(INTEL, CACHES, 2)
    assert (found["vendor"], found["family"], found["model"], found["stepping"]) == (
        "GenuineIntel",
        6,
        167,
        1,
    )
    assert found["model_name"] == "Intel(R) Xeon(R) Processor"
    assert {"avx512f", "avx512_fp16", "amx_tile", "amx_bf16"} <= set(found["isa"])
    assert "hypervisor" not in found["isa"]  # what says nothing of a kernel's speed
    assert found["id"] == cpu.derived_id(found) and cpu.ID.fullmatch(found["id"])
    assert found["id"].startswith("intel-6.167.1-2c-")
    assert keptfiles.fields.cpu_identity(json.loads(json.dumps(found))) == found


@pytest.mark.parametrize(
    "change",
    [
        lambda t, c, n: (_edited(t, "stepping", "2"), c, n),
        lambda t, c, n: (_edited(t, "model", "143"), c, n),
        lambda t, c, n: (_edited(t, "vendor_id", "AuthenticAMD"), c, n),
        lambda t, c, n: (t.replace(" amx_tile", ""), c, n),  # an ISA its kernels dispatch on
        lambda t, c, n: (t, dict(c, L3=32 << 20), n),
        lambda t, c, n: (t, c, 4),
    ],
    ids=["stepping", "model", "vendor", "isa", "cache", "cpus"],
)
def test_any_field_a_kernels_speed_depends_on_names_the_cpu_apart(change):
    assert cpu.parse(*change(INTEL, CACHES, 2))["id"] != cpu.parse(INTEL, CACHES, 2)["id"]


def test_what_says_nothing_of_speed_leaves_the_id_as_it_is():
    """The clock a VM reports, its microcode, security flags and mitigations vary from boot
    to boot of one CPU."""
    varied = _edited(_edited(INTEL, "cpu MHz", "2100.000"), "microcode", "0x2b")
    varied = varied.replace(" hypervisor", "").replace("bugs\t\t: ", "bugs\t\t: srbds ")
    assert cpu.parse(varied, CACHES, 2)["id"] == cpu.parse(INTEL, CACHES, 2)["id"]


def test_an_arm_cpuinfo_and_an_empty_one_read_as_identities_of_their_form():
    arm = (
        "processor\t: 0\nBogoMIPS\t: 243.75\nFeatures\t: fp asimd aes sve sve2 bf16 i8mm\n"
        "CPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x0\n"
        "CPU part\t: 0xd4f\nCPU revision\t: 1\n"
    )
    found = cpu.parse(arm, {}, 4)
    assert found["id"].startswith("arm-8.3407.1-4c-") and found["isa"][:2] == ["asimd", "sve"]
    empty = cpu.parse("", {}, 1)
    assert (empty["family"], empty["model_name"]) == (-1, "unknown")
    assert empty["id"].startswith("unknown-x.x.x-1c-")
    for read in (found, empty):
        assert keptfiles.fields.cpu_identity(json.loads(json.dumps(read))) == read


def test_this_machines_identity_is_the_same_in_two_processes():
    code = "import json; from tfbench import cpu; print(json.dumps(cpu.identity()))"
    read = [
        json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True).stdout)
        for _ in range(2)
    ]
    assert read[0] == read[1] == json.loads(json.dumps(cpu.identity()))


def _recorded(name: str, tmp_path: Path) -> cpu.Identity:
    """A recorded CPU's identity, its caches read from a sysfs folder laid out as recorded."""
    for line in (DATA / f"{name}.caches.txt").read_text().splitlines():
        key, _, value = line.partition(": ")
        (tmp_path / key).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / key).write_text(value + "\n")
    text = (DATA / f"{name}.cpuinfo.txt").read_text()
    return cpu.parse(text, cpu._caches(tmp_path / "cache"), text.count("processor\t:"))


def _disagreements(other: dict, here: dict) -> list[str]:
    """Where py-cpuinfo's reading of a CPU differs from tfbench's. py-cpuinfo leaves out a
    field it read as 0 or empty (its _copy_new_fields keeps only true values), so a number
    it leaves out is 0 (or, where tfbench read none either, -1), and flags it leaves out
    are flags it did not read: the ISA is then not compared."""
    read = dict(here)
    found = [
        f"{name}: {other.get(name)} vs {read[name]}"
        for name in ("family", "model", "stepping")
        if other.get(name, 0) != read[name] and not (name not in other and read[name] == -1)
    ]
    if other.get("vendor_id_raw") != here["vendor"]:
        found.append(f"vendor: {other.get('vendor_id_raw')} vs {here['vendor']}")
    if other.get("count") != here["cpus"]:
        found.append(f"cpus: {other.get('count')} vs {here['cpus']}")
    if "flags" in other and {n for n in cpu.ISA if n in other["flags"]} != set(here["isa"]):
        found.append(f"isa: {sorted(other['flags'])} vs {here['isa']}")
    return found


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_a_recorded_cpu_reads_as_the_id_its_machine_read(name, tmp_path):
    found = _recorded(name, tmp_path)
    assert found["id"] == RECORDED[name]
    assert found["caches"].keys() == {"L1d", "L1i", "L2", "L3"}
    assert "avx2" in found["isa"] and keptfiles.fields.cpu_identity(json.loads(json.dumps(found)))


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_py_cpuinfo_read_each_recorded_cpu_as_tfbench_reads_it(name, tmp_path):
    other = json.loads((DATA / f"{name}.py-cpuinfo.json").read_text())
    found = _recorded(name, tmp_path)
    assert _disagreements(other, found) == []
    # the comparison is not blind: a stepping, a flag or a count apart is named
    assert _disagreements(dict(other, stepping=found["stepping"] + 1), found) == [
        f"stepping: {found['stepping'] + 1} vs {found['stepping']}"
    ]
    assert _disagreements(dict(other, count=64), found) == [f"cpus: 64 vs {found['cpus']}"]
    if "flags" in other:
        fewer = [f for f in other["flags"] if f != "avx2"]
        assert _disagreements(dict(other, flags=fewer), found)[0].startswith("isa: ")


def test_py_cpuinfo_leaving_out_a_stepping_of_0_agrees_and_of_1_does_not(tmp_path):
    """The AMD family 23 CPU above: stepping 0, which py-cpuinfo leaves out."""
    other = json.loads((DATA / "amd-23.49.0.py-cpuinfo.json").read_text())
    found = _recorded("amd-23.49.0", tmp_path)
    assert "stepping" not in other and found["stepping"] == 0
    assert _disagreements(other, dict(found, stepping=1)) == ["stepping: None vs 1"]


def test_py_cpuinfo_reads_the_same_cpu():
    """A second reader of this machine's kernel report (py-cpuinfo, as pytest-benchmark uses
    it)."""
    cpuinfo = pytest.importorskip("cpuinfo")
    other, here = cpuinfo.get_cpu_info(), cpu.identity()
    assert _disagreements(other, here) == []
    assert set(here["isa"]) <= set(other.get("flags", here["isa"]))


@pytest.mark.parametrize(
    "edit, where",
    [
        (lambda d: d.update(id="intel-6.167.1-2c-000000"), "id: 'intel"),  # another CPU's id
        (lambda d: d.update(stepping=2), "id: 'intel"),  # fields that are not the id's
        (lambda d: d["isa"].append("avx1024"), "isa[22]"),
        (lambda d: d.update(model="167"), "model"),
        (lambda d: d.update(model_name="<script>x</script>"), "model_name"),
        (lambda d: d["caches"].update(L9=1), "caches key"),
        (lambda d: d.update(cpus=10**20), "cpus"),
        (lambda d: d.pop("vendor"), "vendor: missing"),
    ],
)
def test_a_kept_identity_not_of_its_form_is_refused_naming_its_field(edit, where):
    kept = json.loads(json.dumps(cpu.parse(INTEL, CACHES, 2)))
    edit(kept)
    with pytest.raises(Invalid, match=f"^cpu.{re.escape(where)}"):
        keptfiles.fields.cpu_identity(kept)


def test_a_label_names_the_id_and_a_record_kept_before_identities_says_it_has_none():
    here = cpu.parse(INTEL, CACHES, 2)
    assert cpu.id_in(cpu.label(here)) == here["id"]
    assert cpu.named("AMD EPYC (2 cores)") == (
        "AMD EPYC (2 cores) (family, model and stepping not recorded)"
    )
    assert cpu.named(None) == "a CPU not recorded" and cpu.id_in("AMD EPYC (2 cores)") is None


def test_the_command_prints_the_identity_and_asvs_field(tmp_path, capsys):
    from tfbench.cli import main

    assert main(["cpu", "--id"]) == 0
    assert capsys.readouterr().out.strip() == cpu.identity()["id"]
    assert main(["cpu", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == json.loads(json.dumps(cpu.identity()))
    config = tmp_path / "asv.conf.json"
    config.write_text('{"results_dir": "results"}')
    assert main(["cpu", "--asv", "box", "--config", str(config)]) == 0
    assert capsys.readouterr().out.strip() == cpu.asv_cpu()


@pytest.mark.slow
def test_onednn_says_which_isa_it_detects_in_a_tensorflow():
    """This environment's TensorFlow (the `tf` extra): oneDNN names an ISA this CPU has."""
    found = cpu.onednn_isa(sys.executable)
    assert found and ("AVX" in found or "SSE" in found), found
