"""Corpus encoding and search against sentence-transformers, on the same texts and the same vectors.

    python bench/corpus.py --texts 20000 --repeats 2 --search-rows 100000

1. Encoding: N distinct texts, made from STS-B's sentences (every split, deduplicated; beyond
   those, numbered variations "<sentence> (variant k)"), through ``tools.corpus`` (chunked,
   persisted, the index built; a fresh store and an empty encoding cache each repeat) against
   ``SentenceTransformer(model_path).encode(texts)``, repeats interleaved. Vectors are compared, and the memory
   each encode held at most (this process's resident size sampled every 20 ms, over its size when the encode
   began) is set against the vectors' own size (N x hidden x 4 bytes).
2. Search at ``--search-rows`` rows: the encoded vectors, and beyond them copies with small
   Gaussian noise (1% of a unit vector's length per dimension), as one corpus; STS-B test
   sentences as queries, one at a time: our index (exact below 200k rows) against
   ``sentence_transformers.util.semantic_search`` on the same vectors; p50/p95 latency, and
   recall@10 of ours and of an HNSW graph over the same rows against the peer's top 10.

The machine is shared (2 cores): numbers are rough; ``lscpu`` is printed beside them.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.common import STSB_TEST, RssPeak, interleaved, machine, median, percentile, quiet_libraries, write  # noqa: E402


def lscpu() -> dict[str, str]:
    out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    found = dict(re.findall(r"^(Model name|Flags):\s*(.*)$", out, flags=re.M))
    return {"model name": found.get("Model name", "?"), "flags": found.get("Flags", "?")}


def make_texts(n: int) -> tuple[list[str], dict[str, float]]:
    """``n`` distinct texts from STS-B sentences and numbered variations; how many were distinct at the source."""
    raw = []
    for split in ("sts-train.tsv", "sts-dev.tsv", "sts-test.tsv"):
        for line in (STSB_TEST.parent / split).read_text(encoding="utf-8").splitlines():
            cols = line.split("\t")
            if len(cols) >= 7:
                raw += [cols[5].strip(), cols[6].strip()]
    base = list(dict.fromkeys(t for t in raw if t))
    texts = [base[i % len(base)] if i < len(base) else f"{base[i % len(base)]} (variant {i // len(base)})"
             for i in range(n)]
    return texts, {"stsb_sentences": len(raw), "stsb_distinct": len(base),
                   "stsb_duplicate_rate": 1 - len(base) / len(raw), "texts_duplicate_rate": 1 - len(set(texts)) / n}


#: A restarted server's first touch of an encoded corpus: open its store, map its vectors and index, search once.
REOPEN = """
import sys, time
import numpy as np
from tools.corpus.store import CorpusStore
start = time.perf_counter()
corpus = CorpusStore(sys.argv[1]).open(sys.argv[2])
unit = np.asarray(corpus.unit_vectors())
corpus.index().search(unit[:1], 10)
print(time.perf_counter() - start)
"""


def restart_seconds(root: Path, name: str) -> float:
    """Seconds a fresh process takes to open the corpus and answer one search (imports not counted)."""
    out = subprocess.run([sys.executable, "-c", REOPEN, str(root), name], capture_output=True, text=True,
                         cwd=Path(__file__).resolve().parents[1], check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--texts", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--search-rows", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--model", default="minilm",
                        help="the model ours encodes with (minilm:int8: the fast path; the peer stays full precision)")
    args = parser.parse_args(argv)
    quiet_libraries()
    import torch
    from sentence_transformers import SentenceTransformer, util

    from tools.core.config import Settings
    from tools.corpus.encode import load_corpus
    from tools.corpus.index import VectorIndex, build_hnsw, hnsw_search, recall_at_k
    from tools.corpus.store import CorpusStore
    from tools.encoding.cache import clear_cache
    from tools.models.hub import ModelHub

    cpu = lscpu()
    print(f"CPU: {cpu['model name']}\nflags: {cpu['flags']}")
    texts, dup = make_texts(args.texts)
    print(f"{len(texts):,} texts: {dup['stsb_distinct']:,} distinct STS-B sentences of {dup['stsb_sentences']:,} "
          f"(duplicate rate {dup['stsb_duplicate_rate']:.1%}), then numbered variations; duplicate rate of the "
          f"texts {dup['texts_duplicate_rate']:.1%}")
    work = Path(tempfile.mkdtemp(prefix="bench-corpus-"))
    source = work / "texts.txt"
    source.write_text("\n".join(texts) + "\n", encoding="utf-8")
    settings = Settings(corpus_max_rows=max(args.texts, 1), corpus_disk_mb=100_000)
    lm = ModelHub(settings).get(args.model)
    print(f"ours on {lm.name} ({lm.state.backend.name if lm.state.backend else 'torch'} where a corpus is encoded); "
          "sentence-transformers on the same model folder, full precision")
    peer = SentenceTransformer(str(lm.source.location), device="cpu")
    outputs: dict[str, np.ndarray] = {}
    stores: list[tuple[Path, str]] = []

    def ours(path: Path = source) -> None:
        root = Path(tempfile.mkdtemp(dir=work))
        _, report = load_corpus(CorpusStore(root), path, lm, settings)
        outputs["ours"] = CorpusStore(root).open(report.info.name).vectors()
        stores.append((root, report.info.name))

    def theirs(batch: list[str] = texts) -> None:
        outputs["sentence-transformers"] = peer.encode(batch, batch_size=32, convert_to_numpy=True)

    warm = work / "warm.txt"  # warm-up, untimed: both models' first passes (and the ONNX export ours uses)
    warm.write_text("\n".join(texts[:300]) + "\n", encoding="utf-8")
    ours(warm)
    theirs(texts[:300])
    peaks: dict[str, list[int]] = {"ours": [], "sentence-transformers": []}

    def held(name: str, run: Callable[[], None]) -> Callable[[], None]:
        def go() -> None:
            with RssPeak() as rss:
                run()
            peaks[name].append(rss.growth)
        return go

    times = interleaved({"ours": held("ours", ours), "sentence-transformers": held("sentence-transformers", theirs)},
                        args.repeats, before=lambda name: clear_cache(lm))
    gap = float(np.abs(outputs["ours"] - outputs["sentence-transformers"]).max())
    for name, values in times.items():
        print(f"encode {name}: " + ", ".join(f"{v:.1f} s" for v in values) + f" (median {median(values):.1f} s, "
              f"{len(texts) / median(values):.0f} texts/s)")
    ratio = median(times["sentence-transformers"]) / median(times["ours"])
    print(f"encode ratio (sentence-transformers / ours): {ratio:.2f}x; max |difference| of the vectors {gap:.2e}")
    vectors_mb = outputs["ours"].shape[0] * outputs["ours"].shape[1] * 4 / 2**20
    memory = {"vectors_mb": vectors_mb, **{f"{n}_peak_growth_mb": [b / 2**20 for b in v] for n, v in peaks.items()}}
    print(f"memory held at most during each encode, over the process's size when it began (the returned vectors "
          f"included; the vectors alone, {len(texts):,} x {outputs['ours'].shape[1]} float32: {vectors_mb:.1f} MB): "
          + "; ".join(f"{n} " + ", ".join(f"{b / 2**20:.0f} MB ({b / 2**20 / vectors_mb:.1f}x)" for b in v)
                      for n, v in peaks.items()))

    root, name = stores[-1]
    reopen = [restart_seconds(root, name) for _ in range(3)]
    print("a new process opens the encoded corpus and answers a first search in "
          + ", ".join(f"{r:.2f} s" for r in reopen) + f" (median {median(reopen):.2f} s, imports not counted) "
          f"against {median(times['ours']):.1f} s to encode it again: {median(times['ours']) / median(reopen):.0f}x")

    rng = np.random.default_rng(0)
    base = outputs["ours"] / np.linalg.norm(outputs["ours"], axis=1, keepdims=True)
    reps = -(-args.search_rows // len(base))
    rows = np.concatenate([base] + [base + 0.01 * rng.standard_normal(base.shape) for _ in range(reps - 1)])
    rows = rows[: args.search_rows].astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    from tools.encoding.pooling import Pooling, sentence_vectors

    queries = sentence_vectors(lm, [t for t in dict.fromkeys(
        line.split("\t")[5] for line in STSB_TEST.read_text(encoding="utf-8").splitlines())][: args.queries],
        Pooling.SBERT)[0].numpy()
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    index = VectorIndex(rows)
    corpus_t = torch.from_numpy(rows)
    ours_lat, peer_lat, ours_ids, peer_ids = [], [], [], []
    for q in queries:  # interleaved, one query at a time
        start = time.perf_counter()
        ids, _ = index.search(q[None, :], 10)
        ours_lat.append(time.perf_counter() - start)
        start = time.perf_counter()
        hits = util.semantic_search(torch.from_numpy(q[None, :]), corpus_t, top_k=10)[0]
        peer_lat.append(time.perf_counter() - start)
        ours_ids.append(ids[0])
        peer_ids.append([h["corpus_id"] for h in hits])
    start = time.perf_counter()
    graph = build_hnsw(rows)
    build_s = time.perf_counter() - start
    hnsw_ids, _ = hnsw_search(graph, queries, 10)
    search = {
        "rows": len(rows), "queries": len(queries),
        "ours_exact_ms": {"p50": percentile(ours_lat, 50) * 1e3, "p95": percentile(ours_lat, 95) * 1e3},
        "semantic_search_ms": {"p50": percentile(peer_lat, 50) * 1e3, "p95": percentile(peer_lat, 95) * 1e3},
        "recall10_ours_exact_vs_semantic_search": recall_at_k(np.array(ours_ids), np.array(peer_ids)),
        "hnsw_build_s": build_s, "recall10_hnsw_vs_semantic_search": recall_at_k(hnsw_ids, np.array(peer_ids)),
    }
    print(f"search at {len(rows):,} rows, {len(queries)} queries one at a time: ours (exact) p50 "
          f"{search['ours_exact_ms']['p50']:.1f} ms / p95 {search['ours_exact_ms']['p95']:.1f} ms; semantic_search "
          f"p50 {search['semantic_search_ms']['p50']:.1f} ms / p95 {search['semantic_search_ms']['p95']:.1f} ms; "
          f"recall@10 ours {search['recall10_ours_exact_vs_semantic_search']:.4f}; HNSW built in {build_s:.1f} s, "
          f"recall@10 {search['recall10_hnsw_vs_semantic_search']:.4f}")
    name = "corpus" if args.model == "minilm" else f"corpus-{args.model.replace(':', '-')}"
    path = write(name, {"model": lm.name, "machine": machine(), "lscpu": cpu, "texts": len(texts), "duplicates": dup,
                            "encode_s": times, "encode_ratio": ratio, "max_abs_vector_difference": gap,
                            "memory": memory,
                            "search": search, "reopen_s": reopen,
                            "command": " ".join(["python", "bench/corpus.py", *sys.argv[1:]])})
    print(f"written {path}")


if __name__ == "__main__":
    main()
