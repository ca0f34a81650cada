"""Batches side by side: one one-thread ONNX Runtime session per core against one session over every core.

STS-B test's distinct sentences encoded as sentence vectors (the path of ``benchmark`` and of a corpus chunk),
full precision, with ``tools.models.backends.onnx_runtime.MAX_WORKERS`` set to 1 (every batch on one session
with every core's threads) and to its shipped value (batches side by side, one one-thread session per core),
interleaved, the encoding cache emptied before each run; every repeat, the medians, the ratio, the CPU and the
load. The vectors of both must be the same.

    .venv/bin/python bench/workers.py [--repeats 3] [--model minilm]
"""

from __future__ import annotations

import argparse

from common import interleaved, machine, median, quiet_libraries, stsb_sentences, write  # noqa: I001 - bench scripts import their sibling after sys.path is set


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--model", default="minilm")
    args = parser.parse_args(argv)
    quiet_libraries()
    import numpy as np

    from tools.core.config import Settings
    from tools.encoding.cache import clear_cache
    from tools.encoding.pooling import Pooling, sentence_vectors
    from tools.models.backends import onnx_runtime
    from tools.models.hub import ModelHub

    shipped = onnx_runtime.MAX_WORKERS
    lm = ModelHub(Settings()).get(args.model)
    texts = list(dict.fromkeys(stsb_sentences()))
    sentence_vectors(lm, texts[:64], Pooling.SBERT)  # the export and the sessions are made before any timing
    vectors: dict[str, np.ndarray] = {}

    def with_workers(n: int, name: str):
        def go():
            onnx_runtime.MAX_WORKERS = n
            vectors[name] = sentence_vectors(lm, texts, Pooling.SBERT)[0].numpy()
        return go

    runs = {"one session": with_workers(1, "one session"), "side by side": with_workers(shipped, "side by side")}
    try:
        times = interleaved(runs, args.repeats, before=lambda name: clear_cache(lm))
    finally:
        onnx_runtime.MAX_WORKERS = shipped
    one, side = median(times["one session"]), median(times["side by side"])
    diff = float(np.abs(vectors["one session"] - vectors["side by side"]).max())
    payload = {"benchmark": "workers", "peer": "one ONNX Runtime session over every core", "machine": machine(),
               "model": lm.name, "backend": lm.state.backend.name, "texts": len(texts), "max_workers": shipped,
               "runs_s": times, "median_s": {"one session": one, "side by side": side}, "ratio": one / side,
               "max_abs_diff": diff}
    print(f"{len(texts):,} distinct STS-B test sentences, {lm.name} on {lm.state.backend.name}; "
          f"CPU {payload['machine']['cpu']} ({payload['machine']['cpu_family_model']}; "
          f"{', '.join(payload['machine']['cpu_flags'])}), {payload['machine']['cores']} cores")
    for name, values in times.items():
        print(f"  {name:<14} {' '.join(f'{v:6.2f}' for v in values)}   median {median(values):.2f} s")
    print(f"side by side: {one / side:.2f}x one session; vectors differ by at most {diff:.1e}; "
          f"load at the end {payload['machine']['load_avg']}")
    path = write("workers", payload)
    print(f"wrote {path.relative_to(path.parents[2])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
