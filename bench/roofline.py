"""How close each full-precision encoder comes to this machine's arithmetic limit, on the throughput workload.

The work is counted, not guessed: the STS-B test sentences (the workload of
``bench/throughput.py``) are tokenized by the model's tokenizer, cut into the batches each
encoder runs (sentence-transformers: batches of 32 in length order, every sentence; ours:
deduplicated, length-sorted, token-capped batches from ``tools.encoding.encode``), and each
padded batch costs the encoder's multiply-adds (Q, K, V, output and the two feed-forward
matrices per token; QK^T and AV per token pair; per layer). Dividing that by each run's
seconds gives the rate it reached. The machine's limit is measured two ways: PyTorch's
sgemm (oneDNN/MKL) on the model's own feed-forward shapes with the same thread count, best
of several tries (the practical ceiling of a dense kernel), and the nominal FMA peak from
the CPU's flags and clock (cores x FMA units x lanes x 2 x GHz), which no kernel reaches.

The question it answers: how much faster than sentence-transformers' default can any fp32
kernel be here? At most ``sgemm rate / ST's rate`` (the whole model at dense-GEMM speed).

    .venv/bin/python bench/roofline.py [--repeats 5] [--limit N]
"""

from __future__ import annotations

import argparse
import os
import re
import time
from pathlib import Path

import numpy as np
from common import interleaved, machine, median, quiet_libraries, stsb_pairs, write  # noqa: I001 - bench scripts import their sibling after sys.path is set

#: sentence-transformers' default batch size.
ST_BATCH = 32


def flops(lengths: list[list[int]], hidden: int, ffn: int, layers: int) -> float:
    """Floating-point operations of an encoder over padded batches (each a list of its rows' token counts)."""
    total = 0.0
    for batch in lengths:
        width, rows = max(batch), len(batch)
        tokens = width * rows
        dense = 2 * tokens * (4 * hidden * hidden + 2 * hidden * ffn)
        attention = 2 * 2 * tokens * width * hidden  # QK^T and AV
        total += layers * (dense + attention)
    return total


def sgemm_rate(hidden: int, ffn: int, rows: int, threads: int, tries: int = 7) -> float:
    """GFLOP/s of PyTorch's fp32 matmul on the feed-forward shapes (rows x hidden x ffn and back), best of tries."""
    import torch

    torch.set_num_threads(threads)
    a, up, down = torch.randn(rows, hidden), torch.randn(hidden, ffn), torch.randn(ffn, hidden)
    for _ in range(3):
        (a @ up) @ down
    best = float("inf")
    for _ in range(tries):
        start = time.perf_counter()
        for _ in range(10):
            (a @ up) @ down
        best = min(best, time.perf_counter() - start)
    return 10 * 2 * 2 * rows * hidden * ffn / best / 1e9


def nominal_peak(flags: set[str], cores: int) -> tuple[float, float]:
    """(GFLOP/s, GHz): cores x 2 FMA units x fp32 lanes (16 with AVX-512, 8 with AVX2) x 2 x the clock /proc says."""
    mhz = [float(m) for m in re.findall(r"cpu MHz\s*:\s*([\d.]+)", Path("/proc/cpuinfo").read_text())]
    ghz = max(mhz) / 1000 if mhz else 0.0
    lanes = 16 if "avx512f" in flags else 8 if "avx2" in flags else 4
    return cores * 2 * lanes * 2 * ghz, ghz


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--limit", type=int, default=0)
    args = parser.parse_args(argv)
    quiet_libraries()

    import torch
    from sentence_transformers import SentenceTransformer

    from tools.core.config import Settings
    from tools.encoding import encode as ours_encode
    from tools.encoding.cache import clear_cache
    from tools.encoding.pooling import Pooling, sentence_vectors
    from tools.models.hub import ModelHub
    from tools.models.threads import max_threads

    left, right, _ = stsb_pairs()
    if args.limit:
        left, right = left[: args.limit], right[: args.limit]
    sentences = left + right
    hub = ModelHub(Settings(cache_mb=2048, cache_size=100_000))
    lm = hub.get("minilm")
    config = lm.encoder.config
    hidden, ffn, layers = config.hidden_size, config.intermediate_size, config.num_hidden_layers
    count = [len(ids) for ids in lm.tokenizer(sentences, truncation=True, max_length=lm.max_tokens)["input_ids"]]

    st_order = sorted(range(len(sentences)), key=lambda i: -count[i])  # ST sorts by length, longest first
    st_batches = [[count[i] for i in st_order[s:s + ST_BATCH]] for s in range(0, len(st_order), ST_BATCH)]
    unique = list(dict.fromkeys(sentences))
    unique_count = [count[sentences.index(s)] for s in unique]
    order = sorted(range(len(unique)), key=lambda i: unique_count[i])
    our_batches = [[unique_count[i] for i in b] for b in ours_encode._batches(order, unique_count)]
    work = {"st default (PyTorch fp32)": flops(st_batches, hidden, ffn, layers),
            "ours full precision": flops(our_batches, hidden, ffn, layers)}

    st = SentenceTransformer(str(lm.source.location), device="cpu")
    runs = {"st default (PyTorch fp32)": lambda: st.encode(sentences),
            "ours full precision": lambda: sentence_vectors(lm, sentences, Pooling.SBERT)}
    for run in runs.values():  # warm-up: the ONNX export and sessions, first-call allocations
        clear_cache(lm)
        run()
    loads: list[list[float]] = []
    times = interleaved(runs, args.repeats, before=lambda name: clear_cache(lm), loads=loads)
    threads = max(max_threads(), torch.get_num_threads())
    mean_rows = int(np.mean([max(b) * len(b) for b in our_batches]))
    sgemm_by_rows = {rows: round(sgemm_rate(hidden, ffn, rows, threads), 1) for rows in (mean_rows, 512, 2048)}
    sgemm = max(sgemm_by_rows.values())  # the ceiling: the best dense-kernel rate at any of these sizes
    facts = machine()
    peak, ghz = nominal_peak(set(facts["cpu_flags"]), os.cpu_count() or 1)
    rows = []
    for name, values in times.items():
        rate = work[name] / median(values) / 1e9
        rows.append({"run": name, "gflop": round(work[name] / 1e9, 1), "median_s": round(median(values), 3),
                     "runs_s": [round(x, 3) for x in values], "gflops": round(rate, 1),
                     "of_sgemm": round(rate / sgemm, 3), "of_nominal_peak": round(rate / peak, 3) if peak else None,
                     "best_run_gflops": round(work[name] / min(values) / 1e9, 1)})
    st_rate = rows[0]["gflops"]
    payload = {"benchmark": "roofline", "machine": facts, "sentences": len(sentences), "unique": len(unique),
               "tokens": int(sum(count)), "repeats": args.repeats, "threads": threads,
               "sgemm_gflops": round(sgemm, 1), "sgemm_by_rows": sgemm_by_rows, "nominal_peak_gflops": round(peak, 1),
               "clock_ghz": round(ghz, 2), "load_avg_per_repeat": loads,
               "load_avg_end": [round(x, 2) for x in os.getloadavg()], "rows": rows,
               "most_over_st_default_at_sgemm_speed": round(sgemm / st_rate, 2) if st_rate else None}
    vendor = next((v.lower() for v in ("AMD", "Intel") if v in str(facts["cpu"])), "cpu")
    path = write(f"roofline-{vendor}-{str(facts['cpu_family_model']).replace('/', '-')}", payload)
    print(f"CPU: {facts['cpu']} (family/model {facts['cpu_family_model']}); flags: {' '.join(facts['cpu_flags'])}")
    print(f"{len(sentences):,} sentences ({len(unique):,} distinct, {sum(count):,} tokens), {args.repeats} "
          f"interleaved runs; load before each round: " + "  ".join(str(x) for x in loads)
          + f"; at the end {payload['load_avg_end']}")
    print(f"machine: sgemm {sgemm:.1f} GFLOP/s at best ({threads} threads; rows x {hidden} x {ffn} -> GFLOP/s: "
          f"{sgemm_by_rows}); nominal FMA peak {peak:.1f} GFLOP/s at {ghz:.2f} GHz")
    for r in rows:
        print(f"  {r['run']:<28} {r['gflop']:7.1f} GFLOP  " + " ".join(f"{x:6.2f}" for x in r["runs_s"])
              + f"  median {r['median_s']:6.2f} s = {r['gflops']:6.1f} GFLOP/s ({r['of_sgemm']:.0%} of sgemm, "
              f"best run {r['best_run_gflops']:.1f})")
    print(f"the whole model at sgemm speed would be {payload['most_over_st_default_at_sgemm_speed']}x "
          "sentence-transformers' default here")
    print(f"wrote {path.relative_to(path.parents[2])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
