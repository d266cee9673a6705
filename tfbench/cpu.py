"""The CPU a figure was read on: its identity, read where the kernels run.

Two VMs of one kind (one asv machine name, one model name: "AMD EPYC") may be two CPUs, and
a time figure is a fact about one CPU. The identity is what the kernel reports in
/proc/cpuinfo and sysfs: vendor, family, model, stepping, the instruction-set extensions
TensorFlow's CPU kernels (oneDNN, Eigen) dispatch on, the machine's logical CPUs and the
cache sizes; its `id` is a short name derived from all of them, so two readings
of one CPU name it alike and any difference names it apart. What oneDNN itself detects
depends on the release too (its oneDNN version): `onednn_isa` asks a release's TensorFlow.

Standard library only: the identity is read inside release environments as well (the probes
file), whose packages are exactly their lock. py-cpuinfo reads the same kernel files and is
the tests' second reading (tests/test_cpu.py).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
from functools import cache
from pathlib import Path
from typing import Any, TypedDict

CPUINFO = Path("/proc/cpuinfo")
CACHES = Path("/sys/devices/system/cpu/cpu0/cache")
# The extensions kernels dispatch on (x86: oneDNN's ISA ladder, Eigen's packets; Arm: NEON,
# SVE and the matrix/bf16 ones), as the kernel names them; the others (virtualisation,
# security) say nothing about a kernel's speed and would split one CPU into many.
ISA = (
    *("sse4_2", "avx", "avx2", "fma", "f16c", "avx_vnni", "avx_vnni_int8", "avx_ne_convert"),
    *("avx512f", "avx512dq", "avx512cd", "avx512bw", "avx512vl", "avx512ifma", "avx512vbmi"),
    *("avx512_vbmi2", "avx512_vnni", "avx512_bitalg", "avx512_vpopcntdq", "avx512_bf16"),
    *("avx512_fp16", "avx512_vp2intersect", "amx_tile", "amx_int8", "amx_bf16", "amx_fp16"),
    *("asimd", "asimddp", "sve", "sve2", "bf16", "i8mm", "sme"),
)
VENDORS = {"GenuineIntel": "intel", "AuthenticAMD": "amd", "0x41": "arm"}
# the short id: vendor-family.model.stepping-<CPUs>c-<digest of every field> (x: not said)
_N = r"(?:\d{1,5}|x)"
ID = re.compile(rf"[a-z0-9]{{1,12}}-{_N}\.{_N}\.{_N}-\d{{1,5}}c-[0-9a-f]{{6}}")
ONEDNN_ISA = re.compile(r"^onednn_verbose,(?:v\d+,)?info,cpu,isa:(.{1,200})$", re.M)


class Identity(TypedDict):
    id: str
    vendor: str
    model_name: str
    family: int
    model: int
    stepping: int
    cpus: int  # logical CPUs the machine has
    isa: list[str]  # of ISA, those the CPU has, in ISA's order
    caches: dict[str, int]  # L1d, L1i, L2, L3: bytes, as one CPU sees them


def _number(text: str) -> int:
    """A cpuinfo number: decimal, or 0x-prefixed (Arm's implementer and part)."""
    try:
        return int(text, 0)
    except ValueError:
        return -1


def _fields(text: str) -> dict[str, str]:
    """The first processor's block of /proc/cpuinfo: name -> value."""
    found: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            if found:
                break
            continue
        name, _, value = line.partition(":")
        found.setdefault(name.strip(), value.strip())
    return found


def _caches(folder: Path) -> dict[str, int]:
    """Each cache level's size as sysfs gives it for one CPU (48K -> 49152)."""
    found: dict[str, int] = {}
    for index in sorted(folder.glob("index*")):
        try:
            level = (index / "level").read_text().strip()
            kind = (index / "type").read_text().strip()
            size = (index / "size").read_text().strip()
        except OSError:
            continue
        scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(size[-1:], 1)
        digits = size.rstrip("KMG")
        if digits.isdigit():
            name = f"L{level}" + {"Data": "d", "Instruction": "i"}.get(kind, "")
            found[name] = int(digits) * scale
    return found


def _shown(text: str, most: int = 100) -> str:
    """A name as kept: within the characters asv's site may show (tfbench.grammar's
    MACHINE_TEXT), `most` of them."""
    return re.sub(r"[^A-Za-z0-9 _.,:;()@/+#*=-]", "?", text)[:most]


def derived_id(identity: dict[str, Any]) -> str:
    """The short id of an identity's fields (its own `id` aside)."""
    fields = {k: v for k, v in identity.items() if k != "id"}
    digest = hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()[:6]
    named = identity["vendor"]
    vendor = VENDORS.get(named) or re.sub(r"[^a-z0-9]", "", named.lower())
    family, model, stepping = (
        "x" if identity[k] < 0 else str(identity[k]) for k in ("family", "model", "stepping")
    )
    return f"{vendor[:12] or 'cpu'}-{family}.{model}.{stepping}-{identity['cpus']}c-{digest}"


def parse(cpuinfo: str, caches: dict[str, int], cpus: int) -> Identity:
    """The identity from /proc/cpuinfo's text (x86's fields, or Arm's), the caches and the
    CPU count."""
    f = _fields(cpuinfo)
    flags = set((f.get("flags") or f.get("Features") or "").split())
    found: dict[str, Any] = {
        "vendor": _shown(f.get("vendor_id") or f.get("CPU implementer") or "unknown"),
        "model_name": _shown(f.get("model name") or f.get("Model name") or "unknown"),
        "family": _number(f.get("cpu family") or f.get("CPU architecture") or "-1"),
        "model": _number(f.get("model") or f.get("CPU part") or "-1"),
        "stepping": _number(f.get("stepping") or f.get("CPU revision") or "-1"),
        "cpus": cpus,
        "isa": [name for name in ISA if name in flags],
        "caches": caches,
    }
    return Identity(id=derived_id(found), **found)  # type: ignore[typeddict-item]


@cache
def identity() -> Identity:
    """This machine's CPU, read once a process."""
    try:
        text = CPUINFO.read_text()
    except OSError:
        text = ""
    # the machine's, not this process's affinity: a pinned reader reads the same identity
    return parse(text, _caches(CACHES), os.cpu_count() or 0)


def label(found: Identity) -> str:
    """One line for people: the model name, family, model and stepping, the widest vector
    extensions, the CPUs, and the id (what the model name alone leaves unsaid)."""
    isa = found["isa"]
    wide = [n for n in ("avx2", "avx512f", "avx512_fp16", "amx_tile", "sve") if n in isa]
    return (
        f"{found['model_name']} (family {found['family']} model {found['model']} stepping "
        f"{found['stepping']}, {found['cpus']} CPUs, {'/'.join(wide) or 'no AVX2'}) "
        f"cpu {found['id']}"
    )


def named(found: Identity | str | None) -> str:
    """A kept record's CPU for people: its label; what a record kept before identities says
    (asv's `cpu`, a model name), said to be no identity; or that none was recorded."""
    if isinstance(found, dict):
        return label(found)
    if found and id_in(found):
        return found
    if found:
        return f"{found} (family, model and stepping not recorded)"
    return "a CPU not recorded"


def asv_cpu() -> str:
    """asv's machine record's `cpu` field: this CPU's label, as kept."""
    return _shown(label(identity()), 200)  # a label of a kept model name is shorter


def id_in(text: str | None) -> str | None:
    """The id a `cpu` field or a label names (`cpu ID` at its end), or None: a record written
    before identities were kept names a model alone."""
    found = re.search(rf"\bcpu ({ID.pattern})$", text or "")
    return found.group(1) if found else None


def onednn_isa(python: str, timeout: float = 120.0) -> str | None:
    """The instruction set oneDNN detects in the TensorFlow of an environment (its Python),
    as oneDNN says it (ONEDNN_VERBOSE on one matmul); None where it says nothing (oneDNN off,
    TensorFlow not importable)."""
    code = "import tensorflow as tf; tf.linalg.matmul(tf.ones((64, 64)), tf.ones((64, 64)))"
    env = dict(os.environ, ONEDNN_VERBOSE="1", TF_CPP_MIN_LOG_LEVEL="3")
    try:
        done = subprocess.run(
            [python, "-c", code], env=env, capture_output=True, text=True, timeout=timeout
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = ONEDNN_ISA.search(done.stdout)
    return _shown(found.group(1).strip(), 200) if found else None
