"""GPU throughput: the STS-B test sentences on a CUDA GPU in float32, bfloat16 and float16,
against sentence-transformers' ``encode`` on the same GPU, with the device name recorded.

Two of ours per dtype: ``sentence_vectors`` (what commands use: per-text states, kept in the encoding
cache) and ``bulk_vectors`` (what a corpus uses: each batch pooled where it ran, nothing else kept).
``--corpus N`` times the bulk path against the peer on N of the corpus bench's texts too.
Skips cleanly (exit 0, a JSON that says why) on a machine without CUDA.

    .venv/bin/python bench/gpu.py [--repeats 5] [--corpus 100000]
"""

from __future__ import annotations

import argparse

import numpy as np
from common import interleaved, machine, median, quiet_libraries, stsb_pairs, write  # noqa: I001 - bench scripts import their sibling after sys.path is set


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--corpus", type=int, default=0, help="also N corpus-bench texts, bulk path against the peer")
    args = parser.parse_args(argv)
    quiet_libraries()
    import torch

    if not torch.cuda.is_available():
        path = write("gpu", {"benchmark": "gpu", "skipped": "no CUDA GPU on this machine", "machine": machine()})
        print(f"skipped: no CUDA GPU here (torch {torch.__version__}); wrote {path.name}")
        return 0

    from scipy.stats import spearmanr
    from sentence_transformers import SentenceTransformer

    from tools.core.config import Settings
    from tools.encoding.cache import clear_cache
    from tools.encoding.pooling import Pooling, bulk_vectors, sentence_vectors
    from tools.models.hub import ModelHub

    left, right, gold = stsb_pairs()
    sentences = left + right
    hub = ModelHub(Settings(device="cuda", cache_mb=0))  # no cache: every run does the work
    lm = hub.get("minilm", device="cuda")
    st = SentenceTransformer(lm.source.location, device="cuda")
    out: dict[str, np.ndarray] = {}

    def ours(dtype):
        def go():
            lm.encoder.to(dtype)
            clear_cache(lm)
            vectors, _ = sentence_vectors(lm, sentences, Pooling.SBERT)
            torch.cuda.synchronize()
            out[f"ours {dtype}"] = vectors.numpy()
        return go

    def bulk(dtype):
        def go():
            lm.encoder.to(dtype)
            out[f"ours bulk {dtype}"] = bulk_vectors(lm, sentences, Pooling.SBERT)
            torch.cuda.synchronize()
        return go

    def peer(dtype):
        def go():
            st.to(dtype)
            out[f"sentence-transformers {dtype}"] = st.encode(sentences, convert_to_numpy=True).astype(np.float32)
            torch.cuda.synchronize()
        return go

    dtypes = [torch.float32, torch.bfloat16, torch.float16]
    runs = {}
    for dt in dtypes:
        runs[f"sentence-transformers {dt}"] = peer(dt)
        runs[f"ours {dt}"] = ours(dt)
        runs[f"ours bulk {dt}"] = bulk(dt)
    for fn in runs.values():  # warm-up: CUDA context, kernels
        fn()
    times = interleaved(runs, args.repeats)
    lm.encoder.to(torch.float32)
    half = len(left)

    def score(v):
        a, b = v[:half], v[half:]
        cos = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
        return float(spearmanr(cos, gold).statistic)

    reference = out["sentence-transformers torch.float32"]
    rows = []
    for dt in dtypes:
        peer_s = median(times[f"sentence-transformers {dt}"])
        for name in (f"sentence-transformers {dt}", f"ours {dt}", f"ours bulk {dt}"):
            m = median(times[name])
            rows.append({"run": name, "median_s": round(m, 3), "sentences_per_s": round(len(sentences) / m, 1),
                         "vs_peer_same_dtype": round(peer_s / m, 2),
                         "max_abs_diff_vs_fp32_peer": float(np.abs(out[name] - reference).max()),
                         "spearman": round(score(out[name]), 5)})
    if args.corpus:
        rows += corpus_rows(lm, st, args.corpus, args.repeats)
    payload = {"benchmark": "gpu", "device": torch.cuda.get_device_name(0), "peer": "sentence-transformers "
               "encode on the same GPU and dtype", "machine": machine(), "sentences": len(sentences),
               "repeats": args.repeats, "rows": rows}
    path = write("gpu", payload)
    print(f"{payload['device']}: STS-B test, {len(sentences):,} sentences, medians of {args.repeats}")
    for r in rows:
        print(f"  {r['run']:<36} {r['median_s']:>7.3f} s {r['sentences_per_s']:>9.1f} sent/s "
              f"{r['vs_peer_same_dtype']:>5.2f}x peer  Spearman {r['spearman']:.4f}  "
              f"max|diff| vs fp32 {r['max_abs_diff_vs_fp32_peer']:.1e}")
    print(f"wrote {path.relative_to(path.parents[2])}")
    return 0


def corpus_rows(lm, st, n: int, repeats: int) -> list[dict]:
    """The bulk path against the peer on ``n`` corpus-bench texts, float32 and float16, repeats interleaved."""
    import torch
    from corpus import make_texts

    from tools.encoding.pooling import Pooling, bulk_vectors

    texts = make_texts(n)[0]
    runs, out = {}, {}
    for dt in (torch.float32, torch.float16):
        def ours(dt=dt):
            lm.encoder.to(dt)
            out[f"ours bulk {dt}"] = bulk_vectors(lm, texts, Pooling.SBERT)
            torch.cuda.synchronize()

        def peer(dt=dt):
            st.to(dt)
            out[f"sentence-transformers {dt}"] = st.encode(texts, convert_to_numpy=True).astype(np.float32)
            torch.cuda.synchronize()
        def wide(dt=dt):
            st.to(dt)
            out[f"sentence-transformers batch 256 {dt}"] = st.encode(texts, batch_size=256,
                                                                     convert_to_numpy=True).astype(np.float32)
            torch.cuda.synchronize()
        runs[f"sentence-transformers {dt}"], runs[f"ours bulk {dt}"] = peer, ours
        runs[f"sentence-transformers batch 256 {dt}"] = wide
    times = interleaved(runs, repeats)
    lm.encoder.to(torch.float32)
    rows = []
    for dt in (torch.float32, torch.float16):
        peer_s = median(times[f"sentence-transformers {dt}"])
        for name in (f"sentence-transformers {dt}", f"sentence-transformers batch 256 {dt}", f"ours bulk {dt}"):
            m = median(times[name])
            rows.append({"run": f"{name}, {n:,} corpus texts", "median_s": round(m, 3),
                         "sentences_per_s": round(n / m, 1), "vs_peer_same_dtype": round(peer_s / m, 2),
                         "max_abs_diff_vs_fp32_peer": float(np.abs(out[name] - out[
                             "sentence-transformers torch.float32"]).max()), "spearman": float("nan")})
    return rows


if __name__ == "__main__":
    raise SystemExit(main())
