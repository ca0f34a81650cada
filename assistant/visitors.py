"""The page's visitors come and go: their conversations are freed when they leave or idle, under a cap.

Gradio keeps each browser session's values in ``demo.state_holder`` (a ``SessionState``
per session hash: the ``gr.State`` values plus a copy of every component's config and
latest value). Gradio itself frees ``gr.State`` values after their time-to-live (calling
their ``delete_callback``, here :meth:`Session.close`), but it keeps the rest of a closed
tab's entry for an hour, and evicts over its capacity without calling any callback.

:class:`Visitors` frees a whole entry (the conversation's stored results and downloads
folder first) when its page has closed for ``ASSISTANT_CLOSED_GRACE_S``, when it has
been idle for ``ASSISTANT_SESSION_IDLE_S``, and, past ``ASSISTANT_MAX_SESSIONS`` entries,
the longest idle first. A background thread sweeps every few seconds, and deletes the conversations
kept on disk (:mod:`assistant.conversations`) that nobody has used for the idle time.

Freeing a session also drops Gradio's other records of it (its queue's message queue, event ids and
analytics records: :func:`assistant.memory.forget_sessions`), and, with ``ASSISTANT_TRIM_MEMORY``, hands
the memory glibc keeps after the frees back to the system (:func:`assistant.memory.trim`).
"""

from __future__ import annotations

import logging
import threading
import time
import weakref
from datetime import datetime
from typing import Any

from assistant.conversations import Conversations
from assistant.corpora import forget
from assistant.memory import forget_sessions, trim
from assistant.session import Session
from tools.core.config import Settings

log = logging.getLogger("assistant.visitors")


class Visitors:
    """Frees the conversations of visitors who left, idled out, or are over the cap.

    Args:
        settings: ``session_idle_s``, ``closed_grace_s`` and ``max_sessions``.
        conversations: what is kept on disk for reloads (a page's memory is freed here; its conversation
            stays on disk until it idles out, and its corpora with it).
    """

    def __init__(self, settings: Settings, conversations: Conversations | None = None) -> None:
        self.settings = settings
        self.conversations = conversations or Conversations(settings)
        self._disk_swept = 0.0
        self.idle_s = settings.session_idle_s
        self.grace_s = settings.closed_grace_s
        self.max_sessions = settings.max_sessions
        self._left: dict[str, float] = {}  # session hash -> when its page closed (monotonic)
        self._lock = threading.Lock()
        self._blocks: Any = None
        self.freed = 0

    # --- wiring ---------------------------------------------------------------------------

    def attach(self, blocks: Any, every_s: float | None = None) -> None:
        """Sweep ``blocks``' sessions from a background thread (ends when the page object is gone)."""
        self._blocks = weakref.ref(blocks)
        every = every_s if every_s is not None else max(0.2, min(5.0, self.grace_s / 2 or 1.0, self.idle_s / 4))
        ref = self._blocks

        def loop() -> None:
            while True:
                time.sleep(every)
                if ref() is None:
                    return
                try:
                    self.sweep()
                except Exception:  # a sweep must never stop the sweeping
                    log.exception("sweeping sessions failed")

        threading.Thread(target=loop, name="assistant-visitors", daemon=True).start()

    def left(self, session_hash: str | None) -> None:
        """The visitor's page closed (Gradio's unload event): free it after the grace time."""
        if not session_hash:
            return
        with self._lock:
            self._left[session_hash] = time.monotonic()
        if self.grace_s <= 0:
            self.free(session_hash)

    def back(self, session_hash: str | None) -> None:
        """The visitor is active again (a command arrived): not leaving after all."""
        if session_hash:
            with self._lock:
                self._left.pop(session_hash, None)

    # --- freeing -------------------------------------------------------------------------

    def _holder(self) -> Any:
        blocks = self._blocks() if self._blocks is not None else None
        return getattr(blocks, "state_holder", None) if blocks is not None else None

    def sessions(self) -> int:
        """Browser sessions the server holds now."""
        holder = self._holder()
        return len(holder.session_data) if holder is not None else 0

    def sweep(self) -> int:
        """Free what is due now: closed past the grace, idle past the limit, the oldest past the cap."""
        holder = self._holder()
        if holder is None:
            return 0
        now, wall = time.monotonic(), datetime.now()
        with self._lock:
            gone = [h for h, at in self._left.items() if now - at >= self.grace_s]
        with holder.lock:
            order = list(holder.session_data)  # least recently used first
            used = dict(holder.time_last_used)
        idle = [h for h in order if h in used and (wall - used[h]).total_seconds() > self.idle_s]
        due = list(dict.fromkeys(gone + idle))
        over = len(order) - len(set(due) & set(order)) - self.max_sessions
        if over > 0:
            due += [h for h in order if h not in due][:over]
        self.free(*due)
        if now - self._disk_swept >= min(60.0, self.idle_s / 4):
            self._disk_swept = now
            self.conversations.sweep()
        return len(due)

    def free(self, *session_hashes: str) -> int:
        """Close the visitors' conversations and drop Gradio's whole entries and records for the sessions;
        returns how many entries were freed."""
        with self._lock:
            for session_hash in session_hashes:
                self._left.pop(session_hash, None)
        holder = self._holder()
        if holder is None or not session_hashes:
            return 0
        freed = 0
        for session_hash in session_hashes:
            entry = holder.session_data.get(session_hash)
            if entry is None:
                continue
            for value in list(entry.state_data.values()):
                if isinstance(value, Session):
                    value.close()
                    if not self.conversations.kept:  # a kept conversation's corpora go when it idles out
                        forget(self.settings, value.id)
            with holder.lock:
                holder.session_data.pop(session_hash, None)
                holder.time_last_used.pop(session_hash, None)
            del entry
            freed += 1
        forget_sessions(self._blocks() if self._blocks is not None else None, session_hashes)
        self.freed += freed
        if freed and self.settings.trim_memory:
            trim()
        return freed
