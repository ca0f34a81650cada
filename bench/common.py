"""Shared helpers of the bench/ scripts: STS-B sentences, interleaved repeats, machine facts, JSON out.

Every script measures this project against a named peer in the same run, with
the repeats interleaved (A, B, A, B, ...) so that a noisy neighbour slows both
alike, and reports medians and their ratio.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from tools.models.cpu import cpuinfo  # noqa: E402  (one reader of /proc/cpuinfo; benchmarks record it too)

RESULTS = ROOT / "bench" / "results"
#: STS-B lives beside the project, never inside it.
STSB_TEST = Path(os.environ.get("STSB_DIR", ROOT.parent / "shared" / "data" / "stsb")) / "sts-test.tsv"
os.environ.setdefault("ASSISTANT_DATA_DIR", str(STSB_TEST.parent))  # the `benchmark` command's example reads it
#: Run (untimed) in each conversation before a timed command, so that `again`, `history`
#: and `export` have something to work on.
SETUP_LINE = "compare A cat sat on the mat. | A kitten sat on the rug."


def stsb_pairs(path: Path = STSB_TEST) -> tuple[list[str], list[str], list[float]]:
    """STS-B test: sentence 1 (column 5), sentence 2 (column 6) and the gold score (column 4)."""
    left, right, gold = [], [], []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            cols = line.rstrip("\n").split("\t")
            if len(cols) >= 7:
                left.append(cols[5])
                right.append(cols[6])
                gold.append(float(cols[4]))
    return left, right, gold


def stsb_sentences(path: Path = STSB_TEST) -> list[str]:
    """The 2,758 sentences of the STS-B test split, duplicates kept, in file order."""
    left, right, _ = stsb_pairs(path)
    return left + right


def interleaved(runs: dict[str, Callable[[], object]], repeats: int,
                before: Callable[[str], None] | None = None,
                loads: list[list[float]] | None = None) -> dict[str, list[float]]:
    """Seconds of each run, ``repeats`` times, alternating between the runs; ``before(name)`` is untimed;
    ``loads`` gets the load average at the start of every round."""
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(repeats):
        if loads is not None:
            loads.append([round(x, 2) for x in os.getloadavg()])
        for name, fn in runs.items():
            if before is not None:
                before(name)
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return times


class RssPeak:
    """This process's resident memory, sampled every 20 ms on a thread while the ``with`` block runs: ``growth`` is
    its peak over its size at the start, in bytes (the most the block held at once, whatever it freed before it
    returned; native memory included, which ``tracemalloc`` does not see); ``start`` and ``peak`` in bytes."""

    def __init__(self) -> None:
        self.start = self.peak = rss_bytes()
        self._done = threading.Event()
        self._watch = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self) -> RssPeak:
        self._watch.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._watch.join()
        self.peak = max(self.peak, rss_bytes())

    def _sample(self) -> None:
        while not self._done.wait(0.02):
            self.peak = max(self.peak, rss_bytes())

    @property
    def growth(self) -> int:
        return self.peak - self.start


def rss_bytes(pid: int | str = "self") -> int:
    """Resident memory of process ``pid`` (this one by default), in bytes: ``/proc/PID/statm``'s second field,
    in pages."""
    with open(f"/proc/{pid}/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def rss_mb(pid: int | str = "self") -> float:
    """:func:`rss_bytes` in MB."""
    return rss_bytes(pid) / 2**20


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0-100) by linear interpolation."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


#: The CPU flags that decide which int8 / fp32 kernels ONNX Runtime, oneDNN and OpenVINO pick.
KERNEL_FLAGS = frozenset({"avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512_vnni", "avx_vnni",
                          "avx512_bf16", "avx512_fp16", "amx_tile", "amx_int8", "amx_bf16", "asimd",
                          "asimddp", "sve", "i8mm"})


def cpu_flags() -> set[str]:
    """Every flag of this CPU (``flags`` on x86, ``Features`` on ARM)."""
    info = cpuinfo()
    return set((info.get("flags") or info.get("Features") or "").split())


def machine() -> dict[str, object]:
    """What the numbers were measured on: date, CPU, cores, load, library versions."""
    import torch

    cpu = platform.processor() or platform.machine()
    info = cpuinfo()
    cpu = info.get("model name", cpu)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {
        "date": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": cpu,
        "cpu_family_model": f"{info.get('cpu family', '?')}/{info.get('model', '?')}",
        "cpu_flags": sorted(cpu_flags() & KERNEL_FLAGS),
        "cores": cores,
        "load_avg": [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None,
        "python": platform.python_version(),
        "torch": torch.__version__,
        "torch_threads_default": torch.get_num_threads(),
    }


def write(name: str, payload: dict[str, object]) -> Path:
    """Write ``bench/results/<name>.json`` and return its path."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(payload, indent=1, default=str) + "\n")
    return path


def command_bench_args(description: str, argv: list[str] | None = None):
    """The options every per-command benchmark takes: repeats, heavy repeats, a command subset."""
    import argparse

    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--heavy-repeats", type=int, default=3, help="repeats for commands slower than 3 s")
    parser.add_argument("--only", default="", help="comma-separated command names")
    return parser.parse_args(argv)


def quiet_libraries() -> None:
    """No progress bars or info logs from transformers / sentence-transformers in the output."""
    import logging

    for noisy in ("transformers", "sentence_transformers", "httpx", "gradio"):
        logging.getLogger(noisy).setLevel(logging.ERROR)
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        hf_logging.set_verbosity_error()
    except ImportError:
        pass


def free_port() -> int:
    """A free 127.0.0.1 port for a server this benchmark starts."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve_in_process(hub, settings):
    """The app as `make run` builds it (``assistant.app.build``), served in this process on a free 127.0.0.1 port:
    ``(demo, port)``; the caller closes ``demo``."""
    from assistant.app import build, launch_options

    demo = build(hub, settings)
    port = free_port()
    demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True,
                **launch_options(settings))
    return demo, port


def start_app(port: int, env: dict[str, str] | None = None) -> subprocess.Popen:
    """The app as `make run` starts it, on ``port`` with ``env`` added, once its page answers; the caller stops it."""
    proc = subprocess.Popen([sys.executable, "-m", "assistant", "--host", "127.0.0.1", "--port", str(port)],
                            cwd=ROOT, env={**os.environ, **(env or {})}, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.time() + 180
    while time.time() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2)
            return proc
        except OSError:
            time.sleep(0.5)
    proc.kill()
    raise RuntimeError("the app did not start within 180 s")
