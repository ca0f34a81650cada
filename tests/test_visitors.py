"""Visitors come and go through the real page: once a departed visitor's grace period is over, nothing of
theirs is reachable in memory (their conversation, Gradio's state entry and queue records, their stored
results, their downloads folder, open files); only their conversation on disk stays, for a reload, until the
idle time. The 600-visitor measurement of the same is bench/soak.py.
"""

from __future__ import annotations

import gc
import os
import time
import weakref
from pathlib import Path

import pytest

from assistant.session import Session
from tests.browsing import ask, ready
from tools.core.results import Result

pytestmark = [pytest.mark.browser, pytest.mark.long]

LINES = ("compare A cat sat on the mat. | A kitten sat on the rug.",
         "attend The cat sat on the mat because it was tired.")
LEGS, VISITORS = 2, 2


def _freed(demo, deadline_s: float = 120.0) -> bool:
    """Wait (polling; the deadline only stops a hang) until the server holds no browser session."""
    end = time.monotonic() + deadline_s
    while demo.visitors.sessions() and time.monotonic() < end:
        time.sleep(0.2)
    return demo.visitors.sessions() == 0


def _records(demo, hashes: set[str]) -> dict[str, int]:
    """Gradio's records that still name one of ``hashes``."""
    queue = demo._queue
    return {"state": len(hashes & set(demo.state_holder.session_data)),
            "messages": len(hashes & set(queue.pending_messages_per_session)),
            "event_ids": len(hashes & set(queue.pending_event_ids_session)),
            "analytics": sum(r.get("session_hash") in hashes for r in list(queue.event_analytics.values())),
            "streams": len(hashes & (set(demo.pending_streams) | set(demo.pending_diff_streams)))}


def _look(demo, session_hash: str) -> tuple[weakref.ref, Path, bool]:
    """The visitor's conversation (a weak reference), its downloads folder, whether its latest result is stored."""
    session = next(v for v in demo.state_holder.session_data[session_hash].state_data.values()
                   if isinstance(v, Session))
    return weakref.ref(session), Path(session.downloads), session.stored(session.turns[-1]) is not None


def _visit(browser, demo, url: str) -> tuple[str, weakref.ref, Path, bool]:
    """One visitor: open the page, run the lines (every reply arrives and answers), close the tab. The test's
    own frames never hold the conversation itself, only a weak reference."""
    before = set(demo.state_holder.session_data)
    page = browser.new_page()
    page.goto(url)
    ready(page)
    for line in LINES:
        reply = ask(page, line)
        assert reply.ok, reply.inner_text()
    (session_hash,) = set(demo.state_holder.session_data) - before
    ref, folder, stored = _look(demo, session_hash)
    page.close()
    return session_hash, ref, folder, stored


def _disk_kb(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 1024 if folder.is_dir() else 0.0


def test_departed_visitors_leave_nothing_reachable_in_memory(serve, browser):
    demo, url = serve(closed_grace_s=1.0)
    root = demo.conversations.root
    fds, results = [], []
    for leg in range(LEGS):
        hashes, sessions, folders = set(), [], []
        for _ in range(VISITORS):
            session_hash, ref, folder, stored = _visit(browser, demo, url)
            assert stored and folder.is_dir()  # its latest full result and downloads, while the page is open
            hashes.add(session_hash)
            sessions.append(ref)
            folders.append(folder)
        assert _freed(demo), f"sessions still held after the grace period: {demo.visitors.sessions()}"
        gc.collect()
        alive = [ref() for ref in sessions if ref() is not None]
        assert not alive, [gc.get_referrers(s) for s in alive][:1]  # who keeps a departed conversation
        assert _records(demo, hashes) == {"state": 0, "messages": 0, "event_ids": 0, "analytics": 0, "streams": 0}
        assert not any(folder.exists() for folder in folders)  # downloads folders deleted
        fds.append(len(os.listdir("/proc/self/fd")))
        results.append(sum(type(o) is Result for o in gc.get_objects()))
        print(f"leg {leg + 1}: {VISITORS} visitors freed; open files {fds[-1]}; Result objects alive {results[-1]}; "
              f"conversations kept on disk {_disk_kb(root) / (VISITORS * (leg + 1)):.1f} KB per visitor")
    assert fds[-1] <= fds[0] + 2, fds  # no handle kept per visitor
    assert results[-1] <= results[0], results  # no visitor's full results kept
    # on disk, each conversation stays for a reload until it has been idle for ASSISTANT_SESSION_IDLE_S
    kept = [p for p in root.iterdir() if p.is_dir()]
    assert len(kept) >= LEGS * VISITORS
    assert demo.conversations.sweep(now=time.time() + demo.conversations.idle_s - 60) == []
    assert len(demo.conversations.sweep(now=time.time() + demo.conversations.idle_s + 1)) == len(kept)
    assert _disk_kb(root) == 0
