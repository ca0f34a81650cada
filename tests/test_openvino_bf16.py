"""The fast path's bf16 kernels: OpenVINO runs the full-precision export in bf16 on CPUs with AMX.

The backend is real (OpenVINO compiles the ONNX export of a tiny BERT and of MiniLM); on a CPU without native
bf16 OpenVINO computes the same graph in fp32, so these tests check what the backend returns (each batch its own
states, in order, near full precision's; attentions from PyTorch), and the choice rule apart from the machine.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from tests.conftest import load_tiny
from tools.core.errors import UserError
from tools.encoding.encode import encode
from tools.models.backends import openvino_bf16
from tools.models.backends.onnx_runtime import OnnxBackend, export_onnx
from tools.models.cpu import INT8_WORTH, Cpu, CpuKind, FastKernel, KernelChoice, choice_from
from tools.models.hub import quantize
from tools.models.kernels import fast_kernel

pytestmark = pytest.mark.long

BF16 = KernelChoice(FastKernel.BF16, "asked for in a test")


def _cosines(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.cosine_similarity(a.reshape(-1, a.shape[-1]), b.reshape(-1, b.shape[-1]), dim=1)


def test_bf16_batches_come_back_in_order_near_full_precision_and_attentions_stay_on_pytorch(tiny_folder):
    full = load_tiny(tiny_folder)
    full.state.backend = OnnxBackend.lazy(full, min_rows=1)
    fast = quantize(load_tiny(tiny_folder), BF16)
    assert fast.name == "tiny:int8" and fast.state.backend.name == "openvino-bf16"
    assert fast.state.backend.path.endswith("float.onnx")  # the full-precision export, compiled in bf16
    texts = [f"Sentence number {i} is about {'the river bank ' * (i % 4)}boats." for i in range(7)]
    feeds = []
    for start in range(0, len(texts), 2):  # four batches of different lengths, in flight together
        batch = fast.tokenizer(texts[start:start + 2], padding=True, return_tensors="pt")
        feeds.append({k: v.long() for k, v in batch.items()})
    ours = fast.state.backend.run_many(fast, feeds, attentions=False, threads=2)
    theirs = full.state.backend.run_many(full, feeds, attentions=False, threads=2)
    for (a, _), (b, _) in zip(ours, theirs, strict=True):
        assert a.shape == b.shape and a.shape[0] == 3  # every hidden state of its own batch
        assert _cosines(a, b).min() > 0.99  # bf16 rounds each value, it never mixes batches up
    last, _ = fast.state.backend.run(fast, feeds[1], attentions=False, threads=2, last_only=True)
    assert last.shape == (1, *ours[1][0].shape[1:]) and _cosines(last[0], ours[1][0][-1]).min() > 0.9999
    # a pass that needs attention weights runs the float PyTorch encoder: full precision's own numbers
    weighed = encode(fast, texts[:2], attentions=True)
    with torch.inference_mode():
        batch = fast.tokenizer(texts[:1], return_tensors="pt")
        exact = fast.encoder(**batch, output_hidden_states=True, output_attentions=True)
    assert weighed[0].attentions is not None
    torch.testing.assert_close(weighed[0].hidden_states, torch.stack(exact.hidden_states)[:, 0],
                               rtol=1e-5, atol=1e-5)


def test_minilm_on_bf16_scores_as_full_precision_does_and_model_says_what_runs(hub):
    import dataclasses

    from assistant.dispatch import execute
    from assistant.session import Session
    from tools.encoding.pooling import Pooling, sentence_vectors
    from tools.models.hub import ModelHub

    bf16 = ModelHub(dataclasses.replace(hub.settings, fast_kernel="bf16"))
    fast, full = bf16.get("minilm:int8"), hub.get("minilm")
    texts = [f"{s} ({i})" for i, s in enumerate(["A man plays a guitar.", "Someone is playing an instrument.",
                                                 "The bank raised its rates.", "Cats sleep a lot."] * 5)]
    a = sentence_vectors(fast, texts, Pooling.SBERT)[0].numpy()
    b = sentence_vectors(full, texts, Pooling.SBERT)[0].numpy()
    assert fast.state.backend.name == "openvino-bf16"
    assert np.abs(a - b).max() < 0.02  # STS-B test measured 2.0e-3 (int8: 4.8e-2)
    ca, cb = a @ a.T, b @ b.T  # the pairwise cosines a person reads
    assert np.abs(ca - cb).max() < 0.01
    reply = execute("model", Session(model="minilm:int8"), bf16, bf16.settings).result
    table = dict(zip(reply.table("model")["property"], reply.table("model")["value"]))
    assert table["bulk passes"] == "OpenVINO bf16" and table["attention passes"] == "PyTorch fp32"
    assert "The fast path runs bf16 (OpenVINO) on this CPU: ASSISTANT_FAST_KERNEL=bf16 chose it" in reply.text


def test_bf16_is_chosen_only_where_measured_faster_than_int8_and_openvino_is_installed(monkeypatch):
    where = "when measured"
    assert choice_from(1.5, 3.2, where, 3.6, bf16_ready=True).kernel is FastKernel.BF16
    assert "1.12x int8" in choice_from(1.5, 3.2, where, 3.6, bf16_ready=True).why
    missing = choice_from(1.5, 3.2, where, 3.6, bf16_ready=False)  # the row says bf16, the package is absent
    assert missing.kernel is FastKernel.INT8 and "requirements-openvino.txt" in missing.why
    assert choice_from(1.5, 3.2, where, 3.0, bf16_ready=True).kernel is FastKernel.INT8  # slower than int8
    # faster than int8 but not worth leaving full precision for: full precision, as without bf16
    assert choice_from(2.0, 1.9, where, 2.0 * INT8_WORTH * 0.99, bf16_ready=True).kernel is FastKernel.FP32
    amx = Cpu("Intel Xeon", "6/167", frozenset({"amx_int8", "amx_bf16", "avx512f"}), CpuKind.AMX)
    assert fast_kernel(None, "bf16", amx).kernel is FastKernel.BF16
    monkeypatch.setattr(openvino_bf16, "available", lambda: False)
    with pytest.raises(UserError, match="requirements-openvino.txt"):
        fast_kernel(None, "bf16", amx)


def test_an_unknown_cpu_with_amx_times_bf16_too_and_keeps_it(lm):
    unknown = Cpu(f"Test AMX CPU {time.time_ns()}", "0/1", frozenset({"amx_int8", "amx_bf16", "avx512f"}),
                  CpuKind.AMX)
    first = fast_kernel(lm, "auto", unknown)
    folder = Path(str(export_onnx(lm, int8=True))).parent
    records = [p for p in folder.glob("kernel-*.json") if json.loads(p.read_text())["cpu"] == unknown.name]
    assert len(records) == 1, records
    kept = json.loads(records[0].read_text())
    assert len(kept["fp32_s"]) == len(kept["int8_s"]) == len(kept["bf16_s"]) == 3
    speed = {k: 1 / float(np.median(kept[f"{k}_s"])) for k in ("fp32", "int8", "bf16")}
    if speed["bf16"] >= max(speed["int8"], INT8_WORTH * speed["fp32"]):
        assert first.kernel is FastKernel.BF16
    else:
        assert first.kernel is not FastKernel.BF16
    assert "timed at first use" in first.why
    # the next load reads the kept timing: make bf16 the fastest, and the choice follows it
    records[0].write_text(json.dumps({**kept, "fp32_s": [3.0] * 3, "int8_s": [1.5] * 3, "bf16_s": [1.0] * 3}))
    again = fast_kernel(lm, "auto", unknown)
    assert again.kernel is FastKernel.BF16 and "3.00x as fast as full precision and 1.50x int8" in again.why
    records[0].unlink()
