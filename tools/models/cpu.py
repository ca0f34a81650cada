"""The CPU this process runs on, its kind, and what each compute path measured on CPUs of that kind.

The kind comes from the CPU's flags (``/proc/cpuinfo``): AMX, AVX-512 with VNNI, AVX-512, AVX2, or none of
those. :data:`MEASURED` holds what ``bench/throughput.py`` found on each CPU model measured, naming it; a
kind with no row has not been measured, and ``model`` says so instead of guessing. The fast path's kernels
follow from the row of this very CPU model (:meth:`Measured.choice`): the flags alone do not decide it (on
two AVX2 EPYCs int8 ran 1.04x and 1.66x full precision), so another model, of a measured kind or not, is
timed once (``tools.models.kernels``).
"""

from __future__ import annotations

import os
import platform
from dataclasses import dataclass
from enum import Enum
from functools import lru_cache
from pathlib import Path


class CpuKind(Enum):
    """What matters to the int8 and fp32 kernels, strongest first."""

    AMX = "AMX (with AVX-512 VNNI)"
    AVX512_VNNI = "AVX-512 with VNNI"
    AVX512 = "AVX-512 without VNNI"
    AVX2 = "AVX2 without AVX-512 or VNNI"
    OTHER = "no AVX2"


@dataclass(frozen=True)
class Cpu:
    """This machine's CPU: its model name, family/model, the flags that matter, and its kind."""

    name: str
    family_model: str
    flags: frozenset[str]
    kind: CpuKind


class FastKernel(Enum):
    """What the fast path (a ``:int8`` model) computes with on this CPU."""

    INT8 = "int8"  # ONNX Runtime int8 (dynamically quantised MatMuls); attentions on PyTorch int8
    BF16 = "bf16"  # OpenVINO bf16 on the full-precision export (AMX tiles); attentions on PyTorch fp32
    FP32 = "fp32"  # full precision: int8 buys too little here to pay for the scores it moves

    @property
    def words(self) -> str:
        """How a reply names it ("The fast path runs ... on this CPU")."""
        return {"int8": "int8", "bf16": "bf16 (OpenVINO)"}.get(self.value, "full precision")


#: int8 is taken only where it is at least this much faster than full precision: it moves STS-B Spearman by
#: 0.003-0.004, which a few percent of speed does not pay for.
INT8_WORTH = 1.15


@dataclass(frozen=True)
class KernelChoice:
    """The fast path's kernels on this CPU and why (a sentence naming the measurement or the setting)."""

    kernel: FastKernel
    why: str


def choice_from(full_x: float, int8_x: float, where: str, bf16_x: float | None = None,
                bf16_ready: bool = False) -> KernelChoice:
    """bf16 where it was measured at least as fast as int8 and :data:`INT8_WORTH` times full precision's speed
    (it moves the scores far less than int8) and ``openvino`` is installed; else int8 where int8 is
    :data:`INT8_WORTH` times full precision's speed or more; else full precision."""
    if bf16_x is not None and bf16_x >= max(int8_x, INT8_WORTH * full_x):
        gain = bf16_x / full_x
        if bf16_ready:
            return KernelChoice(FastKernel.BF16, f"OpenVINO bf16 ran {gain:.2f}x as fast as full precision and "
                                                 f"{bf16_x / int8_x:.2f}x int8 {where}")
        where += (f" (OpenVINO bf16 ran {gain:.2f}x there: `pip install -r requirements-openvino.txt` would run "
                  "it)")
    gain = int8_x / full_x
    if gain >= INT8_WORTH:
        return KernelChoice(FastKernel.INT8, f"int8 ran {gain:.2f}x as fast as full precision {where}")
    return KernelChoice(FastKernel.FP32, f"int8 ran only {gain:.2f}x as fast as full precision {where} (under "
                                         f"{INT8_WORTH:.2f}x buys too little for the scores it moves), so the fast "
                                         "path runs full precision")


@dataclass(frozen=True)
class Measured:
    """What the compute paths measured on one CPU model (``bench/throughput.py``, STS-B test).

    Attributes:
        kind: the CPU's kind.
        family_model: its ``cpu family/model`` from ``/proc/cpuinfo`` (the row holds for that model only).
        cpu: the CPU it ran on, with its flags and the date.
        full: full precision, against sentence-transformers.
        fast: the int8 fast path, against sentence-transformers and our full precision.
        full_x: full precision's speed, in multiples of sentence-transformers' default.
        int8_x: ONNX Runtime int8's speed, in the same multiples.
        bf16_x: OpenVINO bf16's speed, in the same multiples (measured on CPUs with AMX only).
        bf16: what bf16 measured, against sentence-transformers (where ``bf16_x`` is given).
    """

    kind: CpuKind
    family_model: str
    cpu: str
    full: str
    fast: str
    full_x: float
    int8_x: float
    bf16_x: float | None = None
    bf16: str = ""

    def choice(self, bf16_ready: bool = False) -> KernelChoice:
        """The fast path's kernels on this CPU model, from these measurements (bf16 only where ``bf16_ready``:
        the ``openvino`` package is installed)."""
        return choice_from(self.full_x, self.int8_x, f"when this CPU model ({self.family_model}) was measured",
                           self.bf16_x, bf16_ready)


#: One row per CPU model measured so far; each names its CPU (a ratio holds only where it was measured).
MEASURED: tuple[Measured, ...] = (
    Measured(
        CpuKind.AVX2, "23/49", "AMD EPYC, family 23 model 49 (Zen 2: AVX2, no AVX-512, no VNNI), 2 cores",
        "ONNX Runtime fp32 on bulk passes 1.67x sentence-transformers' default and 1.6x its ONNX backend",
        "ONNX Runtime int8 1.74x sentence-transformers' default: about full precision's speed, since without "
        "VNNI the int8 kernels gain little; its own int8 export was 1.05x", 1.67, 1.74),
    Measured(
        CpuKind.AVX2, "25/17", "AMD EPYC, family 25 model 17 (Zen 4 with only AVX2 exposed: no AVX-512, no "
        "VNNI), 2 cores, 2026-11-25",
        "ONNX Runtime fp32 on bulk passes 1.34x sentence-transformers' default, 1.25x its ONNX backend and 1.19x "
        "its OpenVINO fp32 backend",
        "ONNX Runtime int8 2.24x sentence-transformers' default, 1.72x its avx2 int8 export and 1.98x its "
        "OpenVINO backend (fp32 here)", 1.34, 2.24),
    Measured(
        CpuKind.AVX2, "25/1", "AMD EPYC, family 25 model 1 (Zen 3: AVX2, no AVX-512, no VNNI), 2 cores, 2026-11-28",
        "ONNX Runtime fp32 on bulk passes 2.66x sentence-transformers' default and 1.54x its ONNX backend (its best "
        "fp32 backend here; 1.25x on the commands' path)",
        "ONNX Runtime int8 3.64x sentence-transformers' default on bulk passes (3.07x on the commands' path), 1.76x "
        "its avx2 int8 export and 1.37x our full precision", 2.66, 3.64),
    Measured(
        CpuKind.AVX512_VNNI, "26/2", "AMD EPYC, family 26 model 2 (Zen 5: AVX-512, VNNI, BF16, no AMX), 2 cores, "
        "2026-11-24",
        "ONNX Runtime fp32 on bulk passes 2.52x sentence-transformers' default, 1.61x its ONNX backend and 1.25x "
        "its OpenVINO fp32 backend",
        "ONNX Runtime int8 5.10x sentence-transformers' default, 1.70x its avx512_vnni int8 export and 1.68x its "
        "OpenVINO backend (bf16)", 2.52, 5.10),
    Measured(
        CpuKind.AVX512_VNNI, "6/207", "Intel Xeon, family 6 model 207 (AVX-512, VNNI, BF16; AMX not exposed by its "
        "VM), 2 cores, 2026-11-26",
        "ONNX Runtime fp32 on bulk passes 1.52x sentence-transformers' default, 1.40x its PyTorch backend (its best "
        "fp32 backend here), 1.46x its OpenVINO fp32 and 1.70x its ONNX backend",
        "ONNX Runtime int8 2.69x sentence-transformers' default (2.95x on a corpus's bulk path), 1.75x its "
        "avx512_vnni int8 export and 1.77x our full precision", 1.52, 2.69),
    Measured(
        CpuKind.AMX, "6/167", "Intel Xeon, family 6 model 167 (AVX-512, VNNI, AMX), 2 cores, 2026-11-23",
        "1.30x sentence-transformers' default (PyTorch fp32 is about as fast as ONNX Runtime fp32 here); "
        "OpenVINO fp32 matched or beat it (0.79-1.27x ours, loaded runs)",
        "ONNX Runtime int8 2.18x sentence-transformers' default and 1.8-2.8x its ONNX int8 export", 1.30, 2.18),
    Measured(
        CpuKind.AMX, "6/207", "Intel Xeon, family 6 model 207 (AVX-512, VNNI, BF16, AMX), 2 cores, the project's "
        "pins, 2026-11-27 and 2026-11-29",
        "ONNX Runtime fp32 1.73x, 1.43x and 1.34x sentence-transformers' default in three runs of 2026-11-27 and "
        "1.74x and 1.62x in two of 2026-11-29 (bulk passes 1.92x, 1.62x, 1.46x, 1.66x, 1.51x); its best fp32 "
        "backend 1.42x, 1.34x, 1.25x, 1.45x and 1.54x",
        "ONNX Runtime int8 3.29x, 3.09x, 3.08x, 3.55x and 3.43x sentence-transformers' default, 1.24x-1.67x its "
        "OpenVINO backend (bf16 here), 2.05x-2.30x our full precision", 1.62, 3.29,
        bf16_x=3.62, bf16="OpenVINO bf16 on our own export 3.70x, 3.54x, 3.76x and 3.29x sentence-transformers' "
        "default (the median 3.62x), 1.54x-1.77x its OpenVINO backend (bf16 too), 0.96x-1.20x our int8 (0.76x-1.08x "
        "on bulk passes), Spearman 0.8204 against full precision's 0.8203 (int8: 0.8176)"),
)


def measured_on(cpu: Cpu) -> Measured | None:
    """The row of this very CPU model (same kind and family/model), which decides its fast path, or None."""
    return next((m for m in MEASURED if m.kind is cpu.kind and m.family_model == cpu.family_model), None)


def measured_like(cpu: Cpu) -> Measured | None:
    """The row of this CPU model, else the first of its kind (what ``model`` shows beside its paths), or None."""
    return measured_on(cpu) or next((m for m in MEASURED if m.kind is cpu.kind), None)


#: The flags that decide the kind (and that benchmarks record).
KERNEL_FLAGS = frozenset({"avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512_vnni", "avx_vnni",
                          "avx512_bf16", "amx_tile", "amx_int8", "amx_bf16"})


def kind_of(flags: frozenset[str]) -> CpuKind:
    """The kind a set of CPU flags makes."""
    if "amx_int8" in flags:
        return CpuKind.AMX
    if "avx512f" in flags:
        return CpuKind.AVX512_VNNI if "avx512_vnni" in flags else CpuKind.AVX512
    if "avx2" in flags:
        return CpuKind.AVX2
    return CpuKind.OTHER


def cores() -> int:
    """The cores this process may use (its affinity where the OS has one)."""
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))


def cpuinfo() -> dict[str, str]:
    """The first processor's fields of ``/proc/cpuinfo`` (``model name``, ``cpu family``, ``model``, ``flags``;
    empty where there is no such file)."""
    fields: dict[str, str] = {}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if not line.strip():
                if fields:
                    break
                continue
            key, _, value = line.partition(":")
            fields.setdefault(key.strip(), value.strip())
    except OSError:
        pass
    return fields


@lru_cache(maxsize=1)
def this_cpu() -> Cpu:
    """This machine's CPU, read once from ``/proc/cpuinfo`` (elsewhere: the platform's name, no flags)."""
    fields = cpuinfo()
    flags = frozenset((fields.get("flags") or fields.get("Features") or "").split())
    name = fields.get("model name") or platform.processor() or platform.machine()
    family_model = f"{fields.get('cpu family', '?')}/{fields.get('model', '?')}"
    return Cpu(name, family_model, flags & KERNEL_FLAGS, kind_of(flags))
