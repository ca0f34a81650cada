"""`model` says where each pass runs on this CPU and what was measured on a CPU of its kind, never a ratio from
another kind; the fast path takes int8 only where int8 pays on this CPU, from the committed measurement of this
CPU model or from one timing of a CPU model they do not cover (two AVX2 EPYCs differ)."""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path

import numpy as np
import pytest

from tools.core.errors import UserError
from tools.models.backends.openvino_bf16 import available
from tools.models.cpu import (
    INT8_WORTH,
    MEASURED,
    Cpu,
    CpuKind,
    FastKernel,
    kind_of,
    measured_like,
    measured_on,
    this_cpu,
)
from tools.models.hub import ModelHub
from tools.models.kernels import fast_kernel

pytestmark = pytest.mark.long


def _expected_kernel(cpu: Cpu) -> FastKernel | None:
    """The rule, written here apart from the code: bf16 where this CPU model measured OpenVINO bf16 at least as fast
    as int8 and INT8_WORTH x full precision's speed and openvino is installed; else int8 where it measured int8
    INT8_WORTH x full precision's speed (None: this model was not measured, so it is timed)."""
    row = next((m for m in MEASURED if (m.kind, m.family_model) == (cpu.kind, cpu.family_model)), None)
    if row is None:
        return None
    if row.bf16_x is not None and row.bf16_x >= max(row.int8_x, INT8_WORTH * row.full_x) and available():
        return FastKernel.BF16
    return FastKernel.INT8 if row.int8_x / row.full_x >= INT8_WORTH else FastKernel.FP32


def test_the_kind_of_a_cpu_follows_the_flags_its_kernels_use():
    assert kind_of(frozenset({"avx2", "fma"})) is CpuKind.AVX2
    assert kind_of(frozenset({"avx2", "avx512f", "avx512bw"})) is CpuKind.AVX512
    assert kind_of(frozenset({"avx2", "avx512f", "avx512_vnni"})) is CpuKind.AVX512_VNNI
    assert kind_of(frozenset({"avx2", "avx512f", "avx512_vnni", "amx_int8", "amx_tile"})) is CpuKind.AMX
    assert kind_of(frozenset({"sse4_2"})) is CpuKind.OTHER


def test_model_says_where_passes_run_and_what_this_kind_of_cpu_measured(run):
    cpu = this_cpu()
    full = run("model").result
    table = dict(zip(full.table("model")["property"], full.table("model")["value"]))
    # a chat's texts run on PyTorch until the first bulk batch has made the ONNX export; then everything does
    assert table["bulk passes"] == "ONNX Runtime fp32" and table["attention passes"] == "PyTorch fp32"
    assert table["chat passes"] in ("PyTorch fp32", "ONNX Runtime fp32")
    assert ("batches of 16 or more" in full.text) == (table["chat passes"] == "PyTorch fp32")
    assert cpu.name in table["CPU"] and cpu.family_model in table["CPU"]
    measured = measured_like(cpu)
    if measured is None:
        assert "no CPU of this kind has been measured" in full.text
    else:
        assert measured.cpu in full.text and measured.full in full.text
        assert all(row.cpu not in full.text for row in MEASURED if row.kind is not cpu.kind)
    fast = run("model minilm:int8").result
    kernel = _expected_kernel(cpu)
    if kernel is FastKernel.FP32:
        assert "The fast path runs full precision on this CPU" in fast.text
    elif kernel is FastKernel.BF16:
        assert "Hidden states run on OpenVINO bf16" in fast.text and "PyTorch fp32" in fast.text
        assert "The fast path runs bf16 (OpenVINO) on this CPU" in fast.text
    elif kernel is FastKernel.INT8:
        assert "ONNX Runtime int8" in fast.text and "PyTorch int8" in fast.text
        assert "The fast path runs int8 on this CPU" in fast.text
    else:
        assert "timed at first use" in fast.text
    if measured is not None and kernel is not None:  # the measurement of the kernels it runs
        said = {FastKernel.INT8: measured.fast, FastKernel.BF16: measured.bf16}.get(kernel, measured.full)
        assert said in fast.text


def test_int8_is_taken_only_where_the_measured_cpu_gained_enough_from_it():
    # the AVX2 EPYC measured int8 1.74x and full precision 1.67x sentence-transformers: int8 buys nothing there
    avx2 = Cpu("AMD EPYC 7B12", "23/49", frozenset({"avx2", "fma"}), CpuKind.AVX2)
    choice = fast_kernel(None, "auto", avx2)
    assert choice.kernel is _expected_kernel(avx2) is FastKernel.FP32
    assert "1.04x" in choice.why and "full precision" in choice.why
    # an EPYC of the same kind (AVX2 only) but another model measured int8 1.67x full precision: its own row
    zen4 = Cpu("AMD EPYC", "25/17", frozenset({"avx2", "fma"}), CpuKind.AVX2)
    assert fast_kernel(None, "auto", zen4).kernel is _expected_kernel(zen4) is FastKernel.INT8
    amx = Cpu("Intel Xeon", "6/167", frozenset({"amx_int8", "avx512f"}), CpuKind.AMX)
    assert fast_kernel(None, "auto", amx).kernel is _expected_kernel(amx) is FastKernel.INT8
    # one CPU model seen with and without AMX exposed (a lent machine and a VM): each kind keeps its own row
    amx_207 = Cpu("Intel Xeon", "6/207", frozenset({"amx_int8", "avx512f", "avx512_vnni"}), CpuKind.AMX)
    vnni_207 = Cpu("Intel Xeon", "6/207", frozenset({"avx512f", "avx512_vnni"}), CpuKind.AVX512_VNNI)
    assert measured_on(amx_207) is not measured_on(vnni_207) and "AMX" in measured_on(amx_207).cpu
    assert "(6/207)" in fast_kernel(None, "auto", amx_207).why
    # the setting overrides the table either way, and says so
    assert fast_kernel(None, "int8", avx2).kernel is FastKernel.INT8
    assert "ASSISTANT_FAST_KERNEL=fp32" in fast_kernel(None, "fp32", amx).why
    with pytest.raises(UserError, match="use auto, int8, bf16 or fp32"):
        fast_kernel(None, "bfloat", amx)


def test_a_full_precision_fast_path_gives_full_precision_vectors_and_model_says_why(hub):
    from assistant.dispatch import execute
    from assistant.session import Session
    from tools.encoding.pooling import Pooling, sentence_vectors

    fp32 = ModelHub(dataclasses.replace(hub.settings, fast_kernel="fp32"))
    fast, full = fp32.get("minilm:int8"), hub.get("minilm")
    texts = [f"{s} ({i})" for i, s in enumerate(["A man plays a guitar.", "The bank raised its rates.",
                                                 "Cats sleep a lot."] * 6)]  # 18 texts: a bulk batch
    a = sentence_vectors(fast, texts, Pooling.SBERT)[0].numpy()
    b = sentence_vectors(full, texts, Pooling.SBERT)[0].numpy()
    assert fast.name == "minilm:int8" and np.abs(a - b).max() < 1e-5
    reply = execute("model", Session(model="minilm:int8"), fp32, fp32.settings).result
    table = dict(zip(reply.table("model")["property"], reply.table("model")["value"]))
    assert table["attention passes"] == "PyTorch fp32" and "int8" not in table["bulk passes"]
    assert table["fast path's kernels"].startswith("fp32: ASSISTANT_FAST_KERNEL=fp32")
    assert "The fast path runs full precision on this CPU" in reply.text


def test_a_cpu_the_table_does_not_know_is_timed_once_and_its_choice_kept(lm):
    from tools.models.backends.onnx_runtime import export_onnx

    # a CPU model the table does not hold, of a kind it does (the flags alone do not decide int8)
    unknown = Cpu(f"Test CPU {time.time_ns()}", "0/0", frozenset({"avx2", "fma"}), CpuKind.AVX2)
    assert measured_on(unknown) is None and measured_like(unknown) is not None
    first = fast_kernel(lm, "auto", unknown)
    folder = Path(str(export_onnx(lm, int8=True))).parent
    records = [p for p in folder.glob("kernel-*.json") if json.loads(p.read_text())["cpu"] == unknown.name]
    assert len(records) == 1, records
    kept = json.loads(records[0].read_text())
    assert len(kept["fp32_s"]) == len(kept["int8_s"]) == 3 and kept["texts"] >= 32
    gain = float(np.median(kept["fp32_s"]) / np.median(kept["int8_s"]))
    assert first.kernel is (FastKernel.INT8 if gain >= INT8_WORTH else FastKernel.FP32)
    assert "timed at first use" in first.why and f"{gain:.2f}x" in first.why
    # the next load reads the kept timing instead of timing again: change it, and the choice follows it
    records[0].write_text(json.dumps({**kept, "fp32_s": [1.0] * 3, "int8_s": [1.0] * 3}))
    again = fast_kernel(lm, "auto", unknown)
    assert again.kernel is FastKernel.FP32 and "1.00x" in again.why
    records[0].unlink()
