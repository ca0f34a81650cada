"""Hostile input and isolation in a real browser.

Texts, words and file names carrying `<script>`, `<img onerror>`, `javascript:` links and
markdown image tricks show literally and run nothing: no dialog, no console error, no
request off 127.0.0.1, no `javascript:` link, and the payloads' flag never set. Two browser
contexts at once see only their own conversation, downloads and model, while the model
itself is one object in the server's memory.
"""

from __future__ import annotations

import dataclasses
import threading
from urllib.parse import urlparse

import pytest

from tests.browsing import DONE, REPLIES, ask, log_text, ready
from tests.conftest import free_port

pytestmark = pytest.mark.browser

FLAG = "window.__pwned"
SCRIPT = "<script>window.__pwned=1</script>"
IMG = "<img src=x onerror=window.__pwned=2>"
JS_LINK = "[click me](javascript:window.__pwned=3)"
MD_IMAGE = "![tracker](http://evil.example/pixel.png)"
HTML_LINK = "<a href=\"javascript:window.__pwned=4\">link</a>"
SVG = "<svg onload=window.__pwned=5>"
LOCAL = ("127.0.0.1", "localhost")


class Watch:
    """Everything a page does that hostile input could cause."""

    def __init__(self, page) -> None:
        self.dialogs: list[str] = []
        self.console_errors: list[str] = []
        self.page_errors: list[str] = []
        self.offsite: list[str] = []
        self.requests: list[str] = []
        page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))
        page.on("console", lambda m: self.console_errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda exc: self.page_errors.append(str(exc)))
        page.on("request", self._request)

    def _request(self, request) -> None:
        self.requests.append(request.url)
        url = urlparse(request.url)
        if url.scheme not in ("data", "blob", "about") and url.hostname not in LOCAL:
            self.offsite.append(request.url)

    def assert_quiet(self, page) -> None:
        assert page.evaluate(f"typeof {FLAG}") == "undefined", page.evaluate(FLAG)
        assert self.dialogs == [], self.dialogs
        assert self.page_errors == [], self.page_errors
        assert self.console_errors == [], self.console_errors
        assert self.offsite == [], self.offsite
        assert not [u for u in self.requests if urlparse(u).path.rstrip("/").endswith("/x")], "an <img src=x> loaded"
        chat = page.locator("#conversation .log")
        for tag in ("script", "img[onerror]", "svg[onload]", "a[href^='javascript:' i]", "img[src*='evil']"):
            assert chat.locator(tag).count() == 0, tag


def literal(page, fragment: str) -> bool:
    """Whether the conversation shows ``fragment`` as text (whitespace-insensitive)."""
    return page.evaluate(
        "f => document.querySelector('#conversation .log').innerText.replace(/\\s+/g, '')"
        ".includes(f.replace(/\\s+/g, ''))",
        fragment)


def test_hostile_texts_words_and_names_show_literally_and_run_nothing(live_app, browser):
    page = browser.new_page()
    watch = Watch(page)
    page.goto(live_app)
    reply = ask(page, f"compare {SCRIPT} | {IMG} | {JS_LINK} {MD_IMAGE}")
    assert "Similarity matrix of 3 texts" in reply.inner_text()
    cells = " ".join(reply.cells())
    assert SCRIPT in cells and IMG in cells  # the table shows each text exactly as typed
    assert literal(page, SCRIPT) and literal(page, IMG)
    ask(page, f"word {IMG} | The {IMG} is here. | A {IMG} there too.")
    ask(page, f"tokenize {HTML_LINK} {SVG} {MD_IMAGE}")
    assert literal(page, "evil.example")
    reply = ask(page, f"{SCRIPT} {JS_LINK}")  # an unknown verb echoes the line in its error
    assert "Unknown command" in reply.inner_text()
    reply = ask(page, f"model {IMG}")
    assert "is not a model name" in reply.inner_text()
    ask(page, f"compare {MD_IMAGE} | ![a](javascript:alert(1)) --pool {SVG}")
    page.wait_for_timeout(1500)  # give any injected handler its chance to fire
    watch.assert_quiet(page)
    page.close()


@pytest.mark.slow
def test_a_hostile_file_name_shows_literally(live_app, browser, tmp_path):
    name = "<img src=x onerror=window.__pwned=6>[a](javascript:alert(1)).csv"
    data = tmp_path / name
    pairs = [("A man plays a guitar.", "A man plays an instrument.", 4.2), ("A cat sleeps.", "A car drives.", 0.4),
             ("Kids play.", "Children are playing.", 4.6), ("It rains.", "The sun shines.", 0.8)] * 3
    data.write_text("sentence1,sentence2,score\n" + "".join(f"{a},{b},{s}\n" for a, b, s in pairs))
    page = browser.new_page()
    watch = Watch(page)
    page.goto(live_app)
    ready(page)
    page.locator("#upload input[type='file']").set_input_files(str(data))
    page.wait_for_function("document.querySelector('#command-box textarea').value.startsWith('benchmark --data')",
                           timeout=60_000)
    box = page.locator("#command-box textarea")
    line = box.input_value()
    box.press("Enter")
    page.wait_for_function("n => document.querySelectorAll(\"" + DONE + "\").length >= n", arg=1,
                           timeout=180_000)
    page.wait_for_timeout(1500)
    assert literal(page, line.split(" --")[0].removeprefix("benchmark --data ").strip()[:20])
    watch.assert_quiet(page)
    page.close()


# --- two visitors at once ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def shared_app(hub, tmp_path_factory):
    """The app with a model root holding a tiny BERT, and a hub that records which model object each call got."""
    import torch
    from transformers import BertConfig, BertModel, BertTokenizerFast

    from assistant.app import build, launch_options
    from tools.models.hub import ModelHub

    root = tmp_path_factory.mktemp("models")
    folder = root / "tiny"
    folder.mkdir()
    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "alpha", "bravo", "secret", "cat", "dog", "a", "the"]
    (root / "vocab.txt").write_text("\n".join(words) + "\n")
    torch.manual_seed(0)
    BertModel(BertConfig(vocab_size=len(words), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                         intermediate_size=32, max_position_embeddings=64)).save_pretrained(folder)
    BertTokenizerFast(vocab_file=str(root / "vocab.txt")).save_pretrained(folder)

    class RecordingHub(ModelHub):
        def __init__(self, settings):
            super().__init__(settings)
            self.handed_out: list[tuple[str, int]] = []
            self._record = threading.Lock()

        def get(self, name=None, device=None):
            loaded = super().get(name, device)
            with self._record:
                self.handed_out.append((loaded.name, id(loaded)))
            return loaded

    settings = dataclasses.replace(hub.settings, model_roots=str(root), concurrency=2)
    recording = RecordingHub(settings)
    demo = build(recording, settings)
    port = free_port()
    demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True,
                **launch_options(settings))
    try:
        yield f"http://127.0.0.1:{port}/", recording
    finally:
        demo.close()


def send(page, line: str) -> int:
    ready(page)
    before = page.locator(REPLIES).count()
    box = page.locator("#command-box textarea")
    box.fill(line)
    box.press("Enter")
    return before


def wait_reply(page, before: int) -> None:
    page.wait_for_function("n => document.querySelectorAll(\"" + DONE + "\").length > n",
                           arg=before, timeout=120_000)


def download_names(page) -> list[str]:
    return page.evaluate("() => [...document.querySelectorAll('a[href*=\"/gradio_api/file=\"]')].map(a => a.href)")


def conversation(page) -> str:
    return log_text(page)


def model_box(page) -> str:
    return page.get_by_label("Model", exact=True).input_value()


@pytest.mark.slow
def test_two_visitors_at_once_see_only_their_own_conversation_downloads_and_model(browser, shared_app):
    url, recording = shared_app
    one, two = browser.browser.new_context(), browser.browser.new_context()
    try:
        a, b = one.new_page(), two.new_page()
        a.goto(url)
        b.goto(url)
        before_a, before_b = send(a, "model tiny"), send(b, "compare bravo cat | bravo dog --pool cls")
        wait_reply(a, before_a)
        wait_reply(b, before_b)
        before_a, before_b = send(a, "compare alpha secret | a cat"), send(b, "compare bravo secret | the dog")
        wait_reply(a, before_a)
        wait_reply(b, before_b)
        a.wait_for_function("document.querySelectorAll('a[href*=\"compare.json\"]').length > 0", timeout=30_000)
        b.wait_for_function("document.querySelectorAll('a[href*=\"compare.json\"]').length > 0", timeout=30_000)

        log_a, log_b = conversation(a), conversation(b)
        assert "alpha secret" in log_a and "bravo" not in log_a
        assert "bravo secret" in log_b and "alpha" not in log_b
        assert "Switched this conversation to" in log_a and "Switched" not in log_b
        assert "tiny" in log_a.split("compare alpha secret")[-1]  # A's compare ran on A's model
        assert "minilm" in log_b.split("compare bravo secret")[-1] and "tiny" not in log_b
        assert model_box(a) == "tiny" and model_box(b) == "minilm"
        downloads_a, downloads_b = set(download_names(a)), set(download_names(b))
        assert downloads_a and downloads_b and not downloads_a & downloads_b

        b.reload()  # visitor B's page comes back with B's own conversation, still on the default model
        ready(b)
        assert "bravo secret" in conversation(b) and "alpha" not in conversation(b) and model_box(b) == "minilm"
    finally:
        one.close()
        two.close()
    minilm = {obj for name, obj in recording.handed_out if name == "minilm"}
    tiny = {obj for name, obj in recording.handed_out if name == "tiny"}
    assert len(minilm) == 1 and len(tiny) == 1  # one object per model, shared by every visitor
    assert len([m for m in recording.loaded() if m.name == "minilm"]) == 1
