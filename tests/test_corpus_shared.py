"""A shared server (a Space, `--share`): each visitor's corpora are their own, within limits named in refusals,
and they live as long as the conversation (a reload keeps them)."""

from __future__ import annotations

import pytest

from tests.browsing import DONE, Reply, ask, ready
from tests.test_corpus_commands import write_reviews

pytestmark = [pytest.mark.browser, pytest.mark.long]


def _visitor(browser, url):
    context = browser.browser.new_context(viewport={"width": 1400, "height": 1000})  # a browser of their own
    page = context.new_page()
    page.goto(url)
    ready(page)
    return context, page


def _upload(page, path) -> str:
    page.locator("#corpus-upload input[type=file]").set_input_files(str(path))
    page.wait_for_function("document.querySelector('#command-box textarea').value.startsWith('corpus load')",
                           timeout=60_000)
    return page.locator("#command-box textarea").input_value()


def test_two_visitors_neither_list_nor_search_each_others_corpora(serve, browser, tmp_path):
    data = write_reviews(tmp_path / "mine.csv", 60)
    _, url = serve(corpus_shared=True, corpus_dir=str(tmp_path / "corpora"), corpus_conversation_rows=100)
    alice_context, alice = _visitor(browser, url)
    bob_context, bob = _visitor(browser, url)
    try:
        loaded = ask(alice, _upload(alice, data) + " --name alices-reviews")
        assert loaded.ok, loaded.inner_text()
        hits = ask(alice, "search late delivery --k 3")
        assert hits.ok and hits.count("button.row-run") == 3
        hits.node.screenshot(path=str(tmp_path / "search.png"))
        best = hits.cells()[4]  # the first hit's text (query, rank, id, score, text, ...)
        before = alice.locator(DONE).count()
        hits.node.locator("button.row-run").first.click()  # runs `why late delivery | #ID`
        alice.wait_for_function(f"document.querySelectorAll(\"{DONE}\").length > {before}", timeout=120_000)
        why = Reply(alice, before)
        assert why.ok and "why" in why.inner_text() and best[:30] in why.inner_text(), why.inner_text()[:400]

        listing = ask(bob, "corpus")
        assert "alices-reviews" not in listing.inner_text()
        refused = ask(bob, "search late delivery --corpus alices-reviews")
        assert not refused.ok and "There is no corpus" in refused.inner_text()
        assert "alices-reviews" not in refused.inner_text().split("There is no corpus")[1].split(";")[1]
        by_name = ask(bob, "corpus load mine.csv")  # a file name Alice uploaded is not Bob's to read
        assert not by_name.ok

        # Alice's corpus comes back after a reload: it belongs to her conversation, not to the tab
        alice.reload()
        ready(alice)
        assert ask(alice, "search refund --k 2 --corpus alices-reviews").ok

        # the per-conversation rows limit is named in its refusal
        more = write_reviews(tmp_path / "more.csv", 70)  # other texts: 60 + 70 rows
        refused = ask(alice, _upload(alice, more))
        assert not refused.ok and "ASSISTANT_CORPUS_CONVERSATION_ROWS" in refused.inner_text()
        assert "100 rows" in refused.inner_text()
        # the upload field is ready for the next file at once (it was emptied once the box named the last one)
        alice.locator("#corpus-upload input[type=file]").set_input_files(str(write_reviews(tmp_path / "third one.csv",
                                                                                          5)))
        alice.wait_for_function("document.querySelector('#command-box textarea').value === "
                                "'corpus load \"third one.csv\"'", timeout=60_000)
    finally:
        alice_context.close()
        bob_context.close()
