"""Which kernels the fast path (a ``:int8`` model) runs on this CPU.

In this order: the ``fast_kernel`` setting when it names one (``int8``, ``bf16`` or ``fp32``); the committed
measurement of this CPU model (:data:`tools.models.cpu.MEASURED`); else this CPU is timed once, at the
fast model's first load, on a fixed batch (full precision against int8, and OpenVINO bf16 where the CPU has
AMX and ``openvino`` is installed; interleaved, after the exports exist), and the result is kept beside the
exports, so every later load on this CPU makes the same choice without timing again. A chat's passes never
time anything: the choice is made when the model loads.
"""

from __future__ import annotations

import hashlib
import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

from tools.core.errors import UserError
from tools.models.cpu import Cpu, FastKernel, KernelChoice, choice_from, measured_on, this_cpu

#: ``fast_kernel``'s value that lets this module choose.
AUTO = "auto"
#: The timing batch: short and long sentences, as a corpus or benchmark batch has them.
CALIBRATION = tuple(
    f"{subject} {verb} {thing} {tail}"
    for subject in ("The student", "A small dog", "Our team", "The old bank by the river")
    for verb in ("reads", "found", "carried", "wrote about")
    for thing in ("a long report", "the map", "two letters")
    for tail in (".", "before the meeting started, and then everyone went home for the day.")
)
#: Interleaved timings of each path (the median of these decides).
REPEATS = 3


def fast_kernel(lm: Any, setting: str = AUTO, cpu: Cpu | None = None) -> KernelChoice:
    """The fast path's kernels for ``lm`` on ``cpu`` (default: this machine's).

    Args:
        lm: the full-precision model about to become its fast path (its exports are made here if needed).
        setting: ``auto``, ``int8``, ``bf16`` or ``fp32`` (``ASSISTANT_FAST_KERNEL``).
        cpu: the CPU to choose for.

    Raises:
        UserError: the setting names no kernel, or bf16 without the ``openvino`` package.
    """
    from tools.models.backends.openvino_bf16 import available

    value = setting.strip().lower()
    if value != AUTO:
        try:
            kernel = FastKernel(value)
        except ValueError:
            raise UserError(f"ASSISTANT_FAST_KERNEL is {setting!r}; use auto, int8, bf16 or fp32.") from None
        if kernel is FastKernel.BF16 and not available():
            raise UserError("ASSISTANT_FAST_KERNEL=bf16 runs on OpenVINO, which is not installed: "
                            "`pip install -r requirements-openvino.txt`, or use int8 or fp32.")
        return KernelChoice(kernel, f"ASSISTANT_FAST_KERNEL={value} chose it")
    cpu = cpu or this_cpu()
    measured = measured_on(cpu)
    if measured is not None:
        return measured.choice(bf16_ready=available())
    return timed(lm, cpu)


def timed(lm: Any, cpu: Cpu) -> KernelChoice:
    """This CPU timed once for ``lm`` (full precision against int8, and bf16 where the CPU has AMX and OpenVINO is
    installed, on :data:`CALIBRATION`), or its kept result."""
    from tools.models.backends.onnx_runtime import OnnxBackend, export_onnx
    from tools.models.backends.openvino_bf16 import OpenVinoBackend, available

    full, int8 = export_onnx(lm, int8=False), export_onnx(lm, int8=True)
    if full is None or int8 is None:
        return KernelChoice(FastKernel.INT8, "no ONNX export could be made, so nothing was timed")
    record = Path(int8).parent / f"kernel-{_cpu_key(cpu)}.json"
    where = f"when this CPU ({cpu.name}, {cpu.kind.value}) was timed at first use"
    bf16 = "amx_bf16" in cpu.flags and available()
    if record.is_file():
        kept = json.loads(record.read_text())
        if not bf16 or "bf16_s" in kept:
            return _chosen(kept, where, bf16)
    feed = dict(lm.tokenizer(list(CALIBRATION), padding=True, truncation=True, return_tensors="pt"))
    runs: dict[str, Any] = {"fp32": OnnxBackend(full, "onnx"), "int8": OnnxBackend(int8, "onnx-int8")}
    if bf16:
        runs["bf16"] = OpenVinoBackend(full)
    seconds: dict[str, list[float]] = {name: [] for name in runs}
    for backend in runs.values():  # one untimed pass each: sessions built, memory touched
        backend.run(lm, feed, False, 1, last_only=True)
    for _ in range(REPEATS):
        for name, backend in runs.items():
            start = time.perf_counter()
            backend.run(lm, feed, False, 1, last_only=True)
            seconds[name].append(time.perf_counter() - start)
    partial = record.with_suffix(f".{os.getpid()}.tmp")
    kept = {"cpu": cpu.name, "family_model": cpu.family_model, "flags": sorted(cpu.flags),
            "texts": len(CALIBRATION), **{f"{name}_s": times for name, times in seconds.items()}}
    partial.write_text(json.dumps(kept))
    os.replace(partial, record)  # atomic: a process beside this one reads all of it or none
    return _chosen(kept, where, bf16)


def _chosen(kept: dict[str, Any], where: str, bf16: bool) -> KernelChoice:
    """The choice a kept timing makes (speeds as the inverse of the median seconds)."""
    speed = {name: 1 / statistics.median(kept[f"{name}_s"]) for name in ("fp32", "int8", "bf16")
             if f"{name}_s" in kept}
    return choice_from(speed["fp32"], speed["int8"], where, speed.get("bf16"), bf16)


def _cpu_key(cpu: Cpu) -> str:
    """A short name for one CPU: its model name, family/model and flags."""
    text = "|".join([cpu.name, cpu.family_model, *sorted(cpu.flags)])
    return hashlib.sha256(text.encode()).hexdigest()[:12]
