"""`why` against `compare` on the same STS-B pairs, and the integrated-gradients steps it needs.

Part 1, latency: for each pooling, ``why a | b`` and its peer ``compare a | b`` run
interleaved (encoding cache cleared before each), on the default model; the ratio
why / compare is what an explanation costs over the number it explains.

Part 2, completeness: for cls and max pooling, integrated gradients with 8, 16, 32
and 64 quadrature points; the median and worst relative gap between the attributions'
sum and the score difference (completeness), and the time per text.

    .venv/bin/python bench/why.py [--repeats 5] [--pairs 8]
"""

from __future__ import annotations

import argparse
import time

from common import STSB_TEST, interleaved, machine, median, quiet_libraries, write  # noqa: I001 - bench scripts import their sibling after sys.path is set

FALLBACK = [("A man plays guitar.", "Someone is playing an instrument."),
            ("A cat sat on the mat.", "A kitten sat on the rug."),
            ("The stock market fell sharply today.", "Shares dropped a lot on Monday.")]


def pairs(n: int) -> list[tuple[str, str]]:
    if not STSB_TEST.is_file():
        return FALLBACK[:n]
    from common import stsb_pairs

    left, right, _ = stsb_pairs()
    return list(zip(left, right))[:n]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--pairs", type=int, default=8)
    args = parser.parse_args()
    quiet_libraries()
    from tools.encoding.cache import clear_cache
    from tools.encoding.pooling import Pooling, sentence_vectors
    from tools.models.hub import ModelHub
    from tools.similarity.attribution import similarity_attribution
    from tools.similarity.compare import compare
    from tools.similarity.why import why

    lm = ModelHub().get("minilm")
    data = pairs(args.pairs)
    out: dict[str, object] = {"machine": machine(), "pairs": len(data), "repeats": args.repeats}
    latency = {}
    for pool in ("mean", "cls", "max"):
        runs = {"why": lambda p=pool: [why(lm, list(x), pool=p) for x in data],
                "compare": lambda p=pool: [compare(lm, list(x), pool=p) for x in data]}
        times = interleaved(runs, args.repeats, before=lambda _: clear_cache(lm))
        w, c = median(times["why"]) / len(data), median(times["compare"]) / len(data)
        latency[pool] = {"why_s_per_pair": w, "compare_s_per_pair": c, "ratio": w / c,
                         "why_all": times["why"], "compare_all": times["compare"]}
        print(f"{pool:5s}: why {w * 1000:8.1f} ms/pair, compare {c * 1000:6.1f} ms/pair, ratio {w / c:6.1f}x "
              f"(all why runs: {[round(t, 2) for t in times['why']]})")
    out["latency"] = latency
    steps_out = {}
    for pool in (Pooling.CLS, Pooling.MAX):
        for steps in (8, 16, 32, 64):
            gaps, seconds = [], []
            for a, b in data:
                vectors, _ = sentence_vectors(lm, [a, b], pool, lm.num_layers)
                start = time.perf_counter()
                _, found = similarity_attribution(lm, a, vectors[1], pool, lm.num_layers, steps=steps)
                seconds.append(time.perf_counter() - start)
                gaps.append(found.relative_gap)
            steps_out[f"{pool.value}/{steps}"] = {"median_gap": median(gaps), "worst_gap": max(gaps),
                                                  "s_per_text": median(seconds)}
            print(f"IG {pool.value:3s} {steps:2d} steps: completeness gap median {median(gaps):.2%}, worst "
                  f"{max(gaps):.2%}; {median(seconds) * 1000:.0f} ms per text")
    out["ig_steps"] = steps_out
    out["load_avg_after"] = machine()["load_avg"]
    print(f"load average before {out['machine']['load_avg']}, after {out['load_avg_after']}")
    print("written to", write("why", out))


if __name__ == "__main__":
    main()
