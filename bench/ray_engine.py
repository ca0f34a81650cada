"""What the Ray engine costs and buys on this machine: `corpus load` in-process against `--engine ray` (a local Ray).

    python bench/ray_engine.py --texts 10000 --repeats 2

The same N distinct STS-B-derived texts (bench/corpus.py's ``make_texts``) are encoded into a fresh
store each repeat, by the in-process engine and by the Ray engine (which starts a local Ray of
this process's cores, a pool of cores - 1 actors with one torch thread each, and shuts it down),
repeats interleaved, the encoding cache emptied before each. From each chunk's arrival time it
reports the time to the first chunk back; the Ray actor times its own encoding, which gives its
per-core rate (one core, one torch thread) and Ray's overhead per job (wall time less the
actors' encoding: cluster start, actor start, model load, hand-offs); from that per-core rate,
how many machines a 10-million-text corpus needs to be encoded in an hour. Vectors are compared.
The machine is shared (2 cores): ``lscpu`` and the load average are recorded beside every figure.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.common import interleaved, machine, median, quiet_libraries, write  # noqa: E402
from bench.corpus import lscpu, make_texts  # noqa: E402

CORPUS_TEXTS, HOUR_S = 10_000_000, 3600.0


def machines_for(per_core: float, cores: int, texts: int = CORPUS_TEXTS, seconds: float = HOUR_S) -> int:
    """Machines of ``cores`` cores (cores - 1 actors each) that encode ``texts`` in ``seconds`` at ``per_core``."""
    return math.ceil(texts / (per_core * seconds * max(1, cores - 1)))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--texts", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--chunk-rows", type=int, default=500)
    args = parser.parse_args(argv)
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    quiet_libraries()
    from tools.core.config import Settings
    from tools.corpus.encode import load_corpus
    from tools.corpus.engines.ray import RayEngine
    from tools.corpus.store import CorpusStore
    from tools.encoding.cache import clear_cache
    from tools.models.hub import ModelHub

    cpu = lscpu()
    load_before = os.getloadavg()
    print(f"CPU: {cpu['model name']}\nflags: {cpu['flags']}\nload average before: {load_before}")
    texts, _ = make_texts(args.texts)
    work = Path(tempfile.mkdtemp(prefix="bench-ray-"))
    source = work / "texts.txt"
    source.write_text("\n".join(texts) + "\n", encoding="utf-8")
    settings = Settings(corpus_max_rows=max(args.texts, 1), corpus_disk_mb=100_000)
    lm = ModelHub(settings).get("minilm")
    outputs: dict[str, np.ndarray] = {}
    arrivals: dict[str, list[list[float]]] = {"in-process": [], "ray": []}
    pools: list[int] = []
    actor_rates: list[float] = []  # texts per second of one actor (one core, one thread), from its own clock

    def run(name: str, path: Path = source) -> None:
        root = Path(tempfile.mkdtemp(dir=work))
        stamps: list[float] = []
        start = time.perf_counter()

        def progress(fraction: float, message: str) -> None:
            if message.startswith("encoded"):
                stamps.append(time.perf_counter() - start)

        engine = RayEngine() if name == "ray" else "local"
        _, report = load_corpus(CorpusStore(root), path, lm, settings, engine=engine, progress=progress,
                                chunk_rows=args.chunk_rows)
        if path == source:
            arrivals[name].append(stamps)
            outputs[name] = CorpusStore(root).open(report.info.name).vectors()
            if isinstance(engine, RayEngine):
                pools.append(engine.pool)
                actor_rates.append(len(texts) / engine.actor_seconds)

    warm = work / "warm.txt"  # untimed: the ONNX export both engines' bulk passes use, and first passes
    warm.write_text("\n".join(texts[:300]) + "\n", encoding="utf-8")
    run("in-process", warm)
    times = interleaved({"in-process": lambda: run("in-process"), "ray": lambda: run("ray")}, args.repeats,
                        before=lambda name: clear_cache(lm))
    load_after = os.getloadavg()
    gap = float(np.abs(outputs["in-process"] - outputs["ray"]).max())
    cores = len(os.sched_getaffinity(0))
    summary: dict[str, dict[str, object]] = {}
    for name, values in times.items():
        firsts = [s[0] for s in arrivals[name]]
        summary[name] = {"seconds": values, "median_s": median(values), "texts_per_s": len(texts) / median(values),
                         "first_chunk_s": firsts}
        print(f"{name}: " + ", ".join(f"{v:.1f} s" for v in values) + f" (median {median(values):.1f} s, "
              f"{len(texts) / median(values):.0f} texts/s over {cores} cores); first chunk back after "
              + ", ".join(f"{f:.1f} s" for f in firsts))
    per_core = median(actor_rates)
    summary["ray"]["actor_texts_per_s"] = actor_rates
    fixed = median(times["ray"]) - len(texts) / (per_core * max(1, pools[0] if pools else 1))
    print("ray actor (1 core, 1 thread, its own clock): " + ", ".join(f"{r:.0f}" for r in actor_rates)
          + f" texts/s (median {per_core:.0f}); in-process over {cores} cores: "
          f"{median([len(texts) / v for v in times['in-process']]) / cores:.0f} texts/s per core")
    paper = {f"{c}-core machines": machines_for(per_core, c) for c in (2, 16, 64)}
    print(f"max |difference| of the vectors {gap:.2e}; Ray's cost per job beyond its actors' encoding about "
          f"{fixed:.1f} s (start, actors, model load, hand-offs); pool of {pools[0] if pools else '?'} actor(s)")
    print(f"10,000,000 texts in one hour at {per_core:.0f} texts/s per actor core: "
          f"{CORPUS_TEXTS / per_core / 3600:.0f} core-hours; machines (cores - 1 actors each): {paper}")
    print(f"load average after: {load_after}")
    path = write("ray_engine", {
        "machine": machine(), "lscpu": cpu, "load_avg_before": load_before, "load_avg_after": load_after,
        "texts": len(texts), "chunk_rows": args.chunk_rows, "repeats": args.repeats, "ray_pool": pools,
        "runs": summary, "max_abs_vector_difference": gap, "ray_overhead_s": fixed,
        "paper_10M_texts_in_1h": {"per_core_texts_per_s": per_core, "core_hours": CORPUS_TEXTS / per_core / 3600,
                                  **paper},
    })
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
