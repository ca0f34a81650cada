"""Encoding throughput: this project's batch encoder against sentence-transformers' ``encode``.

The peer is ``SentenceTransformer(<the same model folder>).encode(sentences)`` with
its defaults (batch size 32, PyTorch's default thread count), measured in the
same process with the repeats interleaved. Workload: the 2,758 sentences of the
STS-B test split (columns 5 and 6). Ours goes through ``tools.encoding``
(deduplicated, length-sorted token-capped batches, ``sdpa``, thread count by
size and machine load), with the encoding cache cleared before each timed run
(cold); the warm-cache rerun and the int8 fast path (``minilm:int8``: an int8
ONNX export run by ONNX Runtime, see tools.models.backends) are reported beside
it. The corpus path (``bulk_vectors``: each batch pooled where it ran, no per-text states or cache;
what ``corpus load`` runs) is timed beside it in full precision and int8 (the ``bulk`` rows). Where the CPU has
AMX and ``openvino`` is installed, the fast path's bf16 kernels (OpenVINO bf16 on our export) are timed too
(the ``ours bf16`` rows), whichever this CPU's fast path would choose. Vectors are
compared after sbert pooling (max abs difference
must be <= 1e-5), and each variant's STS-B Spearman is computed from them.

sentence-transformers' own CPU backends run as further peers from their own
environment (``bench/peers/.venv``, built by ``bash bench/peers/setup.sh``: optimum-onnx
0.1.0 needs transformers < 4.58, which the project's venv cannot hold): its default
(PyTorch), ``backend="onnx"``, its dynamic int8 ONNX export for this CPU's flags and
``backend="openvino"``. One peer process loads them all once (``bench/peers/encode.py
--serve``) and this script asks it for one timed ``encode`` at a time, so the peers'
runs interleave with ours run by run; the seconds are the peer's own ``perf_counter``
around ``encode``. Without that venv the peers are left out with a note.

Every repeat is printed with the load average after it, then the medians, each of our
rows' ratio against every peer, the issue's targets, STS-B Spearman per variant and the
largest vector difference of each against sentence-transformers' default.

    .venv/bin/python bench/throughput.py [--repeats 3] [--limit N] [--skip-fast] [--no-peers]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
import tempfile
from pathlib import Path

import numpy as np
from common import ROOT, interleaved, machine, median, quiet_libraries, stsb_pairs, write  # noqa: I001 - bench scripts import their sibling after sys.path is set

PEERS = ROOT / "bench" / "peers"
PEER_PYTHON = PEERS / ".venv" / "bin" / "python"
#: Row names of the peer venv's variants (sentence-transformers' own backends).
#: Our rows: the commands' path (``sentence_vectors``: per-text states, cached) and the corpus path
#: (``bulk_vectors``: pooled where each batch ran), each in full precision and on the fast path.
OURS = ("ours", "ours bulk", "ours int8", "ours int8 bulk", "ours bf16", "ours bf16 bulk")
PEER_ROWS = {"torch": "st torch (peer venv)", "onnx": "st onnx (peer venv)",
             "onnx-int8": "st onnx int8 (peer venv)", "openvino": "st openvino (peer venv)",
             "openvino-fp32": "st openvino fp32 (peer venv)"}


class PeerProcess:
    """bench/peers/encode.py --serve in bench/peers/.venv: one timed ``encode`` per request."""

    def __init__(self, model_dir: str, sentences: list[str], variants: list[str]) -> None:
        self._dir = Path(tempfile.mkdtemp(prefix="throughput-peers-"))
        (self._dir / "sentences.json").write_text(json.dumps(sentences))
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
        env.pop("PYTHONPATH", None)
        self._log = open(self._dir / "stderr.log", "w")  # noqa: SIM115 - closed in close()
        self.proc = subprocess.Popen(
            [str(PEER_PYTHON), str(PEERS / "encode.py"), model_dir, "--serve", "--sentences",
             str(self._dir / "sentences.json"), "--variants", ",".join(variants)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log, text=True, env=env)
        self.header = self._read()
        if not self.header.get("ready"):
            raise RuntimeError(f"the peer process did not start: {self.header}")

    def _read(self) -> dict:
        while True:
            line = self.proc.stdout.readline() if self.proc.stdout else ""
            if not line:
                tail = (self._dir / "stderr.log").read_text()[-2000:]
                raise RuntimeError(f"the peer process ended:\n{tail}")
            if line.startswith("{"):
                return json.loads(line)

    def ask(self, request: dict) -> dict:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        return self._read()

    def vectors(self, variant: str) -> np.ndarray:
        path = self._dir / f"{variant}.npy"
        self.ask({"save": variant, "path": str(path)})
        return np.load(path)

    def close(self) -> None:
        try:
            if self.proc.poll() is None and self.proc.stdin is not None:
                self.proc.stdin.write(json.dumps({"quit": True}) + "\n")
                self.proc.stdin.close()
                self.proc.wait(timeout=60)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
            self._log.close()


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
    parser.add_argument("--no-peers", action="store_true", help="leave out the peer venv's backends")
    parser.add_argument("--peer-variants", default=",".join(PEER_ROWS),
                        help="sentence-transformers backends to run from bench/peers/.venv")
    parser.add_argument("--out", default="throughput", help="the result's name in bench/results/ (another CPU's run "
                        "kept beside the others: throughput-xeon-6-207-run2)")
    args = parser.parse_args(argv)
    quiet_libraries()

    import torch
    from sentence_transformers import SentenceTransformer

    from tools.core.config import Settings
    from tools.encoding.cache import cache_stats, clear_cache
    from tools.encoding.pooling import Pooling, bulk_vectors, sentence_vectors
    from tools.models.hub import ModelHub

    facts = machine()  # the load at the start; the load before each round and at the end are added below
    left, right, gold = stsb_pairs()
    if args.limit:
        left, right, gold = left[: args.limit], right[: args.limit], gold[: args.limit]
    sentences = left + right
    n = len(sentences)
    # the warm rerun keeps every sentence; the int8 row is int8 whatever this CPU's fast path would choose
    hub = ModelHub(Settings(cache_mb=2048, cache_size=100_000, fast_kernel="int8"))
    lm = hub.get("minilm")
    fast = None if args.skip_fast else hub.get("minilm:int8")
    from tools.models.backends.openvino_bf16 import available
    from tools.models.kernels import fast_kernel

    # OpenVINO bf16, the fast path's kernels on CPUs with AMX, timed beside int8 where it can run here
    bf16 = None
    if not args.skip_fast and available() and "amx_bf16" in facts["cpu_flags"]:  # type: ignore[operator]
        bf16 = ModelHub(dataclasses.replace(hub.settings, fast_kernel="bf16")).get("minilm:int8")

    choice = fast_kernel(lm)  # what `minilm:int8` runs on this CPU (its kept timing or its kind's row)
    facts["fast_path_choice"] = {"kernel": choice.kernel.value, "why": choice.why}
    print(f"this CPU's fast path: {choice.kernel.value} ({choice.why})", flush=True)
    st = SentenceTransformer(lm.source.location, device="cpu")
    default_threads = torch.get_num_threads()

    out: dict[str, np.ndarray] = {}

    def ours(model, row):
        def go():
            vectors, _ = sentence_vectors(model, sentences, Pooling.SBERT)
            out[row] = vectors.numpy()
        return go

    def ours_bulk(model, row):  # the corpus path: pooled where each batch ran, no per-text states or cache
        def go():
            out[row] = bulk_vectors(model, sentences, Pooling.SBERT)
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

    peers: PeerProcess | None = None
    peer_note = ""
    if args.no_peers:
        peer_note = "left out (--no-peers)"
    elif not PEER_PYTHON.exists():
        peer_note = "left out: no bench/peers/.venv (build it with `bash bench/peers/setup.sh`)"
    else:
        print("starting the peer venv's backends (loading and exporting, untimed) ...", flush=True)
        peers = PeerProcess(str(lm.source.location), sentences, args.peer_variants.split(","))
        for variant, why in peers.header.get("skipped", {}).items():
            print(f"  peer {variant}: not available here ({why})")
    peer_seconds: dict[str, list[float]] = {}

    def from_peer(variant: str):
        def go():
            assert peers is not None
            reply = peers.ask({"run": variant})
            peer_seconds.setdefault(PEER_ROWS[variant], []).append(float(reply["seconds"]))
        return go

    runs = {"sentence-transformers": peer, "sentence-transformers 1 thread": peer_one_thread,
            "ours": ours(lm, "ours"), "ours bulk": ours_bulk(lm, "ours bulk")}
    models = {"ours": lm}
    if fast is not None:
        if fast.state.backend.name != "onnx-int8":
            print("note: no ONNX export (is the `onnx` package installed?); int8 runs on PyTorch")
        runs["ours int8"] = ours(fast, "ours int8")
        runs["ours int8 bulk"] = ours_bulk(fast, "ours int8 bulk")
        models["ours int8"] = fast
    if bf16 is not None:
        runs["ours bf16"] = ours(bf16, "ours bf16")
        runs["ours bf16 bulk"] = ours_bulk(bf16, "ours bf16 bulk")
        models["ours bf16"] = bf16

    if peers is not None:
        for variant in peers.header["variants"]:
            runs[PEER_ROWS[variant]] = from_peer(variant)
    loads: list[list[float]] = []

    def cold(name: str) -> None:  # each of our runs starts from an empty cache
        if name in models:
            clear_cache(models[name])

    peer()  # warm-up: first-call allocations, lazy imports and ONNX sessions are not throughput
    for name in models:
        runs[name]()
    times = interleaved(runs, args.repeats, before=cold, loads=loads)
    times.update(peer_seconds)  # the peer's own clock around encode, not our round trip to it
    stats_cold = cache_stats(lm)
    warm = interleaved({"ours warm cache": ours(lm, "ours")}, args.repeats)  # the cache holds every sentence now
    stats_warm = cache_stats(lm)
    times.update(warm)

    st_vecs, our_vecs = out["sentence-transformers"], out["ours"]
    max_diff = float(np.abs(st_vecs - our_vecs).max())
    vecs = {"sentence-transformers": st_vecs, **{row: out[row] for row in OURS if row in out}}
    if peers is not None:
        for variant in peers.header["variants"]:
            vecs[PEER_ROWS[variant]] = peers.vectors(variant)
        peers.close()
    half = len(left)
    scores = {name: spearman(v[:half], v[half:], gold) for name, v in vecs.items()}
    diffs = {name: float(np.abs(st_vecs - v).max()) for name, v in vecs.items() if v.shape == st_vecs.shape}

    peer_s = median(times["sentence-transformers"])
    rows = []
    for name, values in times.items():
        m = median(values)
        base = name.replace(" warm cache", "").replace(" 1 thread", "")
        rows.append({"run": name, "median_s": round(m, 3), "sentences_per_s": round(n / m, 1),
                     "vs_sentence_transformers": round(peer_s / m, 2), "runs_s": [round(v, 3) for v in values],
                     "spearman": round(scores.get(base, float("nan")), 5),
                     "max_abs_diff_vs_st_default": diffs.get(base)})
    med = {r["run"]: r["median_s"] for r in rows}
    peer_names = [r for r in med if not r.startswith("ours")]
    ratios = {ours_row: {p: round(med[p] / med[ours_row], 2) for p in peer_names}
              for ours_row in OURS if ours_row in med}
    # Peers by the precision they compute in: OpenVINO's default is bf16 on CPUs with AMX / AVX-512 bf16, so
    # there it is a reduced-precision peer (beside the int8 export), and its fp32 hint is the fp32 one.
    precision = {"sentence-transformers": "fp32"}
    if peers is not None:
        precision.update({PEER_ROWS[v]: p for v, p in peers.header.get("precisions", {}).items()})
    fp32_best = min((p for p in peer_names if precision.get(p) == "fp32"), key=med.__getitem__)
    low_best = min((p for p in peer_names if precision.get(p) not in (None, "fp32")), key=med.__getitem__,
                   default=None)
    flags = set(facts["cpu_flags"])  # type: ignore[arg-type]
    vnni_or_amx = bool(flags & {"avx512_vnni", "avx_vnni", "amx_int8"})
    targets = []
    for path in ("", " bulk"):  # the commands' path (states cached per text) and the corpus path
        full = "ours" + path
        targets += [(f"{full} >= 1.4x sentence-transformers default", full, "sentence-transformers", 1.4),
                    (f"{full} >= 1.3x best fp32 peer ({fp32_best})", full, fp32_best, 1.3)]
        for fast_row in [k + path for k in ("ours int8", "ours bf16") if k + path in med]:  # the fast path's kernels
            if low_best is not None:
                targets.append((f"{fast_row} >= 1.3x best int8/bf16 peer ({low_best}, {precision[low_best]})",
                                fast_row, low_best, 1.3))
            targets.append((f"{fast_row} >= {full} full precision", fast_row, full, 1.0))
            if vnni_or_amx:
                targets.append((f"{fast_row} >= 3.0x sentence-transformers default (VNNI/AMX CPU)", fast_row,
                                "sentence-transformers", 3.0))
    target_rows = [{"target": t, "ratio": round(med[p] / med[o], 2), "needed": need,
                    "met": med[p] / med[o] >= need} for t, o, p, need in targets]
    payload = {
        "benchmark": "throughput", "peer": "sentence-transformers encode (defaults: batch 32, "
        f"{default_threads} threads)", "machine": facts, "sentences": n,
        "distinct_sentences": len(set(sentences)), "repeats": args.repeats, "rows": rows,
        "max_abs_diff_vs_peer": max_diff, "same_vectors_1e-5": max_diff <= 1e-5,
        "backend": lm.state.backend.name, "int8_backend": fast.state.backend.name if fast is not None else None,
        "int8_engine": (None if fast is None else
                        "onnxruntime" if fast.state.backend.name == "onnx-int8" else "torch dynamic quantisation"),
        "spearman_drop_int8": (round(scores["ours"] - scores["ours int8"], 5) if "ours int8" in scores else None),
        "spearman_drop_bf16": (round(scores["ours"] - scores["ours bf16"], 5) if "ours bf16" in scores else None),
        "cache_cold_runs": stats_cold.describe(), "cache_after_warm_runs": stats_warm.describe(),
        "load_avg_per_repeat": loads, "load_avg_end": [round(x, 2) for x in os.getloadavg()],
        "ratios": ratios, "targets": target_rows, "peer_precision": precision, "max_abs_diff_vs_st_default": diffs,
        "peer_venv": None if peers is None else {k: peers.header.get(k) for k in
                                                 ("versions", "notes", "precisions", "skipped",
                                                  "int8_config")},
        "peer_venv_note": peer_note or None,
    }
    path = write(args.out, payload)
    print(f"CPU: {facts['cpu']} (family/model {facts['cpu_family_model']}), {facts['cores']} cores; "
          f"flags: {' '.join(facts['cpu_flags'])}")
    if peers is not None:
        print(f"peer venv: {json.dumps(payload['peer_venv']['versions'])}")
        for variant, note in payload["peer_venv"]["notes"].items():
            print(f"  {PEER_ROWS[variant]}: {note}")
    else:
        print(f"peer venv: {peer_note}")
    print(f"STS-B test, {n:,} sentences ({payload['distinct_sentences']:,} distinct), {args.repeats} interleaved "
          f"runs; load at start {payload['machine']['load_avg']}, at the end {payload['load_avg_end']}")
    print("  every repeat (s); load average (1, 5, 15 min) before each round: "
          + "  ".join(str(x) for x in loads))
    for r in rows:
        print(f"    {r['run']:<32} " + "  ".join(f"{v:7.2f}" for v in r["runs_s"]))
    print("  medians:")
    for r in rows:
        diff = r["max_abs_diff_vs_st_default"]
        print(f"    {r['run']:<32} {r['median_s']:>7.2f} s  {r['sentences_per_s']:>7.1f} sent/s  "
              f"{r['vs_sentence_transformers']:>5.2f}x st default  Spearman {r['spearman']:.4f}"
              + (f"  max|diff| vs st default {diff:.1e}" if diff is not None else ""))
    for ours_row, against in ratios.items():
        print(f"  {ours_row} vs each peer: " + ", ".join(f"{p} {x:.2f}x" for p, x in against.items()))
    print("  targets:")
    for t in target_rows:
        print(f"    {t['target']:<66} {t['ratio']:>5.2f}x  {'met' if t['met'] else 'NOT met'}")
    if fast is not None:
        print(f"  int8 fast path engine: {payload['int8_engine']}")
    print(f"  same vectors as sentence-transformers: max |diff| {max_diff:.2e} (<= 1e-5: {max_diff <= 1e-5})")
    if payload["spearman_drop_int8"] is not None:
        print(f"  int8 Spearman drop vs full precision: {payload['spearman_drop_int8']:+.4f} (target <= 0.005)")
    if payload["spearman_drop_bf16"] is not None:
        print(f"  bf16 Spearman drop vs full precision: {payload['spearman_drop_bf16']:+.4f} (target <= 0.005)")
    print(f"  cache: {stats_warm.describe()}")
    print(f"wrote {path.relative_to(path.parents[2])}")
    return 0 if max_diff <= 1e-5 else 1


if __name__ == "__main__":
    raise SystemExit(main())
