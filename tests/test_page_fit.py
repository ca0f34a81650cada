"""Charts that used to be wider than their reply, measured in headless Chromium at the page's default width:
the benchmark's genre legend, both models' charts of a `--vs` reply, the vocabulary-basis map and its list of
points; and the labels of that map, read from Vega's own scene graph, do not overlap."""

from __future__ import annotations

import pytest

from tests.browsing import Watch, ask, chart_errors

pytestmark = pytest.mark.browser

LINES = (
    "compare A cat sat on the mat. | A kitten sat on the rug. --vs minilm:int8",
    "word bank | We sat on the river bank. | I deposited money at the bank. --vs minilm:int8",
    "attend The cat sat on the mat --layer 2 --head 5 --vs minilm:int8",
    "project I deposited money at the bank. --basis vocab",
)
BENCHMARK = "benchmark --sample 300 --pool cls,mean,sbert"

#: Per chart of a reply: [its right edge within the reply's box, nothing scrolled out of sight].
FITS = """r => { const own = r.getBoundingClientRect();
    return [...r.querySelectorAll('.chart')].map(c => [c.getBoundingClientRect().right <= own.right + 1,
                                                       c.scrollWidth <= c.clientWidth + 2]); }"""
#: The point labels a Vega view draws (text marks outside axes and legends, not the list's rows), as boxes.
LABELS = """id => { const out = [];
    const walk = (node, inAxis) => {
      if (!node) return;
      const role = node.role || (node.mark && node.mark.role) || '';
      const axis = inAxis || /axis|legend|title|header/.test(role);
      if (node.marktype === 'text' && !axis) {
        for (const item of node.items || []) {
          if (item.text && !String(item.text).includes(' · ') && item.bounds && item.opacity !== 0) {
            out.push([String(item.text), item.bounds.x1, item.bounds.y1, item.bounds.x2, item.bounds.y2]);
          }
        }
      }
      for (const child of node.items || []) walk(child, axis);
    };
    walk(window.assistant.views.get(id).scenegraph().root, false);
    return out; }"""


def _overlaps(boxes: list[list]) -> list[tuple[str, str]]:
    """Pairs of label boxes that overlap by more than a pixel each way."""
    found = []
    for i, (a, ax1, ay1, ax2, ay2) in enumerate(boxes):
        for b, bx1, by1, bx2, by2 in boxes[i + 1:]:
            if min(ax2, bx2) - max(ax1, bx1) > 1 and min(ay2, by2) - max(ay1, by1) > 1:
                found.append((a, b))
    return found


@pytest.mark.slow
def test_wide_charts_fit_their_reply_and_map_labels_do_not_overlap(live_app, browser, hub, tmp_path):
    page = browser.new_page()
    page.set_viewport_size({"width": 1280, "height": 900})  # the gallery's width, narrower than the tests' 1400
    watch = Watch.on(page)
    page.goto(live_app)
    page.wait_for_selector("#command-box textarea")
    lines = list(LINES) + ([BENCHMARK] if hub.settings.data_dir else [])
    for line in lines:
        reply = ask(page, line)
        assert reply.ok, (line, reply.inner_text()[:300])
        charts, drawn = reply.charts()
        assert charts >= 1 and drawn == charts, (line, charts, drawn, chart_errors(page))
        fits = reply.node.evaluate(FITS)
        assert all(inside and whole for inside, whole in fits), (line, fits)
        assert reply.count(".chart + .wide-cue") == 0, line
        if "--basis vocab" in line:
            chart_id = reply.node.locator(".chart").first.get_attribute("data-chart")
            labels = page.evaluate(LABELS, chart_id)
            assert len(labels) >= 5, labels  # the thinned labels are drawn, and the rest kept in tooltips
            assert _overlaps(labels) == [], _overlaps(labels)
        page.screenshot(path=str(tmp_path / f"fit-{lines.index(line)}.png"), full_page=True)
    assert chart_errors(page) == [] and watch.page_errors == [] and watch.console_errors == []
    page.close()


def test_a_table_wider_than_its_reply_scrolls_with_a_cue_and_a_narrow_one_has_none(live_app, browser):
    page = browser.new_page()
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(live_app)
    page.wait_for_selector("#command-box textarea")
    long = "The last time the survey was conducted, in 1995, those numbers matched exactly as before."
    wide = ask(page, f"compare In 1995, the last survey, those numbers were equal to the ones before. | {long} "
                     "--pool all")
    block = wide.node.locator(".table-block").first
    scroll = block.evaluate("b => [b.scrollWidth, b.clientWidth, getComputedStyle(b).overflowX]")
    assert scroll[0] > scroll[1] + 2 and scroll[2] == "auto", scroll  # the table really is wider, and scrolls
    cue = block.evaluate("b => b.nextElementSibling && b.nextElementSibling.classList.contains('wide-cue')"
                         " ? b.nextElementSibling.textContent : ''")
    assert cue.startswith("This table is wider than the reply"), cue
    block.evaluate("b => { b.scrollLeft = b.scrollWidth; }")  # the cut-off columns are reachable
    assert block.evaluate("b => b.scrollLeft") > 0
    narrow = ask(page, "tokenize cat")
    assert narrow.count(".table-block") >= 1 and narrow.count(".wide-cue") == 0
    # a folded table opened later is measured then
    folded = wide.node.locator("details.more-table").first
    folded.locator("summary").click()
    page.wait_for_function("d => d.open", arg=folded.element_handle())
    opened = folded.evaluate("d => [d.scrollWidth > d.clientWidth + 2, d.nextElementSibling"
                             " && d.nextElementSibling.classList.contains('wide-cue')]")
    assert opened[0] == opened[1], opened  # a cue exactly when its rows are wider than the reply
    page.close()
