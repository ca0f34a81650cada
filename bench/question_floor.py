"""What reading one question must cost on this machine: its encoder pass against the bytes of weights it reads.

A question is a few tokens (the routing bench's 40 asked questions, framed as the router frames them), so its pass
does little arithmetic (2 x tokens x the weights' multiply-adds) but reads every weight matrix of the encoder once:
the pass is bound by memory, not by the FMA units. This bench counts the bytes of the export's matrix weights (the
initializers a MatMul or Gemm reads), measures how fast this machine streams weights through ONNX Runtime's own
matrix kernel (a 1-row product over 64 distinct matrices of the model's feed-forward shape, too many for the cache;
and, for comparison, over one matrix that stays in the cache), and times, interleaved question by question, the
router's own embedding of each question (:func:`assistant.understanding.router.embed`, the encoding cache cleared)
and the whole reading (:func:`assistant.understanding.understand`). It prints every repeat, the medians, the floor
(weight bytes / streaming rate), the reading besides the pass (the whole reading less the embedding, per question)
and what is left of a typed command's time under ``--within`` (1.3x) for the
quickest commands of a routing run over HTTP (``--http-result``), the CPU, its flags and the load.

    .venv/bin/python bench/question_floor.py [--repeats 5] [--http-result bench/results/routing-http.json]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np
from common import ROOT, machine, median, quiet_libraries, write  # noqa: I001 - bench scripts import their sibling after sys.path is set

#: How many distinct matrices the streaming probe cycles through (64 x 2.4 MB: far past any cache here).
MATRICES = 64


def weight_bytes(path: str) -> int:
    """Bytes of the initializers that a MatMul or Gemm of the ONNX file at ``path`` reads (the encoder's matrices)."""
    import onnx

    model = onnx.load(path)
    inits = {i.name: i for i in model.graph.initializer}
    read = {name for node in model.graph.node if node.op_type in ("MatMul", "Gemm") for name in node.input
            if name in inits}
    return sum(int(np.prod(inits[n].dims)) * 4 for n in read)


def streaming_rate(hidden: int, ffn: int, threads: int, distinct: int, tries: int = 5) -> float:
    """GB/s of weights read by ONNX Runtime's MatMul, 1 row x (hidden x ffn), cycling through ``distinct`` matrices."""
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    weights = [rng.standard_normal((hidden, ffn)).astype(np.float32) for _ in range(distinct)]
    nodes = [helper.make_node("MatMul", ["x", f"w{i}"], [f"y{i}"]) for i in range(distinct)]
    graph = helper.make_graph(nodes, "stream", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, hidden])],
                              [helper.make_tensor_value_info(f"y{i}", TensorProto.FLOAT, [1, ffn])
                               for i in range(distinct)],
                              [numpy_helper.from_array(w, f"w{i}") for i, w in enumerate(weights)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=9)
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    x = {"x": rng.standard_normal((1, hidden)).astype(np.float32)}
    session.run(None, x)
    best = float("inf")
    for _ in range(tries):
        start = time.perf_counter()
        session.run(None, x)
        best = min(best, time.perf_counter() - start)
    return distinct * hidden * ffn * 4 / best / 1e9


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--within", type=float, default=1.3)
    parser.add_argument("--http-result", default=str(ROOT / "bench" / "results" / "routing-http.json"))
    args = parser.parse_args(argv)
    quiet_libraries()
    from assistant.commands.registry import TABLE
    from assistant.session import Session
    from assistant.understanding import router, understand
    from tools.core.config import Settings
    from tools.encoding.cache import clear_cache
    from tools.models.hub import ModelHub
    from tools.models.threads import max_threads

    hub = ModelHub(Settings())
    lm = router.routing_model(hub, "minilm")
    rows = [json.loads(line) for line in (ROOT / "assistant" / "understanding" / "asked" / "questions.jsonl")
            .read_text().splitlines()]
    skip = ("mask", "benchmark", "vocab", "export", "history", "why")  # (the routing bench's sample)
    rows = [r for r in rows if r["line"].split()[0] not in skip]
    questions = [r["q"] for r in rows[:: max(1, len(rows) // 40)][:40]]
    understand("warm up the routing index", Session(), hub, TABLE, hub.settings)
    for q in questions:  # (the ONNX export and its session exist after this)
        router.embed(lm, [router.frame(q)])
    path = getattr(lm.state.backend, "path", None)
    if not path:
        raise SystemExit(f"{lm.name}'s questions run on {lm.state.backend.name}, not on an ONNX export: nothing to "
                         "count.")
    config = lm.encoder.config
    threads = max_threads()
    per: dict[str, list[list[float]]] = {"embed": [[] for _ in questions], "understand": [[] for _ in questions]}
    loads = []
    for _ in range(args.repeats):
        loads.append(round(os.getloadavg()[0], 2))
        for i, q in enumerate(questions):
            clear_cache(lm)
            start = time.perf_counter()
            router.embed(lm, [router.frame(q)])
            per["embed"][i].append((time.perf_counter() - start) * 1000)
            clear_cache(lm)
            start = time.perf_counter()
            understand(q, Session(), hub, TABLE, hub.settings)
            per["understand"][i].append((time.perf_counter() - start) * 1000)
    tokens = [len(lm.tokenizer(router.frame(q))["input_ids"]) for q in questions]
    matrix = weight_bytes(str(path))
    streamed = streaming_rate(config.hidden_size, config.intermediate_size, threads, MATRICES)
    cached = streaming_rate(config.hidden_size, config.intermediate_size, threads, 1)
    floor_ms = matrix / streamed / 1e6
    embed_ms = median([median(v) for v in per["embed"]])
    understand_ms = median([median(v) for v in per["understand"]])
    rest_ms = median([median(u) - median(e) for u, e in zip(per["understand"], per["embed"])])
    quick = []
    http = Path(args.http_result).resolve()
    if http.is_file():
        each = json.loads(http.read_text())["each"]
        quick = sorted(({"line": e["line"], "command_ms": round(e["command_ms"], 1),
                         "left_ms": round((args.within - 1) * e["command_ms"], 1)} for e in each),
                       key=lambda e: e["command_ms"])[:5]
    facts = machine()
    payload = {"benchmark": "question_floor", "machine": facts, "threads": threads, "repeats": args.repeats,
               "questions": len(questions), "tokens_median": int(np.median(tokens)), "tokens": tokens,
               "matrix_weight_bytes": matrix, "streaming_gb_s": round(streamed, 2), "in_cache_gb_s": round(cached, 2),
               "floor_ms": round(floor_ms, 2), "embed_ms_median": round(embed_ms, 2),
               "understand_ms_median": round(understand_ms, 2), "rest_of_reading_ms_median": round(rest_ms, 2),
               "reading_at_the_floor_ms": round(floor_ms + rest_ms, 2),
               "embed_ms": [[round(x, 2) for x in v] for v in per["embed"]],
               "understand_ms": [[round(x, 2) for x in v] for v in per["understand"]],
               "quickest_commands_over_http": quick, "http_result": str(http.relative_to(ROOT)) if quick else None,
               "load_before_each_repeat": loads, "load_end": [round(x, 2) for x in os.getloadavg()]}
    vendor = next((v.lower() for v in ("AMD", "Intel") if v in str(facts["cpu"])), "cpu")
    out = write(f"question-floor-{vendor}-{str(facts['cpu_family_model']).replace('/', '-')}", payload)
    print(f"CPU: {facts['cpu']} (family/model {facts['cpu_family_model']}); flags: {' '.join(facts['cpu_flags'])}")
    print(f"{len(questions)} questions, {args.repeats} interleaved repeats, {threads} threads; load before each "
          f"repeat {loads}, at the end {payload['load_end']}; framed questions' tokens: median "
          f"{payload['tokens_median']}, {min(tokens)}-{max(tokens)}")
    for i, q in enumerate(questions):
        print(f"  {tokens[i]:3d} tok  embed " + " ".join(f"{x:5.1f}" for x in per["embed"][i])
              + "  understand " + " ".join(f"{x:5.1f}" for x in per["understand"][i]) + f"  {q[:50]}")
    print(f"matrix weights read per pass: {matrix / 1e6:.1f} MB; ONNX Runtime's MatMul streams them at "
          f"{streamed:.1f} GB/s ({MATRICES} distinct 1x{config.hidden_size}x{config.intermediate_size} products; "
          f"{cached:.1f} GB/s from one matrix in the cache)")
    print(f"floor of one question's pass: {floor_ms:.1f} ms; measured: embed {embed_ms:.1f} ms, the whole reading "
          f"{understand_ms:.1f} ms (medians over the questions of each question's median); the reading besides the "
          f"pass {rest_ms:.1f} ms, so a reading whose pass ran at the floor would take {floor_ms + rest_ms:.1f} ms")
    for e in quick:
        print(f"  {e['line'][:60]:<60} {e['command_ms']:6.1f} ms over HTTP: {args.within}x leaves "
              f"{e['left_ms']:.1f} ms to read its question ({floor_ms:.1f} ms of it the weights alone)")
    print(f"wrote {out.relative_to(out.parents[2])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
