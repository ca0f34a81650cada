"""Load test: N concurrent gradio_client sessions drive a live server through every command.

The script starts ``python -m assistant serve`` on a free 127.0.0.1 port (a subprocess
it also stops), warms every command up, then runs N sessions at once, each sending M
commands round-robin through a mix that holds every command of the table, over the
``/run`` HTTP API. It prints successes, clear refusals, errors, p50/p95 latency,
throughput and the server's resident memory (RSS) before and after.

Targets: zero errors; RSS growth under 10% over 1,000 commands after warm-up.

    python bench/load.py                      # 16 sessions x 64 commands = 1,024 commands
    python bench/load.py --sessions 4 --commands 5 --concurrency 1

An *error* is anything but a normal reply or a clear refusal: a transport failure,
the internal-error reply ("Something went wrong"), or a command that gave up at the
time limit. The `mask` command needs a masked-LM model; the script builds a tiny
random one in a temporary model root so that `mask` runs here without a network.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
STSB_DIR = ROOT.parent / "shared" / "data" / "stsb"
from bench.common import free_port

#: Light versions of the commands whose first example is heavy (a few seconds each on 2 cores).
LIGHT = {
    "benchmark": "benchmark --data stsb-dev --sample 40 --pool mean",
    "vocab": "vocab --n 600",
    "mask": "mask The [MASK] sat on the mat. --model tiny-mlm",
    "model": "model minilm",
    "export": "export json",
    "corpus": "corpus load reviews.csv --name reviews",  # the corpus the other corpus commands use
}
#: A small file of texts the server may read, for the corpus commands.
REVIEWS = ["My parcel arrived late", "The courier lost my package", "I never got my refund",
           "They refused to return my money", "The fabric tore after two washes", "Sturdy and well made"]


def command_mix() -> list[str]:
    """One line per command of the table: its page example, or a lighter variant from :data:`LIGHT`."""
    from assistant.commands.registry import COMMANDS

    return [LIGHT.get(spec.name, spec.examples[0]) for spec in COMMANDS]




def rss_mb(pid: int) -> float:
    """Resident memory of a process and its children, in MB (Linux /proc)."""
    total = 0
    pids = [pid]
    while pids:
        current = pids.pop()
        try:
            status = Path(f"/proc/{current}/status").read_text()
            total += next(int(l.split()[1]) for l in status.splitlines() if l.startswith("VmRSS:"))
            for task in Path(f"/proc/{current}/task").iterdir():
                children = (task / "children").read_text().split()
                pids.extend(int(c) for c in children)
        except (FileNotFoundError, ProcessLookupError, StopIteration):
            continue
    return total / 1024


def build_tiny_mlm(folder: Path) -> None:
    """A random 2-layer BertForMaskedLM with a small WordPiece vocabulary (for `mask` without a network)."""
    import torch
    from transformers import BertConfig, BertForMaskedLM, BertTokenizerFast

    folder.mkdir(parents=True)
    words = "the a cat dog sat on mat rug house car ran big small and is was in of to it".split()
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", ","] + words
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n")
    torch.manual_seed(0)
    config = BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=64)
    BertForMaskedLM(config).save_pretrained(folder)
    BertTokenizerFast(vocab=str(folder / "vocab.txt"), model_max_length=64).save_pretrained(folder)


class Server:
    """``python -m assistant serve`` on a free port, started and stopped by this object."""

    def __init__(self, concurrency: int, extra: list[str], log_path: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        self.models = Path(tempfile.mkdtemp(prefix="load-models-"))
        build_tiny_mlm(self.models / "tiny-mlm")
        (self.models / "reviews.csv").write_text("review\n" + "\n".join(f"{t} (order {i})" for i in range(40)
                                                                      for t in REVIEWS) + "\n", encoding="utf-8")
        env = {**os.environ, "PYTHONPATH": str(ROOT), "GRADIO_ANALYTICS_ENABLED": "False", "HF_HUB_OFFLINE": "1",
               "ASSISTANT_MODEL_ROOTS": str(self.models), "ASSISTANT_DATA_DIR": f"{STSB_DIR}:{self.models}",
               "ASSISTANT_CORPUS_DIR": str(self.models / "corpora")}
        self.log = open(log_path, "w")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "assistant", "--concurrency", str(concurrency), *extra, "serve",
             "--host", "127.0.0.1", "--port", str(self.port)],
            cwd=ROOT, env=env, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)

    def wait_ready(self, timeout: float = 300) -> None:
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the server exited with status {self.process.returncode}; see {self.log.name}")
            try:
                with urllib.request.urlopen(self.url, timeout=5) as response:
                    if response.status == 200:
                        return
            except OSError:
                time.sleep(0.5)
        raise RuntimeError(f"the server did not answer within {timeout:.0f} s")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        self.log.close()
        shutil.rmtree(self.models, ignore_errors=True)


@dataclass
class Tally:
    """Outcomes of every command, safe to fill from several threads."""

    latencies: list[float] = field(default_factory=list)
    ok: int = 0
    refused: int = 0
    errors: list[str] = field(default_factory=list)
    refused_commands: set[str] = field(default_factory=set)  # the verbs that answered with a clear refusal
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, line: str, seconds: float, data: dict | None, failure: str | None) -> None:
        with self.lock:
            self.latencies.append(seconds)
            if failure is not None:
                self.errors.append(f"{line[:60]}: {failure}")
            elif data.get("ok"):
                self.ok += 1
            elif "Something went wrong" in (data.get("error") or "") or "gave up" in (data.get("error") or ""):
                self.errors.append(f"{line[:60]}: {data.get('error')}")
            else:
                self.refused += 1
                self.refused_commands.add(line.split()[0])


def run_session(url: str, lines: list[str], tally: Tally, start: threading.Barrier) -> None:
    from gradio_client import Client

    client = Client(url, verbose=False)
    start.wait()
    for line in lines:
        begin = time.perf_counter()
        data, failure = None, None
        try:
            data = client.predict(line, "", api_name="/run")
        except Exception as exc:  # a transport failure is exactly what this script counts
            failure = f"{type(exc).__name__}: {str(exc)[:200]}"
        tally.add(line, time.perf_counter() - begin, data, failure)


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1] if len(values) > 1 else values[0]


def drive(url: str, sessions: int, commands: int, mix: list[str], tally: Tally) -> float:
    """``sessions`` concurrent clients, each sending ``commands`` lines round-robin; the wall time."""
    plans = [[mix[(s + i) % len(mix)] for i in range(commands)] for s in range(sessions)]
    barrier = threading.Barrier(sessions + 1)
    threads = [threading.Thread(target=run_session, args=(url, plan, tally, barrier), daemon=True)
               for plan in plans]
    for t in threads:
        t.start()
    barrier.wait()
    begin = time.perf_counter()
    for t in threads:
        t.join()
    return time.perf_counter() - begin


def measure(sessions: int, commands: int, concurrency: int, warmup: int, extra: list[str],
            log_path: Path) -> dict:
    """Start a server, warm it up, drive ``sessions`` x ``commands``, and return the numbers."""
    from gradio_client import Client

    mix = command_mix()
    server = Server(concurrency, extra, log_path)
    try:
        server.wait_ready()
        warm = Client(server.url, verbose=False)
        warm_tally = Tally()
        for _ in range(warmup):
            for line in mix:
                begin = time.perf_counter()
                try:
                    data, failure = warm.predict(line, "", api_name="/run"), None
                except Exception as exc:
                    data, failure = None, f"{type(exc).__name__}: {exc}"
                warm_tally.add(line, time.perf_counter() - begin, data, failure)
        if warmup:  # then the whole mix in every session at once, so the baseline has seen concurrency
            together = Tally()
            drive(server.url, sessions, len(mix), mix, together)
            warm_tally.errors += together.errors
        rss_before = rss_mb(server.process.pid)
        tally = Tally()
        wall = drive(server.url, sessions, commands, mix, tally)
        rss_after = rss_mb(server.process.pid)
    finally:
        server.stop()
    total = sessions * commands
    return {
        "sessions": sessions, "commands_per_session": commands, "commands": total, "concurrency": concurrency,
        "mix": mix, "warmup_errors": warm_tally.errors, "refused_in_warmup": sorted(warm_tally.refused_commands),
        "ok": tally.ok, "refused": tally.refused, "errors": len(tally.errors), "error_samples": tally.errors[:10],
        "p50_s": round(percentile(tally.latencies, 50), 3), "p95_s": round(percentile(tally.latencies, 95), 3),
        "wall_s": round(wall, 1), "throughput_per_s": round(total / wall, 2),
        "rss_before_mb": round(rss_before, 1), "rss_after_mb": round(rss_after, 1),
        "rss_growth_pct": round(100 * (rss_after - rss_before) / rss_before, 2),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", "-n", type=int, default=16, help="concurrent sessions (default 16)")
    parser.add_argument("--commands", "-m", type=int, default=64, help="commands per session (default 64)")
    parser.add_argument("--concurrency", type=int, default=2, help="the server's --concurrency (default 2)")
    parser.add_argument("--warmup", type=int, default=1,
                        help="rounds of the mix before RSS is measured: one alone, then the sessions at once")
    parser.add_argument("--json", action="store_true", help="print the numbers as JSON")
    parser.add_argument("--log", default=str(Path(tempfile.gettempdir()) / "assistant-load-server.log"),
                        help="where the server's output goes")
    parser.add_argument("server_args", nargs="*", help="extra flags for `python -m assistant` (after --)")
    args = parser.parse_args(argv)
    numbers = measure(args.sessions, args.commands, args.concurrency, args.warmup, args.server_args,
                      Path(args.log))
    if args.json:
        print(json.dumps(numbers, indent=1))
    else:
        print(f"{numbers['sessions']} sessions x {numbers['commands_per_session']} commands "
              f"({numbers['commands']} in all, server concurrency {numbers['concurrency']}), "
              f"mix of {len(numbers['mix'])} commands")
        print(f"successes {numbers['ok']}, clear refusals {numbers['refused']}, errors {numbers['errors']}")
        for sample in numbers["error_samples"]:
            print(f"  error: {sample}")
        print(f"latency p50 {numbers['p50_s']:.3f} s, p95 {numbers['p95_s']:.3f} s; "
              f"throughput {numbers['throughput_per_s']:.2f} commands/s over {numbers['wall_s']:.1f} s")
        print(f"server RSS {numbers['rss_before_mb']:.0f} MB after warm-up -> {numbers['rss_after_mb']:.0f} MB "
              f"({numbers['rss_growth_pct']:+.1f}%)")
    return 1 if numbers["errors"] or numbers["warmup_errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
