"""Many visitors through the page itself: open, run five heavy commands, close the tab.

Each visitor is a fresh browser context in headless Chromium (the helpers of
tests/browsing.py), driven through the page's own events, in concurrent waves. The server
is a fresh `python -m assistant` run twice in one run of this script:

- ``frees``: this app as shipped, but a closed page's conversation freed after 2 s
  (ASSISTANT_CLOSED_GRACE_S=2) so the measurement need not wait the default minute;
- ``keeps`` (the peer): the same app keeping every departed visitor
  (ASSISTANT_CLOSED_GRACE_S=1e9), as Gradio alone does for an hour.

Prints replies received vs sent (must be equal), p50/p95 per command, server RSS after a
warm-up visitor and after all visitors left, the RSS kept per departed visitor, open file
handles, downloads/temp folder size, and the load average.

    .venv/bin/python bench/visitors.py [--visitors 200] [--wave 4]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

from common import free_port, machine, median, percentile, rss_mb, start_app, write
from visiting import in_waves

from tests.browsing import DONE

#: Five heavy commands each visitor runs.
COMMANDS = (
    "attend The cat sat on the mat because it was tired.",
    "attend The bank raised its rates. | We sat on the river bank.",
    "word bank | We sat on the river bank. | The bank approved my loan.",
    "project The bank of the river. | The bank raised its rates. | A cat sat on the mat.",
    "selfattn The cat sat on the mat because it was tired.",
)


def open_files(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def folder_mb(*folders: Path) -> float:
    total = 0
    for folder in folders:
        for path in folder.rglob("*") if folder.exists() else ():
            if path.is_file():
                total += path.stat().st_size
    return total / 2**20


async def visitor(browser, url: str, times: dict[str, list[float]], counts: dict[str, int]) -> None:
    """One visitor: open the page, run the commands one after another, close the tab."""
    context = await browser.new_context()
    page = await context.new_page()
    await page.goto(url)
    await page.wait_for_function("window.assistant && window.assistant.loaded === true")  # as tests.browsing.ready
    for n, line in enumerate(COMMANDS):
        box = page.locator("#command-box textarea")
        await box.fill(line)
        start = time.perf_counter()
        await box.press("Enter")
        counts["sent"] += 1
        try:
            await page.bring_to_front()
            await page.wait_for_function("n => document.querySelectorAll(\"" + DONE + "\").length > n", arg=n,
                                         timeout=300_000)
        except Exception:  # a lost reply: counted, and this visitor leaves
            break
        times.setdefault(line.split()[0], []).append((time.perf_counter() - start) * 1000)
        reply = page.locator("#conversation .reply").nth(n)
        counts["received"] += 1
        if "error" in (await reply.get_attribute("class") or ""):
            counts["errors"] += 1
    await context.close()


async def drive(url: str, visitors: int, wave: int) -> tuple[dict[str, list[float]], dict[str, int]]:
    times: dict[str, list[float]] = {}
    counts = {"sent": 0, "received": 0, "errors": 0}
    await in_waves(visitors, wave, lambda browser: visitor(browser, url, times, counts))
    return times, counts


def measure(mode: str, grace: str, visitors: int, wave: int) -> dict[str, object]:
    temp = Path(tempfile.mkdtemp(prefix=f"bench-visitors-{mode}-"))
    env = {"ASSISTANT_CLOSED_GRACE_S": grace, "GRADIO_TEMP_DIR": str(temp / "gradio"), "TMPDIR": str(temp)}
    port = free_port()
    proc = start_app(port, env)
    url = f"http://127.0.0.1:{port}/"
    try:
        asyncio.run(drive(url, 1, 1))  # warm-up: every command's code paths and caches
        time.sleep(float(grace) + 6 if float(grace) < 100 else 6)
        before = rss_mb(proc.pid)
        files_before = open_files(proc.pid)
        start = time.perf_counter()
        times, counts = asyncio.run(drive(url, visitors, wave))
        wall = time.perf_counter() - start
        time.sleep(float(grace) + 6 if float(grace) < 100 else 6)  # let the sweeper run
        after = rss_mb(proc.pid)
        row = {
            "mode": mode, "visitors": visitors, "wave": wave, "wall_s": round(wall, 1),
            "sent": counts["sent"], "received": counts["received"], "error_replies": counts["errors"],
            "rss_before_mb": round(before, 1), "rss_after_mb": round(after, 1),
            "kept_per_visitor_mb": round((after - before) / visitors, 3),
            "open_files_before": files_before, "open_files_after": open_files(proc.pid),
            "temp_mb": round(folder_mb(temp), 2),
            "ms": {verb: {"p50": round(median(v), 1), "p95": round(percentile(v, 95), 1),
                          "all": [round(x, 1) for x in v]} for verb, v in times.items()},
        }
    finally:
        proc.terminate()
        proc.wait(30)
        shutil.rmtree(temp, ignore_errors=True)  # the server's downloads and Gradio's cache: measured, then gone
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--visitors", type=int, default=200)
    parser.add_argument("--wave", type=int, default=4, help="visitors at once")
    parser.add_argument("--json", action="store_true",
                        help="a short check: only the app as shipped, its row as JSON, "
                        "nothing written to bench/results")
    args = parser.parse_args()
    if args.json:
        print(json.dumps(measure("frees", "2", args.visitors, args.wave)))
        return
    facts = machine()
    print(f"machine: {facts}")
    rows = []
    for mode, grace in (("frees", "2"), ("keeps", "1e9")):
        row = measure(mode, grace, args.visitors, args.wave)
        rows.append(row)
        print(f"\n[{mode}] {row['visitors']} visitors in waves of {row['wave']} ({row['wall_s']} s): "
              f"replies {row['received']}/{row['sent']} ({row['error_replies']} error replies)")
        print(f"  RSS {row['rss_before_mb']} -> {row['rss_after_mb']} MB: "
              f"{row['kept_per_visitor_mb'] * 1024:.0f} KB kept per departed visitor")
        print(f"  open files {row['open_files_before']} -> {row['open_files_after']}; temp folders {row['temp_mb']} MB")
        for verb, ms in row["ms"].items():
            print(f"  {verb:9s} p50 {ms['p50']:8.1f} ms  p95 {ms['p95']:8.1f} ms  all {ms['all']}")
    frees, keeps = rows
    if keeps["kept_per_visitor_mb"] > 0:
        print(f"\nkept per departed visitor: frees / keeps = "
              f"{frees['kept_per_visitor_mb'] / keeps['kept_per_visitor_mb']:.2f}")
    print(f"load average after: {os.getloadavg()}")
    write("visitors", {"machine": facts, "rows": rows, "load_after": os.getloadavg()})


if __name__ == "__main__":
    main()
