"""Memory kept per conversation, in process: N conversations run commands and close.

Prints the process RSS after a warm-up conversation, after N conversations that ran the
commands and were closed (``Session.close``), and the peer: the same N kept open (as a
server that never frees its visitors does), with the result store's bytes, in one run.

    .venv/bin/python bench/session_memory.py [--sessions 200]
"""

from __future__ import annotations

import argparse
import gc
import os

from common import machine, rss_mb

from assistant.dispatch import execute
from assistant.session import Session
from assistant.store import ResultStore
from tools.core.config import Settings
from tools.models.hub import ModelHub

#: The app's one result store, shared by every conversation (as ``assistant.app.build`` makes it).
STORE = ResultStore(Settings.from_env().results_mb * 2**20)
LINES = ("attend The cat sat on the mat because it was tired.",
         "compare A cat sat on the mat. | A kitten sat on the rug. | The bank raised its rates.",
         "tokenize We sat on the river bank.")


def conversations(hub: ModelHub, n: int, close: bool) -> list[Session]:
    kept = []
    for _ in range(n):
        session = Session()
        for line in LINES:
            assert execute(line, session, hub, store=STORE).ok
        if close:
            session.close()
        else:
            kept.append(session)
    return kept


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=200)
    args = parser.parse_args()
    print(f"machine: {machine()}")
    hub = ModelHub(Settings.from_env())
    conversations(hub, 2, close=True)  # warm-up: model, caches, code paths
    gc.collect()
    base = rss_mb()
    conversations(hub, args.sessions, close=True)
    gc.collect()
    closed = rss_mb()
    kept = conversations(hub, args.sessions, close=False)
    gc.collect()
    opened = rss_mb()
    print(f"{args.sessions} conversations x {len(LINES)} commands")
    print(f"  closed: RSS {base:.1f} -> {closed:.1f} MB, {(closed - base) * 1024 / args.sessions:.1f} KB each")
    print(f"  kept open (peer): RSS {closed:.1f} -> {opened:.1f} MB, {(opened - closed) * 1024 / args.sessions:.1f} KB "
          f"each; store {STORE.stats().describe()}")
    print(f"  conversations held: {len(kept)}; load average {os.getloadavg()}")


if __name__ == "__main__":
    main()
