"""Driving the page as a person does: type a line, press Enter, read the reply in the log.

Shared by the browser tests and ``bench/page.py`` / ``bench/visitors.py``. A reply is
finished when the page has appended it to ``#conversation .log`` and drawn its charts
(``data-done="1"``); a chart is drawn when its ``.vega-embed`` holds a canvas or an
``svg.marks``.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from urllib.parse import urlparse

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
REPLIES = "#conversation .reply"
DONE = "#conversation .reply[data-done='1']"
DRAWN = ".vega-embed canvas, .vega-embed svg.marks"


def launch(playwright):
    """Debian's chromium, headless (never a downloaded browser)."""
    executable = shutil.which("chromium")
    if executable is None:
        raise RuntimeError("chromium is not installed: run `make test`, which installs Debian's chromium")
    return playwright.chromium.launch(executable_path=executable, headless=True, args=CHROMIUM_ARGS)


@dataclass
class Watch:
    """What the page reports: page errors, console errors and warnings, and request bodies sent."""

    page_errors: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)
    console_warnings: list[str] = field(default_factory=list)
    sent: list[tuple[str, int]] = field(default_factory=list)
    offsite: list[str] = field(default_factory=list)

    @classmethod
    def on(cls, page) -> Watch:
        watch = cls()
        page.on("pageerror", lambda exc: watch.page_errors.append(str(exc)))
        page.on("console", watch._console)
        page.on("request", watch._request)
        return watch

    def _console(self, message) -> None:
        if message.type == "error":
            self.console_errors.append(message.text)
        elif message.type == "warning":
            self.console_warnings.append(message.text)

    def _request(self, request) -> None:
        self.sent.append((request.url, len(request.post_data_buffer or b"")))
        url = urlparse(request.url)
        if url.scheme not in ("data", "blob", "about") and url.hostname not in ("127.0.0.1", "localhost"):
            self.offsite.append(request.url)

    def bytes_sent(self, since: int = 0) -> int:
        """Request bodies sent since the ``since``-th request."""
        return sum(size for _, size in self.sent[since:])


class Reply:
    """One reply of the conversation: its text, tables and charts."""

    def __init__(self, page, index: int) -> None:
        self.page = page
        self.index = index
        self.node = page.locator(REPLIES).nth(index)

    def inner_text(self) -> str:
        return self.node.inner_text()

    def count(self, selector: str) -> int:
        return self.node.locator(selector).count()

    def cells(self) -> list[str]:
        return self.node.locator(".reply-table td").all_inner_texts()

    @property
    def ok(self) -> bool:
        return "error" not in (self.node.get_attribute("class") or "")

    def charts(self) -> tuple[int, int]:
        """(charts in the reply, charts drawn)."""
        return self.count(".chart"), self.count(DRAWN)


def ready(page, timeout: float = 240_000) -> None:
    """Wait until the page has finished opening (its open event has run).

    An Enter pressed before then can be lost, as a person's would; a person sees the page
    settle first, so the tests wait for that too.
    """
    page.wait_for_function("() => window.assistant && window.assistant.loaded === true", timeout=timeout)


def ask(page, line: str, timeout: float = 240_000) -> Reply:
    """Type ``line`` in the command box, press Enter, wait until its reply is shown and drawn."""
    ready(page, timeout)
    before = page.locator(REPLIES).count()
    box = page.locator("#command-box textarea")
    box.fill(line)
    box.press("Enter")
    page.wait_for_function("n => document.querySelectorAll(\"" + DONE + "\").length > n", arg=before,
                           timeout=timeout)
    return Reply(page, before)


def chart_errors(page) -> list[str]:
    """Charts the page could not draw (the page's script records each)."""
    return page.evaluate("window.assistant ? window.assistant.errors : ['the page script did not load']")


def log_text(page) -> str:
    """Everything the conversation shows, questions and replies."""
    return page.locator("#conversation .log").inner_text()
