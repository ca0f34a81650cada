"""A conversation outlives its page: a reload, a reopened tab and a server restart bring every reply back;
what is kept on disk is capped per conversation and freed by the idle rule."""

from __future__ import annotations

import dataclasses
import gzip
import json
import os
import time
from pathlib import Path

import pytest

from assistant.conversations import Conversations
from assistant.session import Session, Turn
from tests.browsing import DONE, Watch, ask, chart_errors, log_text, ready
from tests.conftest import free_port
from tools.core.config import Settings
from tools.core.results import Result

pytestmark = pytest.mark.long

LINES = ("compare A cat sat on the mat. | A kitten sat on the rug.",
         "attend The cat sat on the mat",
         "tokenize Unbelievable results")


def _payload(n: int, size: int = 100) -> dict:
    return {"id": f"p{n}", "ok": True, "html": f"<div class='answer'>reply {n} " + "x" * size + "</div>",
            "charts": []}


def _answered(session: Session, line: str) -> Turn:
    return session.remember(line, Result(command=line.split()[0], text=f"answer to {line}"))


def test_a_kept_conversation_comes_back_with_its_turns_model_and_replies(tmp_path):
    kept = Conversations(Settings(conversation_dir=str(tmp_path)))
    session = Session(model="minilm", corpus="reviews")
    for n, line in enumerate(LINES, 1):
        kept.save(session, line, _payload(n), _answered(session, line))
    back = Session()
    restored = kept.restore(session.key, back)
    assert restored is not None and restored.dropped == 0
    assert [e.line for e in restored.exchanges] == list(LINES)
    assert [e.payload["id"] for e in restored.exchanges] == ["p1", "p2", "p3"]
    assert back.key == session.key and back.history == list(LINES) and back.answered == 3
    assert back.model == "minilm" and back.corpus == "reviews"
    assert back.turns == session.turns
    # a reply cut short by a crash is skipped; the rest still come back
    (tmp_path / session.key / "replies" / "000002.json.gz").write_bytes(b"\x1f\x8b\x08broken")
    assert [e.line for e in kept.restore(session.key, Session()).exchanges] == [LINES[0], LINES[2]]


def test_two_tabs_of_one_conversation_both_keep_their_turns_and_replies(tmp_path):
    kept = Conversations(Settings(conversation_dir=str(tmp_path)))
    first = Session(model="minilm")
    kept.save(first, LINES[0], _payload(1), _answered(first, LINES[0]))
    second = Session()
    kept.restore(first.key, second)  # the same browser opens a second tab: the same conversation
    kept.save(second, LINES[1], _payload(2), _answered(second, LINES[1]))
    kept.save(first, LINES[2], _payload(3), _answered(first, LINES[2]))  # the first tab goes on
    kept.save(first, "compare a", {**_payload(4), "ok": False})  # an error answers no command: no turn
    back = Session()
    restored = kept.restore(first.key, back)
    assert restored is not None and [e.line for e in restored.exchanges] == [*LINES, "compare a"]
    assert back.history == list(LINES)  # neither tab's commands were written over by the other's
    assert [t.number for t in back.turns] == [1, 2, 3] and back.answered == 3


def test_ids_that_are_not_kept_conversations_start_afresh_and_never_name_a_path(tmp_path):
    kept = Conversations(Settings(conversation_dir=str(tmp_path / "c")))
    (tmp_path / "secret").mkdir()
    (tmp_path / "secret" / "state.json").write_text("{}")
    for cid in ("", "../secret", "0" * 32, "A" * 32, "x" * 200):
        session = Session()
        assert kept.restore(cid, session) is None
        assert session.id == ""
    assert not Conversations(Settings(conversation_dir="")).kept  # nothing kept: the page keeps no id


def test_each_conversation_keeps_at_most_its_size_oldest_replies_first(tmp_path):
    kept = Conversations(Settings(conversation_dir=str(tmp_path), conversation_mb=1))
    session = Session()
    noise = os.urandom(200_000).hex()  # incompressible: 400 KB a reply on disk before gzip, ~230 KB after
    for n in range(1, 9):
        kept.save(session, f"tokenize {n}", {**_payload(n), "html": noise[: 400_000]},
                  _answered(session, f"tokenize {n}"))
    folder = tmp_path / session.key
    on_disk = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    assert on_disk <= 2**20 + 10_000
    restored = kept.restore(session.key, Session())
    assert restored.dropped >= 4 and restored.dropped + len(restored.exchanges) == 8
    assert restored.exchanges[-1].line == "tokenize 8"  # the newest are the ones kept
    assert len(Session().history) == 0 and len(kept.restore(session.key, Session()).exchanges) < 8
    back = Session()
    kept.restore(session.key, back)
    assert len(back.history) == 8  # every line stays in history
    # one reply larger than half the cap is kept as a note that offers to run it again
    kept.save(session, "vocab huge", {**_payload(9), "html": os.urandom(700_000).hex()},
              _answered(session, "vocab huge"))
    last = kept.restore(session.key, Session()).exchanges[-1]
    assert "too large to keep" in last.payload["html"] and "data-run='vocab huge'" in last.payload["html"]


def test_the_latest_downloads_are_kept_in_order_counted_in_the_size_and_refused_past_half_of_it(tmp_path):
    kept = Conversations(Settings(conversation_dir=str(tmp_path / "c"), conversation_mb=1))
    session = Session()
    made = tmp_path / "made"
    made.mkdir()

    def files(*sizes):
        paths = []
        for n, size in enumerate(sizes):
            (made / f"f{n}.csv").write_bytes(os.urandom(size))
            paths.append(str(made / f"f{n}.csv"))
        return paths

    assert kept.kept_downloads(session.key) is None  # nothing saved yet: nothing kept
    kept.save(session, "tokenize a", _payload(1), _answered(session, "tokenize a"))
    first = files(300, 100)
    kept.keep_downloads(session, first[::-1], {"json": 1})
    back = kept.kept_downloads(session.key)
    assert [p.name for p in back.paths] == ["f1.csv", "f0.csv"] and back.meta == {"json": 1}
    assert back.paths[1].read_bytes() == Path(first[0]).read_bytes()
    # the next reply's files replace them; with 500 KB of downloads, replies are dropped sooner
    kept.keep_downloads(session, files(500_000), {"json": 0})
    assert [p.name for p in kept.kept_downloads(session.key).paths] == ["f0.csv"]
    noise = os.urandom(150_000).hex()  # ~160 KB a reply after gzip: 6 fit in 1 MB alone, not beside 500 KB
    for n in range(2, 8):
        kept.save(session, f"tokenize {n}", {**_payload(n), "html": noise}, _answered(session, f"tokenize {n}"))
    assert sum(p.stat().st_size for p in (tmp_path / "c" / session.key).rglob("*") if p.is_file()) <= 2**20 + 10_000
    assert kept.restore(session.key, Session()).dropped >= 2
    # past half the conversation's size the files are not kept, and the panel can say why
    kept.keep_downloads(session, files(700_000), {"json": 0})
    back = kept.kept_downloads(session.key)
    assert back.paths == [] and back.meta == {"too_large": 700_000}
    assert not (tmp_path / "c" / session.key / "downloads" / "f0.csv").exists()
    kept.forget(session.key)
    assert kept.kept_downloads(session.key) is None


def test_the_idle_rule_deletes_a_conversation_and_its_corpora_on_a_shared_server(tmp_path):
    settings = Settings(conversation_dir=str(tmp_path / "c"), session_idle_s=60, corpus_shared=True,
                        corpus_dir=str(tmp_path / "corpora"))
    kept = Conversations(settings)
    old, new = Session(), Session()
    for s in (old, new):
        kept.save(s, "help", _payload(1), _answered(s, "help"))
    corpora = tmp_path / "corpora" / "conversations" / old.key
    corpora.mkdir(parents=True)
    hour_ago = time.time() - 3600
    os.utime(tmp_path / "c" / old.key, (hour_ago, hour_ago))
    assert kept.sweep() == [old.key]
    assert not (tmp_path / "c" / old.key).exists() and not corpora.exists()
    assert kept.restore(old.key, Session()) is None
    assert kept.restore(new.key, Session()) is not None
    state = json.loads((tmp_path / "c" / new.key / "state.json").read_text())
    assert state["turns"][0]["line"] == "help"
    with gzip.open(tmp_path / "c" / new.key / "replies" / "000001.json.gz", "rt") as f:
        assert json.load(f)["line"] == "help"


@pytest.fixture()
def person(browser):
    """One person's browser: tabs share its storage (unlike the `browser` fixture's, each a new visitor)."""
    context = browser.browser.new_context(viewport={"width": 1400, "height": 1000})
    yield context
    context.close()


def _open(context, url):
    page = context.new_page()
    watch = Watch.on(page)
    page.goto(url)
    ready(page)
    return page, watch


def _replies(page) -> int:
    return page.locator(DONE).count()


def _panel_shows(page, table: str, download: str) -> None:
    page.wait_for_function("([t, d]) => document.querySelector('#full-table').innerText.includes(t) && "
                           "document.querySelector('#downloads').innerText.replace(/\\s+/g, '').includes(d)",
                           arg=[table, download],
                           timeout=30_000)


def _drawn(page) -> int:
    return page.evaluate("document.querySelectorAll('#conversation .reply .chart canvas, "
                         "#conversation .reply .chart svg').length")


#: Before the page's scripts: the chart library, once its module has run, shows itself only seconds later (as on a busy
#: machine, where a conversation restored at load reaches its charts before the library's module has run).
_SLOW_CHART_LIBRARY = """
let library;
Object.defineProperty(window, 'vegaEmbed', {configurable: true,
  get() { return window.libraryShown ? library : undefined; },
  set(value) { library = value; setTimeout(() => { window.libraryShown = true; }, 3000); }});
"""


@pytest.mark.browser
def test_a_reload_and_a_reopened_tab_bring_back_every_reply_chart_and_link(serve, person, browser, tmp_path):
    demo, url = serve(session_idle_s=600)
    page, _ = _open(person, url)
    for line in LINES:
        assert ask(page, line).ok
    before_text = log_text(page)
    charts = _drawn(page)
    links = page.locator("#conversation .reply button.copy-link").count()
    assert charts >= 2 and links == 3
    page.screenshot(path=str(tmp_path / "before.png"))

    page.reload()
    ready(page)
    assert _replies(page) == 3
    page.wait_for_function("n => document.querySelectorAll('#conversation .reply .chart canvas, "
                           "#conversation .reply .chart svg').length >= n", arg=charts, timeout=60_000)
    assert log_text(page) == before_text
    assert page.locator("#conversation .reply button.copy-link").count() == links
    assert chart_errors(page) == []
    # the side panel comes back too: the latest reply's full table and its downloads, which still download
    _panel_shows(page, "Full table: tokens", "tokenize.json")
    page.screenshot(path=str(tmp_path / "reloaded.png"))
    link = page.evaluate("[...document.querySelectorAll('#downloads a')].map(a => a.href)"
                         ".find(h => h.endsWith('tokenize.json'))")
    download = page.request.get(link)
    assert download.ok and download.json()["command"] == "tokenize"
    assert download.json()["tables"][0]["rows"][0][1] == "[CLS]"
    # the server knows the conversation too: history, again and a new command go on from it
    reply = ask(page, "history")
    assert all(line.split()[0] in reply.inner_text() for line in LINES)
    assert "3 answered commands" in reply.inner_text()
    assert ask(page, "again").ok and "Unbelievable" in log_text(page).split("again")[-1]

    # the tab is closed and opened again (same browser, same origin): still there, with the new turns, its charts
    # drawn even when the chart library arrives seconds after the restored replies
    page.close()
    person.add_init_script(_SLOW_CHART_LIBRARY)
    page, watch = _open(person, url)
    assert _replies(page) == 5
    assert sum(size for _, size in watch.sent) < 4096  # the page sends its id, never the conversation
    page.wait_for_function("n => document.querySelectorAll('#conversation .reply .chart canvas, "
                           "#conversation .reply .chart svg').length >= n || "
                           "document.querySelector('#conversation').innerText.includes('could not be drawn')",
                           arg=charts, timeout=60_000)
    assert "could not be drawn" not in log_text(page) and chart_errors(page) == []

    # another visitor (another browser) sees none of it
    other, _ = _open(browser, url)
    assert _replies(other) == 0
    other.close()

    # "New conversation" starts afresh here and deletes the old one on the server
    old = page.evaluate("localStorage.getItem('assistant-conversation')")
    assert old and len(old) == 32
    page.locator("#new-conversation").click()
    page.wait_for_function("old => localStorage.getItem('assistant-conversation') !== old", arg=old,
                           timeout=30_000)
    assert _replies(page) == 0
    assert not (tmp_path / "conversations" / old).exists()
    assert "no answered commands" in ask(page, "history").inner_text().lower()
    page.reload()
    ready(page)
    assert _replies(page) == 1  # the new conversation's own `history`
    page.close()


@pytest.mark.browser
def test_a_server_restart_loses_nothing(hub, person, tmp_path):
    from assistant.app import build, launch_options

    settings = dataclasses.replace(hub.settings, conversation_dir=str(tmp_path / "kept"))
    port = free_port()
    url = f"http://127.0.0.1:{port}/"

    def start():
        demo = build(hub, settings)
        demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True,
                    **launch_options(settings))
        return demo

    demo = start()
    try:
        page, _ = _open(person, url)
        assert ask(page, LINES[0]).ok and ask(page, "word bank | river bank | bank loan").ok
        before = log_text(page)
        page.close()
    finally:
        demo.close()
    demo = start()  # a new process would find the same folder: a new app object, nothing in memory
    try:
        page, _ = _open(person, url)
        assert _replies(page) == 2 and log_text(page) == before
        _panel_shows(page, "Full table: ", "word.json")
        assert "compare" in ask(page, "history").inner_text()
        page.close()
    finally:
        demo.close()
