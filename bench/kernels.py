"""Fast-path kernel candidates on this CPU: which ONNX Runtime int8 quantisation (or fp32) is fastest here.

The evidence for a CPU-flags table: the same fp32 ONNX export of the model, quantised
dynamically by ONNX Runtime in each candidate way, run through this project's encoder
(``tools.encoding``: the same batches, threads and pooling as ``minilm:int8``) on the
STS-B test sentences, cold cache, repeats interleaved; with ONNX Runtime fp32 and PyTorch
fp32 beside them. Dynamic quantisation always takes uint8 activations, so the int8
candidates differ in the weights: signed (u8s8, what VNNI's ``vpdpbusd`` and AMX take
natively) or unsigned (u8u8), per channel or per tensor, and ``reduce_range`` (7-bit
weights, which avoid the saturation of AVX2's ``vpmaddubsw`` on CPUs without VNNI).
Each candidate's STS-B Spearman and largest vector difference against fp32 are reported.

    .venv/bin/python bench/kernels.py [--repeats 3] [--limit N]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import warnings
from pathlib import Path

import numpy as np
from common import interleaved, machine, median, quiet_libraries, stsb_pairs, write  # noqa: I001 - bench scripts import their sibling after sys.path is set
from throughput import spearman

#: name -> quantize_dynamic keyword arguments (weight type, per channel, reduce range).
CANDIDATES = {
    "int8 u8s8 per-channel": {"weight_type": "QInt8", "per_channel": True, "reduce_range": False},
    "int8 u8s8 per-tensor": {"weight_type": "QInt8", "per_channel": False, "reduce_range": False},
    "int8 u8s8 per-channel reduce-range": {"weight_type": "QInt8", "per_channel": True, "reduce_range": True},
    "int8 u8u8 per-channel": {"weight_type": "QUInt8", "per_channel": True, "reduce_range": False},
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--limit", type=int, default=0)
    args = parser.parse_args(argv)
    quiet_libraries()

    from onnxruntime.quantization import QuantType, quantize_dynamic

    from tools.core.config import Settings
    from tools.encoding.cache import clear_cache
    from tools.encoding.pooling import Pooling, sentence_vectors
    from tools.models.backends.onnx_runtime import OnnxBackend, export_onnx
    from tools.models.backends.torch_fp32 import TorchBackend
    from tools.models.hub import ModelHub

    left, right, gold = stsb_pairs()
    if args.limit:
        left, right, gold = left[: args.limit], right[: args.limit], gold[: args.limit]
    sentences = left + right
    hub = ModelHub(Settings(cache_mb=2048, cache_size=100_000))
    lm = hub.get("minilm")
    float_path = export_onnx(lm, int8=False)
    assert float_path is not None, "no ONNX export (is the onnx package installed?)"
    work = Path(tempfile.mkdtemp(prefix="kernels-"))
    backends = {"fp32 onnxruntime": OnnxBackend(float_path, "onnx"), "fp32 torch": TorchBackend("torch")}
    for name, spec in CANDIDATES.items():
        target = work / (name.replace(" ", "_") + ".onnx")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            quantize_dynamic(float_path, str(target), weight_type=getattr(QuantType, spec["weight_type"]),
                             per_channel=spec["per_channel"], reduce_range=spec["reduce_range"],
                             op_types_to_quantize=["MatMul"])
        backends[name] = OnnxBackend(str(target), "onnx-int8")

    out: dict[str, np.ndarray] = {}

    def run(name: str):
        def go() -> None:
            lm.state.backend = backends[name]
            vectors, _ = sentence_vectors(lm, sentences, Pooling.SBERT)
            out[name] = vectors.numpy()
        return go

    runs = {name: run(name) for name in backends}
    for name in runs:  # warm-up: sessions and first-call allocations
        clear_cache(lm)
        run(name)()
    loads: list[list[float]] = []
    times = interleaved(runs, args.repeats, before=lambda name: clear_cache(lm), loads=loads)
    half = len(left)
    ref = out["fp32 torch"]
    rows = []
    for name, values in times.items():
        v = out[name]
        rows.append({"run": name, "median_s": round(median(values), 3), "runs_s": [round(x, 3) for x in values],
                     "vs_fp32_torch": round(median(times["fp32 torch"]) / median(values), 2),
                     "vs_fp32_onnxruntime": round(median(times["fp32 onnxruntime"]) / median(values), 2),
                     "spearman": round(spearman(v[:half], v[half:], gold), 5),
                     "max_abs_diff_vs_fp32": float(np.abs(v - ref).max())})
    facts = machine()
    payload = {"benchmark": "kernels", "machine": facts, "sentences": len(sentences), "repeats": args.repeats,
               "load_avg_per_repeat": loads, "load_avg_end": [round(x, 2) for x in os.getloadavg()],
               "rows": rows}
    path = write("kernels", payload)
    print(f"CPU: {facts['cpu']} (family/model {facts['cpu_family_model']}); flags: {' '.join(facts['cpu_flags'])}")
    print(f"{len(sentences):,} sentences, {args.repeats} interleaved runs; load before each round: "
          + "  ".join(str(x) for x in loads) + f"; at the end {payload['load_avg_end']}")
    for r in rows:
        print(f"  {r['run']:<36} " + " ".join(f"{x:6.2f}" for x in r["runs_s"])
              + f"  median {r['median_s']:6.2f} s  {r['vs_fp32_torch']:5.2f}x torch fp32  "
              f"{r['vs_fp32_onnxruntime']:5.2f}x ORT fp32  Spearman {r['spearman']:.4f}  "
              f"max|diff| {r['max_abs_diff_vs_fp32']:.1e}")
    print(f"wrote {path.relative_to(path.parents[2])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
