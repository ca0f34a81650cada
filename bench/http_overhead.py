"""Per-command latency over HTTP: the ``run`` endpoint against a no-op endpoint of the same app.

The app (``assistant.app.build``) is served in this process on a free 127.0.0.1
port; a ``gradio_client.Client`` calls ``/run`` with each command's first example
and ``/noop`` (same queue and concurrency group, no work) alternately. The no-op
is Gradio's own share of a request (queue, SSE, JSON); ``run`` minus the
command's own ``elapsed_ms`` is the app's share (parsing, rendering the JSON,
Gradio). The encoding cache is cleared before each ``run`` call.

    .venv/bin/python bench/http_overhead.py [--repeats 7] [--only compare,word]
"""

from __future__ import annotations

import os
import sys
import time

# This file is named like the standard library's `http`: keep its folder off the import path.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]
sys.path.insert(0, os.path.dirname(_HERE))

from bench.common import command_bench_args, machine, percentile, quiet_libraries, serve_in_process, write


def main(argv: list[str] | None = None) -> int:
    args = command_bench_args(__doc__.split("\n")[0], argv)
    quiet_libraries()
    import logging

    logging.getLogger("assistant").setLevel(logging.CRITICAL)
    from gradio_client import Client

    from assistant.commands.registry import COMMANDS
    from tools.core.config import Settings
    from tools.encoding.cache import clear_cache
    from tools.models.hub import ModelHub

    settings = Settings.from_env()
    hub = ModelHub(settings)
    lm = hub.get()
    demo, port = serve_in_process(hub, settings)
    rows = []
    try:
        client = Client(f"http://127.0.0.1:{port}/", verbose=False)
        only = {x.strip() for x in args.only.split(",") if x.strip()}
        for _ in range(3):  # warm the connection and the endpoints
            client.predict("help", "", api_name="/noop")
        for spec in [s for s in COMMANDS if not only or s.name in only]:
            line = spec.examples[0]
            clear_cache(lm)
            start = time.perf_counter()
            reply = client.predict(line, "", api_name="/run")
            repeats = args.heavy_repeats if time.perf_counter() - start > 3 else args.repeats
            run_s, noop_s, own_ms = [], [], []
            for _ in range(repeats):
                clear_cache(lm)
                start = time.perf_counter()
                reply = client.predict(line, "", api_name="/run")
                run_s.append(time.perf_counter() - start)
                own_ms.append(float(reply.get("elapsed_ms") or 0.0))
                start = time.perf_counter()
                client.predict(line, "", api_name="/noop")
                noop_s.append(time.perf_counter() - start)
            run50, noop50, own50 = percentile(run_s, 50) * 1000, percentile(noop_s, 50) * 1000, percentile(own_ms, 50)
            row = {"command": spec.name, "line": line, "ok": bool(reply.get("ok")), "repeats": repeats,
                   "run_p50_ms": round(run50, 1), "run_p95_ms": round(percentile(run_s, 95) * 1000, 1),
                   "noop_p50_ms": round(noop50, 1), "noop_p95_ms": round(percentile(noop_s, 95) * 1000, 1),
                   "command_p50_ms": round(own50, 1), "app_share_p50_ms": round(run50 - own50, 1),
                   "run_over_noop": round(run50 / noop50, 2)}
            rows.append(row)
            print(f"  {spec.name:<10} run p50 {row['run_p50_ms']:>8.1f} ms p95 {row['run_p95_ms']:>8.1f} | "
                  f"noop p50 {row['noop_p50_ms']:>6.1f} | command itself {row['command_p50_ms']:>8.1f} | "
                  f"app+Gradio {row['app_share_p50_ms']:>6.1f} ms | {row['run_over_noop']:>6.2f}x noop"
                  + ("" if row["ok"] else "  (error reply)"), flush=True)
    finally:
        demo.close()
    payload = {"benchmark": "http", "peer": "a no-op gr.api endpoint in the same app (api_name=noop)",
               "model": lm.name, "machine": machine(), "rows": rows}
    path = write("http_overhead", payload)
    print(f"wrote {path.relative_to(path.parents[2])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
