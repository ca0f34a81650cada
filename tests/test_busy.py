"""A busy server, through the page: one command per page at a time, and a full queue says so.

Both tests hold the only command slot with a runaway `benchmark` (10,000 uncached pairs, given up at a
short time limit) so that other commands really wait, then watch what the page shows and sends.
"""

from __future__ import annotations

import pytest

from tests.browsing import DONE, REPLIES, Reply, ready
from tests.test_cancel import _pairs_file

pytestmark = [pytest.mark.browser, pytest.mark.long]

SENT = "#conversation .ask"
WAITING = "#conversation .pending"


def _send(page, line: str) -> None:
    """Type a line and press Enter without waiting for its reply."""
    box = page.locator("#command-box textarea")
    box.fill(line)
    box.press("Enter")


def _open(browser, url: str):
    page = browser.new_page()
    page.goto(url)
    ready(page)
    return page


def _replies(page, n: int, timeout: float = 60_000) -> list[Reply]:
    page.wait_for_function(f"n => document.querySelectorAll(\"{DONE}\").length >= n", arg=n, timeout=timeout)
    return [Reply(page, i) for i in range(n)]


def test_a_page_runs_one_command_at_a_time_and_says_so_when_asked_for_another(serve, browser, tmp_path):
    name = _pairs_file(tmp_path, 10_000)
    _, url = serve(time_limit_s=4, data_dir=str(tmp_path))
    page = _open(browser, url)
    _send(page, f"benchmark --data {name} --pool mean")  # runs for four seconds, then gives up
    page.wait_for_selector(WAITING)
    page.locator("#run-button").click()
    page.locator("[data-run]").first.click()  # a starter question: fills the box and presses Run
    page.wait_for_selector("#waiting-note")
    assert "still running" in page.locator("#waiting-note").inner_text()
    page.wait_for_timeout(500)
    assert page.locator(SENT).count() == 1  # nothing else was sent: no pile of commands from one page

    (reply,) = _replies(page, 1)
    assert "gave up after 4 seconds" in reply.inner_text()
    assert page.locator("#waiting-note").count() == 0  # the note goes with the reply
    assert page.locator(SENT).count() == 1
    _send(page, "tokenize A bird.")  # the page takes commands again
    (_, last) = _replies(page, 2)
    assert last.ok and "bird" in last.inner_text()
    page.close()


@pytest.mark.slow
def test_a_full_queue_answers_in_one_sentence_and_the_next_try_runs(serve, browser, tmp_path):
    name = _pairs_file(tmp_path, 10_000)
    _, url = serve(concurrency=1, queue_size=1, time_limit_s=4, data_dir=str(tmp_path))
    first, second, third = (_open(browser, url) for _ in range(3))  # each page's opening event done first
    _send(first, f"benchmark --data {name} --pool mean")  # runs
    first.wait_for_selector(WAITING)
    first.wait_for_timeout(500)
    _send(second, "tokenize A cat.")  # waits: the queue holds one
    second.wait_for_timeout(500)
    _send(third, "tokenize A dog.")  # no room
    (busy,) = _replies(third, 1, timeout=20_000)
    text = busy.inner_text()
    assert not busy.ok and "The server is busy" in text and "try again" in text, text
    assert text.count(".") <= 2  # one sentence, no traceback

    (waited,) = _replies(second, 1)
    assert waited.ok and "cat" in waited.inner_text()
    _send(third, "tokenize A dog.")  # the same line again, once there is room
    (_, again) = _replies(third, 2)
    assert again.ok and "dog" in again.inner_text()
    assert third.locator(REPLIES).count() == 2
    for page in (first, second, third):
        page.close()


@pytest.mark.slow
def test_a_line_typed_while_one_runs_stays_and_one_entered_while_the_page_opens_is_sent(serve, browser, tmp_path):
    name = _pairs_file(tmp_path, 10_000)
    _, url = serve(time_limit_s=4, concurrency=1, data_dir=str(tmp_path))
    page = _open(browser, url)
    _send(page, f"benchmark --data {name} --pool mean")  # holds the only slot for four seconds
    page.wait_for_selector(WAITING)
    assert page.locator("#command-box textarea").input_value() == ""  # the line left: the box is free
    page.locator("#command-box textarea").fill("tokenize typed while it ran")
    # a second visitor opens the page now: its open event waits behind the benchmark, and Enter comes first
    other = browser.new_page()
    other.goto(url)
    other.wait_for_selector("#command-box textarea")
    early = not other.evaluate("!!(window.assistant && window.assistant.loaded)")
    _send(other, "tokenize An early bird.")
    if early:
        other.wait_for_selector("#opening-note")
        assert "still opening" in other.locator("#opening-note").inner_text()
    (reply,) = _replies(page, 1)
    assert "gave up" in reply.inner_text()
    assert page.locator("#command-box textarea").input_value() == "tokenize typed while it ran"  # not erased
    (early_reply,) = _replies(other, 1)
    assert early_reply.ok and "early" in early_reply.inner_text().lower()
    assert other.locator("#opening-note").count() == 0
    assert early, "the second page opened before the benchmark ended: the test did not exercise the early Enter"
    other.close()
    page.close()
