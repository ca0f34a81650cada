"""A person at the page: headless Chromium types a command and reads the reply in the conversation."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser

COMPARE = "compare A man plays guitar. | Someone is playing an instrument. | The stock market fell."


class Reply:
    """The parts (text, chart, table bubbles) of one assistant reply in the conversation."""

    def __init__(self, page, first: int) -> None:
        self.parts = page.locator("[data-testid='bot']")
        self.first = first

    def new(self):
        return [self.parts.nth(i) for i in range(self.first, self.parts.count())]

    def inner_text(self) -> str:
        return "\n".join(part.inner_text() for part in self.new())

    def count(self, selector: str) -> int:
        return sum(part.locator(selector).count() for part in self.new())

    def cells(self) -> list[str]:
        return [c for part in self.new() for c in part.locator(".reply-table td").all_inner_texts()]


def ask(page, line: str, parts: int = 1) -> Reply:
    """Type a command, press Enter, and wait for ``parts`` new bubbles of the reply."""
    before = page.locator("[data-testid='bot']").count()
    box = page.locator("#command-box textarea")
    box.fill(line)
    box.press("Enter")
    page.wait_for_function(
        "n => document.querySelectorAll(\"[data-testid='bot']\").length >= n", arg=before + parts,
        timeout=120_000)
    return Reply(page, before)


def test_compare_reply_shows_text_chart_and_table(live_app, browser, tmp_path):
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(live_app)
    reply = ask(page, COMPARE, parts=3)  # text, chart, table
    page.wait_for_selector(".vega-embed canvas, .vega-embed svg", timeout=60_000)
    text = reply.inner_text()
    assert "Similarity matrix of 3 texts" in text
    assert "mean pooling" in text and "minilm" in text
    assert "0.6752" in reply.cells()  # guitar vs instrument, as the model computes it
    assert reply.count(".vega-embed canvas, .vega-embed svg") >= 1
    assert reply.count(".reply-table") == 1
    # the side panel holds the full table and downloads of the same reply
    page.wait_for_function("document.body.innerText.replace(/\\s+/g, '').includes('compare.json')", timeout=30_000)
    page.screenshot(path=str(tmp_path / "compare.png"), full_page=True)
    assert not errors, errors
    page.close()


def test_bad_input_is_one_sentence_and_the_page_keeps_working(live_app, browser):
    page = browser.new_page()
    page.goto(live_app)
    reply = ask(page, "compare only one text")
    assert "needs at least two texts" in reply.inner_text()
    reply = ask(page, "compar a | b")
    assert "Did you mean `compare`?" in reply.inner_text() or "Did you mean compare?" in reply.inner_text()
    reply = ask(page, "compare a cat | a dog", parts=3)
    assert reply.count(".reply-table") == 1
    assert "Cosine similarity" in reply.inner_text()
    page.close()
