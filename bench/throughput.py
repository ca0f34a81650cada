"""Encoding throughput: this project's batch encoder against sentence-transformers' ``encode``.

The peer is ``SentenceTransformer(<the same model folder>).encode(sentences)`` with
its defaults (batch size 32, PyTorch's default thread count), measured in the
same process with the repeats interleaved. Workload: the 2,758 sentences of the
STS-B test split (columns 5 and 6). Ours goes through ``tools.encoding``
(deduplicated, length-sorted token-capped batches, ``sdpa``, thread count by
size and machine load), with the encoding cache cleared before each timed run
(cold); the warm-cache rerun and the int8 fast path (``minilm:int8``: an int8
ONNX export run by ONNX Runtime, see tools.models.backends) are reported beside
it. Vectors are compared after sbert pooling (max abs difference
must be <= 1e-5), and each variant's STS-B Spearman is computed from them.

    .venv/bin/python bench/throughput.py [--repeats 3] [--limit N] [--skip-fast]
"""

from __future__ import annotations

import argparse

import numpy as np
from common import interleaved, machine, median, quiet_libraries, stsb_pairs, write  # noqa: I001 - bench scripts import their sibling after sys.path is set


def spearman(left: np.ndarray, right: np.ndarray, gold: list[float]) -> float:
    from scipy.stats import spearmanr

    a = left / np.linalg.norm(left, axis=1, keepdims=True)
    b = right / np.linalg.norm(right, axis=1, keepdims=True)
    return float(spearmanr((a * b).sum(axis=1), gold).statistic)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--limit", type=int, default=0, help="use the first N pairs only (a quick look)")
    parser.add_argument("--skip-fast", action="store_true", help="leave out the int8 fast path")
    args = parser.parse_args(argv)
    quiet_libraries()

    import torch
    from sentence_transformers import SentenceTransformer

    from tools.core.config import Settings
    from tools.encoding.cache import cache_stats, clear_cache
    from tools.encoding.pooling import Pooling, sentence_vectors
    from tools.models.hub import ModelHub

    left, right, gold = stsb_pairs()
    if args.limit:
        left, right, gold = left[: args.limit], right[: args.limit], gold[: args.limit]
    sentences = left + right
    n = len(sentences)
    hub = ModelHub(Settings(cache_mb=2048, cache_size=100_000))  # the warm rerun keeps every sentence
    lm = hub.get("minilm")
    fast = None if args.skip_fast else hub.get("minilm:int8")
    st = SentenceTransformer(lm.source.location, device="cpu")
    default_threads = torch.get_num_threads()

    out: dict[str, np.ndarray] = {}

    def ours(model):
        def go():
            vectors, _ = sentence_vectors(model, sentences, Pooling.SBERT)
            out[model.name] = vectors.numpy()
        return go

    def peer():
        torch.set_num_threads(default_threads)
        out["sentence-transformers"] = st.encode(sentences, convert_to_numpy=True)

    def peer_one_thread():  # a second reference: the peer with the thread count that wins on a busy machine
        torch.set_num_threads(1)
        try:
            st.encode(sentences, convert_to_numpy=True)
        finally:
            torch.set_num_threads(default_threads)

    runs = {"sentence-transformers": peer, "sentence-transformers 1 thread": peer_one_thread, "ours": ours(lm)}
    models = {"ours": lm}
    if fast is not None:
        if fast.state.backend.name != "onnx-int8":
            print("note: no ONNX export (is the `onnx` package installed?); int8 runs on PyTorch")
        runs["ours int8"] = ours(fast)
        models["ours int8"] = fast

    def cold(name: str) -> None:  # each of our runs starts from an empty cache
        if name in models:
            clear_cache(models[name])

    peer()  # warm-up: first-call allocations, lazy imports and ONNX sessions are not throughput
    ours(lm)()
    if fast is not None:
        ours(fast)()
    times = interleaved(runs, args.repeats, before=cold)
    stats_cold = cache_stats(lm)
    warm = interleaved({"ours warm cache": ours(lm)}, args.repeats)  # the cache holds every sentence now
    stats_warm = cache_stats(lm)
    times.update(warm)

    st_vecs, our_vecs = out["sentence-transformers"], out[lm.name]
    max_diff = float(np.abs(st_vecs - our_vecs).max())
    half = len(left)
    scores = {"sentence-transformers": spearman(st_vecs[:half], st_vecs[half:], gold),
              "ours": spearman(our_vecs[:half], our_vecs[half:], gold)}
    if fast is not None:
        f = out[fast.name]
        scores["ours int8"] = spearman(f[:half], f[half:], gold)

    peer_s = median(times["sentence-transformers"])
    rows = []
    for name, values in times.items():
        m = median(values)
        rows.append({"run": name, "median_s": round(m, 3), "sentences_per_s": round(n / m, 1),
                     "vs_sentence_transformers": round(peer_s / m, 2), "runs_s": [round(v, 3) for v in values],
                     "spearman": round(scores.get(name.replace(" warm cache", "").replace(" 1 thread", ""),
                                               float("nan")), 5)})
    payload = {
        "benchmark": "throughput", "peer": "sentence-transformers encode (defaults: batch 32, "
        f"{default_threads} threads)", "machine": machine(), "sentences": n,
        "distinct_sentences": len(set(sentences)), "repeats": args.repeats, "rows": rows,
        "max_abs_diff_vs_peer": max_diff, "same_vectors_1e-5": max_diff <= 1e-5,
        "backend": lm.state.backend.name, "int8_backend": fast.state.backend.name if fast is not None else None,
        "int8_engine": (None if fast is None else
                        "onnxruntime" if fast.state.backend.name == "onnx-int8" else "torch dynamic quantisation"),
        "spearman_drop_int8": (round(scores["ours"] - scores["ours int8"], 5) if "ours int8" in scores else None),
        "cache_cold_runs": stats_cold.describe(), "cache_after_warm_runs": stats_warm.describe(),
    }
    path = write("throughput", payload)
    print(f"STS-B test, {n:,} sentences ({payload['distinct_sentences']:,} distinct), "
          f"medians of {args.repeats} interleaved runs, load {payload['machine']['load_avg']}")
    for r in rows:
        print(f"  {r['run']:<30} {r['median_s']:>8.2f} s  {r['sentences_per_s']:>8.1f} sent/s  "
                f"{r['vs_sentence_transformers']:>5.2f}x sentence-transformers  Spearman {r['spearman']:.4f}")
    if fast is not None:
        print(f"  int8 fast path engine: {payload['int8_engine']}")
    print(f"  same vectors as sentence-transformers: max |diff| {max_diff:.2e} (<= 1e-5: {max_diff <= 1e-5})")
    if payload["spearman_drop_int8"] is not None:
        print(f"  int8 Spearman drop vs full precision: {payload['spearman_drop_int8']:+.4f} (target <= 0.005)")
    print(f"  cache: {stats_warm.describe()}")
    print(f"wrote {path.relative_to(path.parents[2])}")
    return 0 if max_diff <= 1e-5 else 1


if __name__ == "__main__":
    raise SystemExit(main())
