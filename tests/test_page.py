"""The page as a person uses it, in headless Chromium against the real app and model.

Every example of every command draws its charts with no page or console error; a reply
reads top-down and lands with its first line in view; a long conversation costs what a
short one does; the `project` brush lists the tokens inside the box and hovering a point
shows its tooltip; starter questions and "put it in the box" buttons work.
"""

from __future__ import annotations

import re

import pytest

from assistant.commands.registry import COMMANDS
from assistant.render.starters import starters_html
from tests.browsing import DRAWN, REPLIES, Watch, ask, chart_errors, log_text, ready

pytestmark = [pytest.mark.browser, pytest.mark.long]

COMPARE = "compare A man plays guitar. | Someone is playing an instrument. | The stock market fell."
#: Chart variants beyond the table's examples: one head, one layer, one head in every layer, the model
#: view, projections of tokens / sentences / 3-D / the vocabulary basis, `vocab` in 3-D.
VARIANTS = (
    "attend The cat sat on the mat --head 3",
    "project A man plays guitar. | Someone is playing an instrument. | The stock market fell. | A cat. "
    "--level sentences --dims 3",
    "project The bank of the river. --dims 3",
)


def _page(browser, live_app):
    page = browser.new_page()
    watch = Watch.on(page)
    page.goto(live_app)
    page.wait_for_selector("#command-box textarea")
    return page, watch


def _with_context(lines: list[str]) -> list[str]:
    """`again` re-runs the previous command: give each of its examples a command that takes its options.
    `export` runs after the first reply: the page's export reply is what is checked here (exporting a long
    conversation, every turn recomputed and drawn, is `tests/test_sharing.py`'s)."""
    out = []
    for line in lines:
        if line.startswith("again "):
            out.append("compare A cat. | A kitten." if "--pool" in line else "attend The cat sat on the mat")
        out.append(line)
    exports = [line for line in out if line.split()[0] == "export"]
    rest = [line for line in out if line.split()[0] != "export"]
    return rest[:1] + exports + rest[1:]


def _mask_unavailable(line: str) -> bool:
    """`mask` needs a masked-LM model; with no network its fallback (bert-small) cannot load here; `lens` needs
    the conversation's own model to have a masked-LM head, which minilm lacks."""
    return line.startswith(("mask ", "lens "))


def test_the_first_example_of_every_command_draws_its_charts(live_app, browser, hub, tmp_path):
    """Generated from the command table: a new command is covered by adding its row."""
    _examples_draw(browser, live_app, hub, tmp_path, [spec.examples[0] for spec in COMMANDS], drawn_at_least=20)


@pytest.mark.slow
def test_every_example_of_every_command_draws_its_charts(live_app, browser, hub, tmp_path):
    _examples_draw(browser, live_app, hub, tmp_path,
                   [example for spec in COMMANDS for example in spec.examples] + list(VARIANTS), drawn_at_least=40)


def _examples_draw(browser, live_app, hub, tmp_path, examples: list[str], drawn_at_least: int) -> None:
    page, watch = _page(browser, live_app)
    lines = _with_context(examples)
    no_data = not hub.settings.data_dir
    drawn_total = 0
    sent_per_command = []
    for line in lines:
        before = len(watch.sent)
        reply = ask(page, line)
        sent_per_command.append(watch.bytes_sent(before))
        text = reply.inner_text()
        expect_ok = not _mask_unavailable(line) and not (no_data and line.startswith("benchmark"))
        assert reply.ok == expect_ok, (line, text[:300])
        charts, drawn = reply.charts()
        assert drawn == charts, (line, charts, drawn, chart_errors(page))
        # a chart or table fits its reply, or scrolls inside it with a visible cue: never cut off silently
        fits = reply.node.evaluate("""r => [...r.querySelectorAll('.chart, .table-block')].map(c => {
            const box = c.getBoundingClientRect(), own = r.getBoundingClientRect();
            const wide = c.scrollWidth > c.clientWidth + 2;
            return box.right <= own.right + 1 && (!wide || (c.classList.contains('wide')
                && getComputedStyle(c).overflowX === 'auto' && !!c.nextElementSibling
                && c.nextElementSibling.classList.contains('wide-cue'))); })""")
        assert all(fits), (line, fits)
        drawn_total += drawn
    assert chart_errors(page) == []
    assert watch.page_errors == [], watch.page_errors
    assert watch.console_errors == [], watch.console_errors
    assert drawn_total >= drawn_at_least  # most commands draw at least one chart
    assert max(sent_per_command) < 4096, sent_per_command  # a command sends its line, never the conversation
    page.screenshot(path=str(tmp_path / "examples.png"))
    page.close()


def test_a_reply_reads_top_down_answer_chart_then_a_short_table(live_app, browser):
    page, watch = _page(browser, live_app)
    reply = ask(page, COMPARE)
    first = reply.node.locator(":scope > *").first
    assert "answer" in first.get_attribute("class")
    assert first.inner_text().startswith("Similarity matrix of 3 texts")
    children = reply.node.evaluate("n => [...n.children].map(c => c.className.split(' ')[0])")
    assert children.index("answer") < children.index("chart") < children.index("table-block"), children
    assert reply.charts() == (1, 1)
    assert "0.6752" in reply.cells()  # guitar vs instrument, as the model computes it
    # the side panel holds the full table and downloads of the same reply
    page.wait_for_function("document.querySelector('#downloads').innerText.replace(/\\s+/g, '')"
                           ".includes('compare.json')", timeout=30_000)
    # a long table shows 8 rows open and folds the rest
    reply = ask(page, "tokenize " + " ".join(["word"] * 40))
    assert reply.node.locator(".table-block > table tbody tr").count() == 8
    assert reply.node.locator("details.more-rows").count() == 1
    assert not reply.node.locator("details.more-rows").evaluate("d => d.open")
    assert watch.page_errors == [] and watch.console_errors == []
    page.close()


@pytest.mark.slow
def test_a_new_reply_lands_with_its_first_line_in_view(live_app, browser):
    page, _ = _page(browser, live_app)
    for line in ("attend The cat sat on the mat", "word bank | We sat on the river bank. | I went to the bank.",
                 "attend The dog chased the ball across the yard"):
        reply = ask(page, line)
        visible = page.evaluate(
            """(i) => { const log = document.querySelector('#conversation .log').getBoundingClientRect();
                        const r = document.querySelectorAll('#conversation .reply')[i].getBoundingClientRect();
                        return r.top >= log.top - 1 && r.top + 20 <= log.bottom; }""", reply.index)
        assert visible, line
    # the log is scrolled away from its end: the reply's long table is below the fold, not the answer
    at_end = page.evaluate("(() => { const l = document.querySelector('#conversation .log');"
                           " return l.scrollHeight - l.scrollTop - l.clientHeight < 2; })()")
    assert not at_end
    page.close()


@pytest.mark.slow
def test_a_long_conversation_costs_what_a_short_one_does(live_app, browser):
    """30 turns (`tokenize`, every fifth `attend`) with two reloads between them: the bytes each command sends do
    not grow, and every reply stays reachable (a reload brings the whole conversation back)."""
    page, watch = _page(browser, live_app)
    sent = []
    for turn in range(30):
        if turn in (10, 20):
            page.reload()
            ready(page)
            assert page.locator(REPLIES).count() == turn  # nothing lost
        before = len(watch.sent)
        verb = "attend" if turn % 5 == 4 else "tokenize"
        ask(page, f"{verb} The cat sat on the mat number {turn}")
        sent.append(watch.bytes_sent(before))
    assert sent[29] <= 1.2 * sent[4] and sent[28] <= 1.2 * sent[2], sent
    assert page.locator(REPLIES).count() == 30
    assert [f"number {t}" in log_text(page) for t in range(30)] == [True] * 30
    assert "number 0" in log_text(page)
    # the first reply's chart was put to rest to keep the page light, and comes back on a click
    first = page.locator(REPLIES).first
    assert first.locator(DRAWN).count() == 0
    first.locator("button.redraw").first.click()
    page.wait_for_function("() => document.querySelector('#conversation .reply').querySelector("
                           "'.vega-embed canvas, .vega-embed svg.marks') !== null", timeout=30_000)
    assert chart_errors(page) == [] and watch.page_errors == [] and watch.console_errors == []
    page.close()


@pytest.mark.slow
def test_the_project_brush_lists_the_tokens_inside_the_box_and_points_have_tooltips(live_app, browser):
    page, watch = _page(browser, live_app)
    reply = ask(page, "project The bank of the river. | The bank raised its rates.")
    chart = reply.node.locator(".chart").first.get_attribute("data-chart")
    listing = """(id) => { const out = []; const walk = (node) => { for (const item of node.items || []) {
        if (node.marktype === 'text' && String(item.text).includes('\u00b7')) out.push(String(item.text));
        for (const c of item.items || []) walk(c); } };
        walk(window.assistant.views.get(id).scenegraph().root); return out; }"""
    everything = page.evaluate(listing, chart)
    assert len(everything) == 18  # 16 tokens and 2 sentence vectors, listed when nothing is brushed
    box = reply.node.locator("canvas").first.bounding_box()
    # hover: somewhere over the scatter a point shows its tooltip
    shown = False
    for fx in range(40, 300, 6):
        for fy in range(40, 320, 12):
            page.mouse.move(box["x"] + fx, box["y"] + fy)
            if page.evaluate("(() => { const t = document.querySelector('#vg-tooltip-element');"
                             " return !!t && t.classList.contains('visible') && t.innerText.includes('token'); })()"):
                shown = True
                break
        if shown:
            break
    assert shown, "no tooltip appeared over the scatter"
    assert "drag a box to list the points" in reply.node.locator(".chart-hint").inner_text()
    # drag a box over the top-left of the scatter: the list shows the points inside it, and only those
    page.mouse.move(box["x"] + 40, box["y"] + 40)
    page.mouse.down()
    page.mouse.move(box["x"] + 150, box["y"] + 200, steps=10)
    page.mouse.up()
    page.wait_for_timeout(300)
    brush = page.evaluate("(id) => window.assistant.views.get(id).signal('brush')", chart)
    listed = page.evaluate(listing, chart)
    assert 1 <= len(listed) < len(everything), listed
    rows = [row.locator("td").all_inner_texts() for row in reply.node.locator(".reply-table tbody tr").all()]
    (x0, x1), (y0, y1) = sorted(brush["dim1"]), sorted(brush["dim2"])
    for entry in listed:
        token, text, position = [part.strip() for part in entry.split("\u00b7")]
        if position.endswith("—"):
            continue  # a sentence vector: not a row of the coordinates table
        (x, y), = [(float(r[4]), float(r[5])) for r in rows
                   if r[2] == token and r[1] == position.lstrip("#") and r[0].startswith(text)]
        assert x0 - 1e-3 <= x <= x1 + 1e-3 and y0 - 1e-3 <= y <= y1 + 1e-3, (entry, brush)
    assert watch.page_errors == [] and watch.console_errors == []
    page.close()


def test_starters_and_command_buttons_put_work_one_click_away(live_app, browser):
    page, _ = _page(browser, live_app)
    starters = page.locator("#conversation button.starter")
    assert starters.count() >= 5
    assert "paraphrases" in starters.first.inner_text()
    ready(page)
    before = page.locator(REPLIES).count()
    starters.first.click()
    page.wait_for_function("n => document.querySelectorAll(\"#conversation .reply[data-done='1']\").length > n",
                           arg=before, timeout=120_000)
    assert "cosine" in page.locator(REPLIES).last.inner_text().lower()
    page.close()


def test_bad_input_is_one_sentence_and_the_page_keeps_working(live_app, browser):
    page, watch = _page(browser, live_app)
    reply = ask(page, "compare only one text")
    assert not reply.ok and "needs at least two texts" in reply.inner_text()
    assert page.locator("#command-box textarea").input_value() == "compare only one text"  # kept to fix
    reply = ask(page, "compar a | b")
    assert re.search(r"Did you mean compare\?", reply.inner_text()), reply.inner_text()
    reply = ask(page, "compare a cat | a dog")
    assert reply.ok and reply.charts() == (1, 1)
    assert "cosine 0." in reply.inner_text().lower() and "unrelated pairs" in reply.inner_text()
    assert watch.page_errors == [] and watch.console_errors == []
    page.close()


def test_a_question_sent_before_the_page_finished_opening_is_not_marked_unanswered(live_app, browser):
    # The page-open event (a permalink's command, usually nothing) may finish after the visitor's first
    # Enter; its empty result must leave that question waiting for its own reply.
    page, watch = _page(browser, live_app)
    page.evaluate("() => { window.assistant.ask('compare a | b'); return window.assistant.append(null, true); }")
    assert page.locator("#conversation .pending").count() == 1
    assert page.locator("#conversation .reply.error").count() == 0
    page.evaluate("() => window.assistant.append(null)")  # the command's own event with nothing: a failure
    assert "did not answer" in page.locator("#conversation .reply.error").inner_text()
    reply = ask(page, "compare a cat | a dog")  # and the page goes on working
    assert reply.ok and reply.charts() == (1, 1)
    assert watch.page_errors == [] and watch.console_errors == []
    page.close()


def test_a_typo_gets_its_corrected_line_one_click_away(live_app, browser):
    page, _ = _page(browser, live_app)
    reply = ask(page, "compre A cat. | A kitten.")
    assert not reply.ok and "Did you mean compare?" in reply.inner_text()
    assert page.locator("#command-box textarea").input_value() == "compre A cat. | A kitten."  # back to edit
    reply.node.locator("button.suggestion").first.click()
    assert page.locator("#command-box textarea").input_value() == "compare A cat. | A kitten."
    reply = ask(page, "attend The cat sat --layr 2")
    reply.node.locator("button.suggestion").first.click()
    assert page.locator("#command-box textarea").input_value() == "attend The cat sat --layer 2"
    page.close()


def test_the_side_panel_shows_the_replys_main_table_and_mask_is_offered_only_where_it_answers(live_app, browser):
    page, _ = _page(browser, live_app)
    starters = page.locator("#conversation button.starter").evaluate_all("bs => bs.map(b => b.dataset.run)")
    assert starters and not any(s.startswith("mask ") for s in starters)  # no masked-LM model loads here
    assert any(s.startswith("mask ") for s in re.findall(r"data-run='([^']*)'", starters_html(can_mask=True)))
    ask(page, "tokenize Unbelievable results")  # tables: tokens, then round trip
    page.wait_for_function("document.querySelector('#full-table').innerText.includes('Full table: tokens')",
                           timeout=30_000)
    ask(page, "compare A cat sat on the mat. | A kitten sat on the rug. | Stocks fell sharply today.")
    page.wait_for_function("document.querySelector('#full-table').innerText.includes('Full table: similarity')",
                           timeout=30_000)
    shown = page.locator("#full-table").inner_text()
    assert re.search(r"\b0\.\d{4}\b", shown) and not re.search(r"\d\.\d{6,}", shown)  # 4 decimals, as in the reply
    ask(page, "help syntax")  # a reply without a table: the panel says so, no blank grid with columns 1 2 3
    page.wait_for_function("document.querySelector('#full-table').innerText.includes('this reply has no table')",
                           timeout=30_000)
    page.close()
