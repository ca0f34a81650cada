"""Bounded memory per visitor: small turns, a capped store of full results, and sessions freed when
visitors leave, idle out, or go over the cap (through the real page in Chromium)."""

from __future__ import annotations

import pickle
import time
from pathlib import Path

import numpy as np
import pytest

from assistant.commands.base import Context
from assistant.commands.registry import TABLE
from assistant.session import Session
from assistant.sharing.links import full_turns
from assistant.store import ResultStore, result_nbytes
from tests.browsing import ask
from tools.core.results import Result


def _results_in(obj, seen=None) -> int:
    """Result objects reachable from a conversation's own fields."""
    seen = seen if seen is not None else set()
    if id(obj) in seen:
        return 0
    seen.add(id(obj))
    if isinstance(obj, Result):
        return 1
    if isinstance(obj, dict):
        return sum(_results_in(v, seen) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        return sum(_results_in(v, seen) for v in obj)
    if hasattr(obj, "__dataclass_fields__"):
        return sum(_results_in(getattr(obj, f), seen) for f in obj.__dataclass_fields__)
    return 0


def test_a_conversation_keeps_lines_and_answers_not_results(run):
    session = Session()
    for line in ("attend The cat sat on the mat because it was tired.",
                 "word bank | We sat on the river bank. | The bank approved my loan.",
                 "project The bank of the river. | The bank raised its rates.", "tokenize A kitten."):
        assert run(line, session).ok
    assert _results_in(session) == 0  # tables, charts and downloads are not in the conversation
    assert len(pickle.dumps(session)) < 20_000  # four heavy turns: a few KB of lines and answers
    assert [t.command for t in session.turns] == ["attend", "word", "project", "tokenize"]
    stored = [session.stored(t) for t in session.turns]
    assert stored[:2] == [None, None] and all(r is not None for r in stored[2:])  # the latest two


def test_the_store_is_capped_in_bytes_and_drops_the_longest_idle_first(run):
    big = run("attend The cat sat on the mat because it was tired.").result
    size = result_nbytes(big)
    assert size > 10_000
    store = ResultStore(max_bytes=8 * size, per_session=2)  # room for eight such results
    for n, sid in enumerate("abcdefghij", start=1):
        store.put(sid, n, big)
    assert store.get("a", 1) is None and store.get("b", 2) is None  # over the cap: the oldest went
    assert all(store.get(sid, n) is big for n, sid in enumerate("abcdefghij", start=1) if n > 2)
    store.put("j", 11, big)
    assert store.get("c", 3) is None  # the longest idle, not the busy one
    store.put("d", 4, big)
    assert store.stats().bytes <= store.max_bytes
    store.put("d", 5, big)
    store.put("d", 6, big)
    assert store.get("d", 4) is None and store.get("d", 6) is big  # two per conversation
    store.drop("d", 6)
    assert store.get("d", 5) is None and store.get("d", 6) is None


def test_close_frees_results_and_the_downloads_folder(run):
    session = Session()
    assert run("compare A cat. | A kitten.", session).ok
    folder = session.downloads_dir()
    (folder / "compare.json").write_text("{}")
    assert session.store.get(session.page_key, 1) is not None
    session.close()
    assert not folder.exists() and session.store.get(session.page_key, 1) is None
    session.close()  # twice is fine


def test_export_recomputes_turns_no_longer_stored_with_the_same_numbers(run, hub):
    session = Session()
    first = run("compare A man plays guitar. | A woman plays a violin. | A cat sleeps.", session).result
    for line in ("tokenize A kitten.", "tokenize A dog.", "tokenize A bird."):
        assert run(line, session).ok
    assert session.stored(session.turns[0]) is None
    full = full_turns(Context(session, hub, hub.settings, commands=TABLE), session.turns)
    again = full[0].result
    assert again.command == "compare" and again.elapsed_ms == session.turns[0].elapsed_ms
    assert [t.name for t in again.tables] == [t.name for t in first.tables]
    for table in first.tables:
        a, b = table.frame, again.table(table.name)
        assert list(a.columns) == list(b.columns)
        numeric = a.select_dtypes("number").columns
        np.testing.assert_allclose(a[numeric].to_numpy(float), b[numeric].to_numpy(float), rtol=1e-5, atol=1e-6)
    assert len(again.charts) == len(first.charts)
    assert full[-1].result is session.stored(session.turns[-1])  # the latest come from the store


# --- through the page --------------------------------------------------------------------

def _conversations(demo) -> dict[str, Session]:
    """The page's live conversations by Gradio session hash (those that ran a command)."""
    found = {}
    for session_hash, entry in list(demo.state_holder.session_data.items()):
        for value in list(entry.state_data.values()):
            if isinstance(value, Session) and value.turns:
                found[session_hash] = value
    return found


def _wait(predicate, timeout: float = 20.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.1)
    return predicate()


@pytest.mark.browser
@pytest.mark.slow
def test_closing_the_page_frees_its_conversation(serve, browser):
    demo, url = serve(closed_grace_s=0.5)
    stays = browser.new_page()
    stays.goto(url)
    first = ask(stays, "compare A cat. | A kitten.")
    assert first.ok, first.inner_text()
    page = browser.new_page()
    page.goto(url)
    reply = ask(page, "attend The cat sat on the mat because it was tired.")
    assert reply.ok, reply.inner_text()
    live = _conversations(demo)
    assert len(live) == 2
    leaving_hash, leaving = next((h, s) for h, s in live.items() if s.turns[-1].command == "attend")
    folder = Path(leaving.downloads)
    assert folder.is_dir() and any(folder.iterdir())  # the reply's downloads
    assert leaving.store.get(leaving.page_key, 1) is not None
    page.close()
    assert _wait(lambda: leaving_hash not in demo.state_holder.session_data), "the closed page's session stayed"
    assert not folder.exists() and leaving.store.get(leaving.page_key, 1) is None
    assert ask(stays, "history").ok  # the other visitor keeps everything
    assert "compare A cat." in stays.locator("#conversation .reply").last.inner_text()
    stays.close()


@pytest.mark.browser
@pytest.mark.slow
def test_idle_conversations_expire_and_the_oldest_go_past_the_cap(serve, browser):
    demo, url = serve(session_idle_s=3, max_sessions=2)
    pages = []
    for text in ("A cat.", "A dog.", "A bird."):
        page = browser.new_page()
        page.goto(url)
        assert ask(page, f"tokenize {text}").ok
        pages.append(page)
    assert _wait(lambda: demo.visitors.sessions() <= 2, 10), demo.visitors.sessions()
    left = _conversations(demo)
    assert len(left) <= 2 and all(s.turns[0].line != "tokenize A cat." for s in left.values())  # oldest out
    assert _wait(lambda: not _conversations(demo), 20), "idle conversations stayed"
    reply = ask(pages[0], "history")  # the page still works after its conversation expired
    assert not reply.ok and "no answered commands yet" in reply.inner_text()
    for page in pages:
        page.close()
