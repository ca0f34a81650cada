"""Does the server stop growing? Visitors come and go in legs; memory and disk are measured after each.

The page is served inside this process (as tests/conftest.py's ``serve`` does), so that besides the
process's RSS each leg reads what Python itself holds: traced memory (``tracemalloc``, one frame, on
from before the first visitor), the number of live objects after a full collection, the visitors'
conversations still alive, and Gradio's per-session records. Visitors come through the page in
headless Chromium for the first ``--page-legs`` legs and over HTTP with the page's own events after
(bench/visiting.py); each closes its page, and a leg is measured once every departed visitor's
session has been freed (``--grace`` seconds after its page closed) and a few seconds more. Disk: the
downloads folders, Gradio's file cache and the conversations kept for reloads (kept for
``ASSISTANT_SESSION_IDLE_S``, an hour here unless ``--idle``).

Prints the machine, the load, and per leg: RSS, traced memory, live objects and disk, each also per
departed visitor of that leg; with ``--runs N`` (each run a fresh process) every run and the medians.

    PYTHONPATH=. .venv/bin/python bench/soak.py --legs 3 --visitors 30 --page-legs 3 --runs 3
    PYTHONPATH=. .venv/bin/python bench/soak.py --legs 6 --visitors 100 --page-legs 1 --wave 4
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import ROOT, machine, quiet_libraries, rss_mb, serve_in_process, write  # noqa: E402
from visiting import http_visitors, page_visitors  # noqa: E402


def folder_mb(folder: Path, prefix: str = "") -> float:
    total = 0
    for child in folder.iterdir() if folder.is_dir() else ():
        if prefix and not child.name.startswith(prefix):
            continue
        paths = [child] if child.is_file() else child.rglob("*")
        total += sum(p.stat().st_size for p in paths if p.is_file())
    return total / 2**20


def gradio_records(demo) -> dict[str, int]:
    """Gradio's per-session records: state entries, the queue's message queues, event-id sets, analytics."""
    queue = demo._queue
    return {"state": len(demo.state_holder.session_data), "messages": len(queue.pending_messages_per_session),
            "event_ids": len(queue.pending_event_ids_session), "analytics": len(queue.event_analytics)}


def settle(demo, grace: float, extra: float = 3.0, limit: float = 120.0) -> float:
    """Wait until every departed visitor's session is freed, then ``extra`` seconds; returns seconds waited."""
    start = time.monotonic()
    time.sleep(grace)
    while demo.visitors.sessions() and time.monotonic() - start < limit:
        time.sleep(0.5)
    time.sleep(extra)
    return time.monotonic() - start


def measure(demo, temp: Path, conversations: Path) -> dict[str, float]:
    from assistant.session import Session

    rss = rss_mb()  # before the collection below: what the server holds by itself
    gc.collect()
    traced, _ = tracemalloc.get_traced_memory()
    return {"rss_mb": round(rss, 1), "traced_kb": round(traced / 1024, 1), "objects": len(gc.get_objects()),
            "sessions_alive": sum(type(o) is Session for o in gc.get_objects()) - 1,  # less the page's template
            "fds": len(os.listdir("/proc/self/fd")),
            "downloads_mb": round(folder_mb(temp, "assistant-downloads-"), 2),
            "gradio_cache_mb": round(folder_mb(temp / "gradio"), 2),
            "conversations_mb": round(folder_mb(conversations), 2),
            "conversations": sum(1 for _ in conversations.iterdir()) if conversations.is_dir() else 0,
            **gradio_records(demo), "load": round(os.getloadavg()[0], 2)}


def one_run(args: argparse.Namespace) -> dict[str, object]:
    """One server in this process, ``args.legs`` legs of ``args.visitors`` visitors; every leg's row."""
    temp = Path(tempfile.mkdtemp(prefix="bench-soak-"))
    os.environ["GRADIO_TEMP_DIR"] = str(temp / "gradio")
    tempfile.tempdir = str(temp)
    quiet_libraries()
    from tools.core.config import Settings
    from tools.models.hub import ModelHub

    env = Settings.from_env()
    settings = Settings(**{**env.__dict__, "closed_grace_s": args.grace, "session_idle_s": args.idle,
                           "conversation_dir": str(temp / "conversations"),
                           "data_dir": os.environ.get("ASSISTANT_DATA_DIR", "")})
    hub = ModelHub(settings)
    hub.get(settings.model)
    demo, port = serve_in_process(hub, settings)
    url = f"http://127.0.0.1:{port}/"
    conversations = temp / "conversations"
    rows = []
    try:
        page_visitors(url, 2, 2)  # warm-up: every command's code paths, the capped caches, the browser's own
        tracemalloc.start(1)
        settle(demo, args.grace)
        rows.append({"leg": 0, "visitors": 0, "via": "warm-up", **measure(demo, temp, conversations)})
        for leg in range(1, args.legs + 1):
            via = "page" if leg <= args.page_legs else "http"
            start = time.perf_counter()
            drive = page_visitors if via == "page" else http_visitors
            counts = drive(url, args.visitors, args.wave)
            wall = time.perf_counter() - start
            settle(demo, args.grace)
            row = {"leg": leg, "visitors": args.visitors, "via": via, "wall_s": round(wall, 1),
                   "sent": counts.sent, "received": counts.received, "error_replies": counts.errors,
                   **measure(demo, temp, conversations)}
            before = rows[-1]
            for key, unit in (("rss_mb", 1024), ("traced_kb", 1), ("objects", 1), ("conversations_mb", 1024),
                              ("gradio_cache_mb", 1024), ("downloads_mb", 1024)):
                name = {"rss_mb": "rss_kb", "traced_kb": "traced_kb", "objects": "objects"}.get(key, key[:-3] + "_kb")
                row[f"{name}_per_visitor"] = round((row[key] - before[key]) * unit / args.visitors, 2)  # type: ignore
            rows.append(row)
            print(json.dumps(row), file=sys.stderr, flush=True)
    finally:
        tracemalloc.stop()
        demo.close()
        shutil.rmtree(temp, ignore_errors=True)  # measured above, then gone
    return {"rows": rows, "trim_memory": settings.trim_memory, "grace_s": args.grace, "idle_s": args.idle}


def report(runs: list[dict]) -> None:
    for n, run in enumerate(runs, start=1):
        print(f"\nrun {n} (trim_memory={run['trim_memory']}, grace {run['grace_s']} s, idle {run['idle_s']} s)")
        print(f"{'leg':>3} {'via':8} {'visitors':>8} {'replies':>9} {'RSS MB':>8} {'KB/vis':>8} {'traced KB':>10} "
              f"{'KB/vis':>7} {'objects':>9} {'obj/vis':>8} {'alive':>5} {'conv MB':>8} {'KB/vis':>7} "
              f"{'gradio MB':>9} {'dl MB':>6} {'fds':>4} {'records':>20} {'load':>5}")
        for r in run["rows"]:
            records = f"{r['state']}/{r['messages']}/{r['event_ids']}/{r['analytics']}"
            replies = f"{r.get('received', '-')}/{r.get('sent', '-')}"
            print(f"{r['leg']:>3} {r['via']:8} {r['visitors']:>8} {replies:>9} "
                  f"{r['rss_mb']:>8} {r.get('rss_kb_per_visitor', ''):>8} {r['traced_kb']:>10} "
                  f"{r.get('traced_kb_per_visitor', ''):>7} {r['objects']:>9} {r.get('objects_per_visitor', ''):>8} "
                  f"{r['sessions_alive']:>5} {r['conversations_mb']:>8} {r.get('conversations_kb_per_visitor', ''):>7} "
                  f"{r['gradio_cache_mb']:>9} {r['downloads_mb']:>6} {r['fds']:>4} {records:>20} {r['load']:>5}")
    last = [run["rows"][-1] for run in runs]
    half = len(runs[0]["rows"]) // 2
    print(f"\nlast leg, medians of {len(runs)}: RSS {statistics.median(r['rss_kb_per_visitor'] for r in last):.1f} KB, "
          f"traced {statistics.median(r['traced_kb_per_visitor'] for r in last):.2f} KB, "
          f"objects {statistics.median(r['objects_per_visitor'] for r in last):.1f} per departed visitor")
    for n, run in enumerate(runs, start=1):
        rows = run["rows"]
        mid, end = rows[half]["rss_mb"], rows[-1]["rss_mb"]
        print(f"run {n}: RSS at the half (leg {rows[half]['leg']}) {mid} MB, at the end {end} MB: "
              f"{100 * (end - mid) / mid:+.2f}%; largest over the second half "
              f"{max(r['rss_mb'] for r in rows[half:])} MB")
    print(f"load average after: {os.getloadavg()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--legs", type=int, default=3)
    parser.add_argument("--visitors", type=int, default=30, help="visitors per leg")
    parser.add_argument("--page-legs", type=int, default=3, help="legs through the page (the rest over HTTP)")
    parser.add_argument("--wave", type=int, default=3, help="visitors at once")
    parser.add_argument("--grace", type=float, default=2.0, help="ASSISTANT_CLOSED_GRACE_S for this run")
    parser.add_argument("--idle", type=float, default=3600.0, help="ASSISTANT_SESSION_IDLE_S for this run")
    parser.add_argument("--runs", type=int, default=1, help="fresh processes, one after another")
    parser.add_argument("--name", default="soak", help="bench/results/<name>.json")
    parser.add_argument("--write", action="store_true", help="with --show: write them to bench/results/<name>.json")
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)  # a single run, its JSON on stdout
    parser.add_argument("--show", nargs="+", default=[], metavar="JSON",
                        help="print the report of runs saved earlier (a --one run's output or a results file)")
    args = parser.parse_args()
    if args.show:
        loaded = [json.loads(Path(f).read_text().strip().splitlines()[-1]) for f in args.show]  # a run's last line
        runs = [run for item in loaded for run in item.get("runs", [item])]
        report(runs)
        if args.write:
            write(args.name, {"machine": machine(), "args": vars(args), "runs": runs, "load_after": os.getloadavg()})
        return
    if args.one:
        print(json.dumps(one_run(args)))
        return
    facts = machine()
    print(f"machine: {json.dumps(facts)}", flush=True)
    runs = []
    for _ in range(args.runs):
        argv = [a for a in sys.argv[1:]]
        out = subprocess.run([sys.executable, __file__, *argv, "--one"], cwd=ROOT, capture_output=True, text=True,
                             env={**os.environ, "PYTHONPATH": str(ROOT)})
        if out.returncode != 0:
            sys.exit(out.stderr[-3000:])
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    report(runs)
    write(args.name, {"machine": facts, "args": vars(args), "runs": runs, "load_after": os.getloadavg()})


if __name__ == "__main__":
    main()
