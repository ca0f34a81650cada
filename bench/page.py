"""The page as a person feels it, in headless Chromium against a fresh `python -m assistant`.

Prints, in one run:
- Enter -> chart drawn for `compare` (p50, p95, every repeat), the command's own time (the
  reply's footer), and the same page's round trip for a command with no chart (`help compare`),
  so the page's share is visible;
- a long conversation (`--turns`, default 50, of `attend`): bytes each command sends (request
  bodies) and receives (every byte the page's connections received while it ran), and the reply
  time near the start (turns 2-4) against the end (the last three turns).

    .venv/bin/python bench/page.py [--repeats 30] [--turns 50]
"""

from __future__ import annotations

import argparse
import os
import re

from common import free_port, machine, median, percentile, start_app, write

from tests.browsing import Watch, ask, launch

COMPARE = "compare A man plays guitar {i}. | Someone is playing an instrument."
NO_CHART = "help compare"
ATTEND = "attend The cat sat on the mat number {i}"






def felt(page, line: str) -> tuple[float, float]:
    """(Enter -> reply drawn in ms, as the page measured it; the command's own ms from the footer)."""
    reply = ask(page, line)
    total = float(reply.node.get_attribute("data-ms"))
    footer = reply.node.locator(".reply-footer").inner_text()
    own = float(re.search(r"([\d,.]+) ms", footer).group(1).replace(",", ""))
    return total, own


def settle(page, received: list[int], quiet_ms: int = 300) -> None:
    """Wait until no byte has arrived for ``quiet_ms``, so each turn is charged its own bytes."""
    last = -1
    while received[0] != last:
        last = received[0]
        page.wait_for_timeout(quiet_ms)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--turns", type=int, default=50)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    facts = machine()
    print(f"machine: {facts}")
    port = free_port()
    proc = start_app(port)
    try:
        with sync_playwright() as p:
            browser = launch(p)
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            watch = Watch.on(page)
            page.goto(f"http://127.0.0.1:{port}/")
            page.wait_for_selector("#command-box textarea")
            for i in range(3):  # warm-up: model, caches, the chart library
                ask(page, COMPARE.format(i=-i))
                ask(page, NO_CHART)
            compare, own, plain = [], [], []
            for i in range(args.repeats):  # interleaved: a noisy neighbour slows both alike
                total, ms = felt(page, COMPARE.format(i=i))
                compare.append(total)
                own.append(ms)
                plain.append(felt(page, NO_CHART)[0])
            print(f"compare, Enter -> chart drawn (ms): p50 {median(compare):.0f}, p95 {percentile(compare, 95):.0f}; "
                  f"all: {[round(x) for x in compare]}")
            print(f"compare, the command's own time (ms): p50 {median(own):.0f}; all: {[round(x) for x in own]}")
            print(f"`{NO_CHART}` (no chart), Enter -> reply shown (ms): p50 {median(plain):.0f}, "
                  f"p95 {percentile(plain, 95):.0f}; all: {[round(x) for x in plain]}")
            page.close()

            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            watch = Watch.on(page)
            cdp = page.context.new_cdp_session(page)
            cdp.send("Network.enable")
            received = [0]
            cdp.on("Network.dataReceived",
                   lambda e: received.__setitem__(0, received[0] + (e.get("encodedDataLength") or e["dataLength"])))
            page.goto(f"http://127.0.0.1:{port}/")
            page.wait_for_selector("#command-box textarea")
            turns = []
            for i in range(args.turns):
                sent_before, received_before = len(watch.sent), received[0]
                reply = ask(page, ATTEND.format(i=i))
                settle(page, received)  # the side panel's outputs finish arriving
                if not reply.ok:
                    print(f"  turn {i + 1} failed: {reply.inner_text()[:300]!r}", flush=True)
                turns.append({"turn": i + 1, "ok": reply.ok, "sent": watch.bytes_sent(sent_before),
                              "received": received[0] - received_before,
                              "ms": float(reply.node.get_attribute("data-ms") or "nan")})
            browser.close()
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    early, late = turns[1:4], turns[-3:]
    ratio = median([t["ms"] for t in late]) / median([t["ms"] for t in early])
    print(f"long conversation ({args.turns} turns of `attend`):")
    for t in turns:
        print(f"  turn {t['turn']:>3}: sent {t['sent']:>6} B, received {t['received']:>8} B, {t['ms']:7.0f} ms")
    print(f"  sent per command at turn {args.turns}: {turns[-1]['sent']} B (turn 3: {turns[2]['sent']} B); "
          f"received: {turns[-1]['received']} B (turn 3: {turns[2]['received']} B)")
    print(f"  reply time, last three turns vs turns 2-4: {ratio:.2f}x")
    print(f"load average after: {[round(x, 2) for x in os.getloadavg()]}")
    path = write("page", {"machine": facts, "compare_ms": compare, "compare_own_ms": own, "no_chart_ms": plain,
                          "compare_p50_ms": median(compare), "compare_p95_ms": percentile(compare, 95),
                          "no_chart_p50_ms": median(plain), "turns": turns, "late_vs_early": ratio,
                          "load_avg_after": os.getloadavg()})
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
