"""Issue 16: hidden states come from a typed backend chosen at load time, and models are found by key.

The default model runs PyTorch (``torch``) for a chat's few texts and switches to a full-precision
ONNX export (``onnx``) at its first bulk batch; ``:int8`` runs ONNX Runtime for hidden
states (``onnx-int8``) and falls back to the PyTorch int8 encoder (``torch-int8``)
where no export can be made. The GPU boundary finds a model by its registry key,
also in a process that never loaded it.
"""

from __future__ import annotations

import logging
import os
import tempfile
import time
from pathlib import Path

import pytest
import torch

from tools.encoding.encode import encode
from tools.models.backends import onnx_runtime as onnx_int8
from tools.models.backends.onnx_runtime import OnnxBackend
from tools.models.hub import model_by_key, quantize

TEXTS = ["The cat sat on the mat.", "We sat on the river bank and watched the boats go by."]


def test_default_model_runs_torch_and_gives_transformers_own_states(lm):
    assert lm.state.backend.name == "onnx" and lm.state.backend.fallback.name == "torch"
    ours = encode(lm, TEXTS[:1])[0]
    batch = lm.tokenizer(TEXTS[:1], return_tensors="pt")
    with torch.inference_mode():
        theirs = lm.encoder(**batch, output_hidden_states=True).hidden_states
    torch.testing.assert_close(ours.hidden_states, torch.stack(theirs)[:, 0], rtol=1e-5, atol=1e-5)


def test_int8_without_an_onnx_export_falls_back_to_torch_int8(tiny, monkeypatch):
    monkeypatch.setattr(onnx_int8, "export_int8", lambda lm: None)
    plain = encode(tiny, TEXTS)  # before quantisation, which changes the encoder in place
    fast = quantize(tiny)
    assert fast.name == "tiny:int8" and fast.state.backend.name == "torch-int8"
    quick = encode(fast, TEXTS, attentions=True)
    for a, b in zip(plain, quick):
        assert b.hidden_states.shape == a.hidden_states.shape and b.attentions is not None
        cos = torch.nn.functional.cosine_similarity(a.hidden_states[-1].mean(0), b.hidden_states[-1].mean(0), dim=0)
        assert cos.item() > 0.9  # int8 moves vectors a little, never far


def test_onnx_export_leaves_the_root_logger_alone(tiny):
    root = logging.getLogger()
    level, handlers = root.level, list(root.handlers)
    fast = quantize(tiny)
    assert fast.state.backend.name == "onnx-int8"
    assert root.level == level and root.handlers == handlers
    states = encode(fast, TEXTS)  # hidden states from ONNX Runtime
    assert states[1].hidden_states.shape == (3, len(states[1].tokens), 32)


def test_a_model_is_found_by_its_key_and_loaded_by_name_where_it_never_was(lm):
    assert model_by_key(lm.key) is lm
    elsewhere = model_by_key("minilm@cpu#999999")  # as in a ZeroGPU worker forked before the model loaded
    assert elsewhere.name == "minilm" and elsewhere.device.type == "cpu"


def test_full_precision_switches_to_onnx_at_its_first_bulk_batch_with_the_same_states(tiny_folder, tmp_path):
    import shutil

    from tests.conftest import load_tiny

    # a copy of its own: no export kept by another test of this worker for the same folder
    tiny = load_tiny(shutil.copytree(tiny_folder, tmp_path / "tiny"))
    torch_states = encode(tiny, TEXTS)
    backend = OnnxBackend.lazy(tiny, min_rows=4)
    tiny.state.backend = backend
    tiny.state.encoding_cache.clear()
    few = encode(tiny, TEXTS)  # two inputs: a chat's pass stays on PyTorch, nothing is exported
    assert backend.path is None
    many = [f"{TEXTS[i % 2]} Number {i}." for i in range(8)] + TEXTS
    bulk = encode(tiny, many)  # eight inputs in one batch: exported, then run in ONNX Runtime
    assert backend.path is not None and backend.path.endswith("float.onnx")
    assert OnnxBackend.lazy(tiny, min_rows=4).path == backend.path  # a later process uses the kept export at once
    tiny.state.encoding_cache.clear()
    again = encode(tiny, TEXTS)  # and every pass after it
    for ours, theirs in zip([*few, *bulk[-2:], *again], [*torch_states, *torch_states, *torch_states]):
        torch.testing.assert_close(ours.hidden_states, theirs.hidden_states, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("kind", ["torch", "onnx", "onnx-int8"])
def test_a_pass_for_sentence_vectors_returns_the_last_layer_alone_and_the_same_numbers(tiny, kind):
    """``last_only`` (every pooling of the last layer) asks each backend for the last hidden state alone:
    one layer back instead of L+1, equal to the last of a full pass in the same backend."""
    if kind == "onnx-int8":
        tiny = quantize(tiny)
    elif kind == "onnx":
        tiny.state.backend = OnnxBackend.lazy(tiny, min_rows=1)
    backend = tiny.state.backend
    assert backend.name == kind
    batch = tiny.tokenizer(TEXTS, padding=True, return_tensors="pt")
    feed = {k: v.long() for k, v in batch.items()}
    every, _ = backend.run(tiny, feed, attentions=False, threads=1)
    last, _ = backend.run(tiny, feed, attentions=False, threads=1, last_only=True)
    assert every.shape[0] == 3 and last.shape == (1, *every.shape[1:])
    torch.testing.assert_close(last[0], every[-1], rtol=1e-6, atol=1e-6)
    tiny.state.encoding_cache.clear()
    pooled = encode(tiny, TEXTS, last_only=True)
    assert all(e.hidden_states.shape[0] == 1 for e in pooled)


@pytest.mark.parametrize("kind", ["onnx", "onnx-int8"])
def test_several_batches_run_on_one_session_per_core_and_give_each_text_its_own_states(tiny, kind, monkeypatch):
    """A corpus chunk's batches run side by side on one-thread sessions (one per core): every text still gets
    the states of its own batch, the same as one batch after another on one session over every core."""
    monkeypatch.setattr(onnx_int8, "max_threads", lambda: 4)  # four workers, even on a smaller runner
    tiny = quantize(tiny) if kind == "onnx-int8" else tiny
    if kind == "onnx":
        tiny.state.backend = OnnxBackend.lazy(tiny, min_rows=1)
    backend = tiny.state.backend
    texts = [f"Sentence number {i} is about {'the river bank ' * (i % 4)}boats." for i in range(7)]
    feeds = []
    for start in range(0, len(texts), 2):  # four batches of different lengths
        batch = tiny.tokenizer(texts[start:start + 2], padding=True, return_tensors="pt")
        feeds.append({k: v.long() for k, v in batch.items()})
    side_by_side = backend.run_many(tiny, feeds, attentions=False, threads=4)
    one_by_one = [backend.run(tiny, feed, attentions=False, threads=4) for feed in feeds]
    made = {(1, 0), (1, 1), (1, 2), (1, 3), (4, 0)}  # one one-thread session per worker, one over every core
    assert set(backend._sessions) == made
    backend.run_many(tiny, feeds[:2], attentions=False, threads=4)  # a short last group makes no new sessions
    assert set(backend._sessions) == made
    for (ours, _), (theirs, _) in zip(side_by_side, one_by_one, strict=True):
        assert ours.shape == theirs.shape
        torch.testing.assert_close(ours, theirs, rtol=1e-5, atol=1e-5)


def test_kept_exports_stay_bounded_and_none_in_use_is_removed(tiny, tmp_path, monkeypatch):
    """Each model location, weights' date and library version has its own export in the temporary folder; a new
    one removes the least recently used beyond ``KEPT_EXPORTS`` (a machine that served many clones held 6 GB of
    them), never one a process used within the hour, and a process whose export went before it opened it makes
    it again instead of failing."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    root = tmp_path / "assistant-onnx"
    now = time.time()

    def kept_folder(name: str, age_s: float) -> Path:
        folder = root / name
        folder.mkdir(parents=True)
        (folder / "float.onnx").write_bytes(b"an earlier export")
        os.utime(folder, (now - age_s, now - age_s))
        return folder

    stale = [kept_folder(f"minilm-stale{i}", 86400 * (2 + i)) for i in range(3)]  # earlier clones', unused for days
    in_use = [kept_folder(f"minilm-inuse{i}", 600 + i) for i in range(onnx_int8.KEPT_EXPORTS)]  # minutes ago
    made = Path(str(onnx_int8.export_onnx(tiny, int8=False)))
    assert made.is_file() and made.parent.parent == root
    assert set(root.iterdir()) == {made.parent, *in_use}  # more than KEPT_EXPORTS, but none of those idle
    for folder in stale:
        assert not folder.exists()
    os.utime(made.parent, (now - 86400, now - 86400))
    assert onnx_int8.kept_export(tiny, int8=False) == str(made)  # a later process takes it: dated now
    assert made.parent.stat().st_mtime > now - 60
    backend = OnnxBackend.lazy(tiny, min_rows=1)
    made.unlink()  # removed (by another process's pruning, or the system's) before this one opened it
    tiny.state.backend = backend
    tiny.state.encoding_cache.clear()
    states = encode(tiny, TEXTS)
    assert backend.path == str(made) and made.is_file() and states[0].hidden_states.shape[0] == 3
