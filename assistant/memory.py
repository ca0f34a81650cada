"""What a departed visitor leaves behind in Gradio's own records, and memory the allocator keeps.

Gradio keeps a few records per browser session besides its ``state_holder`` entry, and frees
none of them when the page closes: the queue's message queue for the session
(``pending_messages_per_session``, an LRU of 2,000), its set of event ids
(``pending_event_ids_session``), one analytics record per event (``event_analytics``, up to
10,000) and the session's streams. :func:`forget_sessions` drops them for sessions that have been
freed (Gradio clears its per-session caches itself when the page disconnects).

Freed Python objects go back to glibc's malloc, which keeps much of that memory in its arenas
instead of returning it to the system, so a server's RSS keeps the high-water mark of every
burst of visitors. :func:`trim` asks glibc to give the free pages back (``malloc_trim``), and
:func:`limit_arenas` caps how many arenas the server's threads spread over (``mallopt(M_ARENA_MAX)``:
glibc's default is eight per core, each keeping its own freed pages); elsewhere (musl, macOS) both
do nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
from collections.abc import Collection
from functools import cache
from typing import Any

log = logging.getLogger("assistant.memory")


def forget_sessions(blocks: Any, hashes: Collection[str]) -> int:
    """Drop Gradio's per-session records of ``hashes`` (sessions already freed); returns records dropped.

    A session with an event still queued or running keeps its records (its page is still waiting).
    """
    if not hashes:
        return 0
    queue = getattr(blocks, "_queue", None)
    dropped = 0
    if queue is not None:
        live = set(getattr(queue, "event_ids_to_events", {}))
        pending = getattr(queue, "pending_event_ids_session", {})
        gone = {h for h in hashes if not (pending.get(h, set()) & live)}
        for h in gone:
            dropped += pending.pop(h, None) is not None
            dropped += getattr(queue, "pending_messages_per_session", {}).pop(h, None) is not None
        analytics = getattr(queue, "event_analytics", None)
        if isinstance(analytics, dict) and gone:
            for event_id, record in list(analytics.items()):
                if isinstance(record, dict) and record.get("session_hash") in gone \
                        and record.get("status") not in ("queued", "processing"):
                    dropped += analytics.pop(event_id, None) is not None
    for name in ("pending_streams", "pending_diff_streams"):
        streams = getattr(blocks, name, None)
        if isinstance(streams, dict):
            for h in hashes:
                dropped += streams.pop(h, None) is not None
    return dropped


#: glibc's mallopt parameter for the most arenas (malloc.h).
M_ARENA_MAX = -8


@cache
def _libc() -> Any:
    name = ctypes.util.find_library("c")
    try:
        return ctypes.CDLL(name) if name else None
    except OSError:
        return None


@cache
def _malloc_trim() -> Any:
    trim = getattr(_libc(), "malloc_trim", None)
    if trim is not None:
        trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return trim


def limit_arenas(arenas: int) -> bool:
    """Let the server's threads share at most ``arenas`` malloc arenas (0: glibc's default); False where there
    is no glibc. Called before the server starts its threads: arenas already made stay, none are added past
    the limit."""
    mallopt = getattr(_libc(), "mallopt", None)
    if arenas <= 0 or mallopt is None:
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return bool(mallopt(M_ARENA_MAX, arenas))


def trim() -> bool:
    """Give the allocator's free memory back to the system (glibc's ``malloc_trim(0)``); False where there is none."""
    fn = _malloc_trim()
    if fn is None:
        return False
    return bool(fn(0))
