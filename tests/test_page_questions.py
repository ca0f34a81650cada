"""Questions in plain English on the page, in headless Chromium against the real app and model.

A typed question answers with "Read as: <command line>" above its reply and draws its chart;
clicking that line puts it in the box to edit; a follow-up in words changes one option; a vague
question offers command lines instead of an answer, and clicking one fills the box.
"""

from __future__ import annotations

import pytest

from tests.browsing import Watch, ask

pytestmark = pytest.mark.browser

QUESTION = "How similar are 'A man plays guitar.', 'Someone is playing an instrument.' and 'The stock market fell.'?"
LINE = "compare A man plays guitar. | Someone is playing an instrument. | The stock market fell."


def test_a_question_is_read_as_a_command_shown_and_one_click_from_the_box(live_app, browser):
    page = browser.new_page()
    watch = Watch.on(page)
    page.goto(live_app)
    page.wait_for_selector("#command-box textarea")
    box = page.locator("#command-box textarea")

    reply = ask(page, QUESTION)
    assert reply.ok
    read_as = reply.node.locator(".read-as")
    assert read_as.inner_text().startswith("Read as:") and LINE in read_as.inner_text()
    assert reply.charts() == (1, 1)  # the similarity heatmap is drawn
    assert "Similarity matrix of 3 texts" in reply.inner_text()
    why = read_as.locator("details.read-why")  # why it was read so, one click away
    why.locator("summary").click()
    assert "nearest example question" in why.inner_text() and "cosine" in why.inner_text()
    read_as.locator("button.line").click()
    assert box.input_value() == LINE  # in the box, to edit and run

    follow = ask(page, "now with CLS pooling")
    assert follow.ok and f"{LINE} --pool cls" in follow.node.locator(".read-as").inner_text()
    assert "cls" in follow.inner_text().lower()

    vague = ask(page, "translate this to French")
    assert not vague.ok and vague.node.locator(".read-as").count() == 0 and vague.charts() == (0, 0)
    offered = vague.node.locator(".suggestions button.line")
    assert 2 <= offered.count() <= 3
    first = offered.first.get_attribute("data-fill")
    offered.first.click()
    assert box.input_value() == first
    assert watch.page_errors == [] and watch.console_errors == []
    page.close()
