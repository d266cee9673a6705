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
INTEL = (DATA / "intel-6.167.1-cpuinfo.txt").read_text()
CACHES = {"L1d": 48 << 10, "L1i": 64 << 10, "L2": 2 << 20, "L3": 480 << 20}


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
    assert keptfiles.cpu_identity(json.loads(json.dumps(found))) == found


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
        assert keptfiles.cpu_identity(json.loads(json.dumps(read))) == read


def test_this_machines_identity_is_the_same_in_two_processes():
    code = "import json; from tfbench import cpu; print(json.dumps(cpu.identity()))"
    read = [
        json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True).stdout)
        for _ in range(2)
    ]
    assert read[0] == read[1] == json.loads(json.dumps(cpu.identity()))


def test_py_cpuinfo_reads_the_same_cpu():
    """A second reader of the kernel's report (py-cpuinfo, as pytest-benchmark uses it)."""
    cpuinfo = pytest.importorskip("cpuinfo")
    other, here = cpuinfo.get_cpu_info(), cpu.identity()
    assert (other["family"], other["model"], other["stepping"]) == (
        here["family"],
        here["model"],
        here["stepping"],
    )
    assert other["vendor_id_raw"] == here["vendor"] and other["count"] == here["cpus"]
    assert set(here["isa"]) <= set(other["flags"])
    assert {n for n in cpu.ISA if n in other["flags"]} == set(here["isa"])


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
        keptfiles.cpu_identity(kept)


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
