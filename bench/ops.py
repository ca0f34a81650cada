"""Where ONNX Runtime spends the encoder's time, operator by operator, in full precision and in int8.

The question it answers: how much faster can int8 make a whole pass here? Dynamic quantisation speeds up
only the weight MatMuls (``DynamicQuantizeMatMul``, ``MatMulIntegerToFloat``); layer norms, GELU, softmax,
transposes and the attention products stay fp32. Their share of the int8 pass bounds what any faster int8
kernel could give (Amdahl). Workload: STS-B test's distinct sentences in length-sorted batches of 32, through
this project's own exports (``tools.models.backends.onnx_runtime.export_onnx``), one session with every core,
ONNX Runtime's profiler on; the kernel times are summed by operator type.

    .venv/bin/python bench/ops.py [--limit N]
"""

from __future__ import annotations

import argparse
import json
import os
from collections import Counter
from pathlib import Path

import numpy as np
from common import machine, quiet_libraries, stsb_sentences, write  # noqa: I001 - bench scripts import their sibling after sys.path is set

#: Operators that compute in int8 after dynamic quantisation (the rest stay fp32).
INT8_OPS = frozenset({"DynamicQuantizeMatMul", "MatMulIntegerToFloat", "MatMulInteger", "DynamicQuantizeLinear"})


def profile(path: str, feeds: list[dict[str, np.ndarray]], threads: int) -> Counter[str]:
    """Kernel microseconds by operator type over every batch, from ONNX Runtime's own profiler."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.enable_profiling = True
    session = onnxruntime.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    for feed in feeds:
        session.run(["last_hidden_state"], {n: feed[n] for n in names})
    trace = Path(session.end_profiling())
    events = json.loads(trace.read_text())
    trace.unlink()
    times: Counter[str] = Counter()
    for event in events:
        if event.get("cat") == "Node" and event["name"].endswith("_kernel_time"):
            times[event["args"]["op_name"]] += event["dur"]
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--limit", type=int, default=0, help="the first N distinct sentences only (a quick look)")
    args = parser.parse_args(argv)
    quiet_libraries()
    from tools.core.config import Settings
    from tools.models.backends.onnx_runtime import export_onnx
    from tools.models.hub import ModelHub

    lm = ModelHub(Settings(onnx_rows=0)).get("minilm")
    sentences = sorted(set(stsb_sentences()), key=lambda s: len(lm.tokenizer(s)["input_ids"]))
    sentences = sentences[: args.limit] if args.limit else sentences
    feeds = []
    for i in range(0, len(sentences), 32):
        enc = lm.tokenizer(sentences[i:i + 32], padding=True, truncation=True, return_tensors="np")
        feeds.append({k: v.astype(np.int64) for k, v in enc.items()})
    threads = os.cpu_count() or 1
    facts = machine()
    out: dict[str, object] = {"benchmark": "ops", "machine": facts, "sentences": len(sentences), "threads": threads}
    print(f"CPU: {facts['cpu']} (family/model {facts['cpu_family_model']}), flags: {' '.join(facts['cpu_flags'])}; "
          f"{len(sentences):,} distinct sentences, {len(feeds)} batches, {threads} threads")
    for label, int8 in (("full precision", False), ("int8", True)):
        path = export_onnx(lm, int8=int8)
        if path is None:
            print(f"{label}: no ONNX export here")
            continue
        times = profile(path, feeds, threads)
        total = sum(times.values())
        in_int8 = sum(v for k, v in times.items() if k in INT8_OPS)
        out[label] = {"total_s": round(total / 1e6, 3), "int8_share": round(in_int8 / total, 3),
                      "by_op_s": {k: round(v / 1e6, 3) for k, v in times.most_common()}}
        print(f"  {label}: kernel time {total / 1e6:.2f} s; in int8 operators {in_int8 / total:.1%}"
              + (f" (any int8 kernel, however fast, leaves {1 - in_int8 / total:.1%}: at most "
                 f"{total / (total - in_int8):.2f}x this pass)" if int8 else ""))
        for op, us in times.most_common(8):
            print(f"      {op:<26} {us / 1e6:6.2f} s  {us / total:6.1%}")
    path = write("ops", out)
    print(f"wrote {path.relative_to(path.parents[2])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
