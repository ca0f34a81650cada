"""Every attention head drawn by the page (heads.js) in headless Chromium: the raster grid of every layer x head
within the reply, each map drawn, and the bertviz-style head view (hover a token, pick a layer and a head)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from assistant.dispatch import execute
from assistant.render.html import reply_payload
from assistant.render.raster import drawing_png, viridis_table
from assistant.session import Session
from assistant.sharing.export import html_page
from tests.browsing import Watch, ask, chart_errors
from tools.attention.grids import head_grid

#: 32 tokens with [CLS] and [SEP].
TEXT = ("The quick brown fox jumps over the lazy dog while the old cat sleeps quietly on a warm mat near the "
        "open kitchen window in the early morning light today")
PNG = b"\x89PNG\r\n\x1a\n"

#: Per heatmap canvas of the reply: whether it is drawn (opaque) and shows more than one colour.
CANVASES = """r => [...r.querySelectorAll('.drawing .heads-grid canvas')].map(c => {
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    const colours = new Set();
    let opaque = true;
    for (let i = 0; i < d.length; i += 4) {
      colours.add(d[i] << 16 | d[i + 1] << 8 | d[i + 2]);
      opaque &&= d[i + 3] === 255;
    }
    return opaque && colours.size > 1; })"""
#: The head view's state and a fingerprint of its lines' pixels.
HEAD_VIEW = """r => { const h = r.querySelector('.drawing'); const c = h.querySelector('canvas.hv-lines');
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let sum = 0; for (let i = 3; i < d.length; i += 4) sum += d[i] * ((i >> 2) % 9973);
    return {layer: h.dataset.layer, head: h.dataset.head, hover: h.dataset.hover, lines: +h.dataset.lines,
            lit: h.dataset.highlighted, pixels: sum}; }"""
#: Whether every drawing and chart of the reply ends within the reply's box.
INSIDE = """r => { const own = r.getBoundingClientRect();
    return [...r.querySelectorAll('.drawing, .drawing .heads-grid, .drawing .head-view, .chart')]
      .map(c => c.getBoundingClientRect().right <= own.right + 1 && c.scrollWidth <= c.clientWidth + 2); }"""


def test_a_32_token_reply_sends_every_weight_as_one_byte_and_the_exports_draw_it(hub, tmp_path):
    reply = execute(f"attend {TEXT}", Session(), hub)
    assert reply.ok, reply.error
    (drawing,) = reply.result.drawings
    assert drawing.meta["shape"] == [6, 12, 32, 32] and len(drawing.data) == 6 * 12 * 32 * 32
    payload = json.dumps(reply_payload(reply))
    assert len(payload) < 110_000  # the Vega-Lite grid sent 418 KB and showed blocks of 4 tokens
    assert len(json.dumps(reply_payload(reply)["drawings"])) < 60_000  # 73,728 weights, deflated
    png = drawing_png(drawing)
    assert png.startswith(PNG)
    page = html_page([_turn(reply, f"attend {TEXT}")])
    assert "data:image/png;base64," in page and "rows are layers 1–6, columns heads 1–12" in page
    assert "<script" not in page


def test_quantised_weights_are_within_half_a_step_and_long_texts_are_grouped_in_blocks():
    rng = np.random.default_rng(0)
    attn = rng.random((2, 3, 10, 10)).astype(np.float32)
    attn /= attn.sum(-1, keepdims=True)
    grid = head_grid(attn, [str(i) for i in range(10)], [1, 2], [1, 2, 3])
    assert grid.block == 1 and grid.weights.dtype == np.uint8
    assert np.abs(grid.weights / 255.0 - attn).max() <= 0.5 / 255 + 1e-7
    small = head_grid(attn, [str(i) for i in range(10)], [2], [3], most=4)
    assert small.block == 3 and small.tokens == ("0–2", "3–5", "6–8", "9–9")
    np.testing.assert_allclose(small.weights.sum(-1) / 255.0, 1.0, atol=4 * 0.5 / 255)
    colours = viridis_table()
    ends = np.array([colours[0], colours[255]], dtype=int)
    assert np.abs(ends - [[68, 1, 84], [253, 231, 37]]).max() <= 4  # viridis' ends, #440154 and #fde725


def _turn(reply, line):
    from assistant.session import FullTurn

    return FullTurn(line=line, result=reply.result, model=reply.result.model)


@pytest.mark.browser
def test_every_head_is_drawn_within_the_reply_and_the_head_view_answers_hover_and_picks(live_app, browser,
                                                                                     tmp_path):
    page = browser.new_page()
    watch = Watch.on(page)
    page.goto(live_app)
    page.wait_for_selector("#command-box textarea")
    reply = ask(page, f"attend {TEXT}")
    assert reply.ok, reply.inner_text()[:300]
    page.wait_for_selector("#conversation .reply .drawing[data-drawn='1']")
    drawn = reply.node.evaluate(CANVASES)
    assert len(drawn) == 6 * 12 and all(drawn), drawn  # layers x heads, each drawn and not blank
    assert all(reply.node.evaluate(INSIDE))
    assert reply.charts() == (1, 1)  # the pattern chart, drawn by Vega-Lite
    page.screenshot(path=str(tmp_path / "heads.png"), full_page=True)

    view = reply.node.locator(".drawing .head-view")
    start = reply.node.evaluate(HEAD_VIEW)
    assert start["layer"] == "1" and start["head"] == "all" and start["hover"] == "" and start["lines"] > 0
    view.locator(".hv-left span").nth(4).hover()  # "fox": only its lines, the keys it reads shaded
    fox = reply.node.evaluate(HEAD_VIEW)
    assert fox["hover"] == "q4" and 0 < fox["lines"] < start["lines"] and fox["lit"]
    assert fox["pixels"] != start["pixels"]
    view.locator(".hv-left span").nth(12).hover()  # "cat"
    cat = reply.node.evaluate(HEAD_VIEW)
    assert cat["hover"] == "q12" and cat["lit"] != fox["lit"] and cat["pixels"] != fox["pixels"]
    view.locator(".hv-right span").nth(0).hover()  # [CLS] on the key side: the queries that read it
    cls = reply.node.evaluate(HEAD_VIEW)
    assert cls["hover"] == "k0" and all(x.startswith("q") for x in cls["lit"].split(","))
    page.mouse.move(0, 0)

    view.locator("select.hv-layer").select_option(label="layer 3")
    layer3 = reply.node.evaluate(HEAD_VIEW)
    assert layer3["layer"] == "3" and layer3["head"] == "all" and layer3["pixels"] != start["pixels"]
    view.locator("select.hv-head").select_option(label="head 5")
    head5 = reply.node.evaluate(HEAD_VIEW)
    assert head5["layer"] == "3" and head5["head"] == "5" and head5["pixels"] != layer3["pixels"]
    reply.node.locator(".heads-grid canvas[data-layer='1'][data-head='3']").click()  # the previous-token head
    prev = reply.node.evaluate(HEAD_VIEW)
    assert prev["layer"] == "1" and prev["head"] == "3" and prev["pixels"] != head5["pixels"]
    view.locator(".hv-left span").nth(4).hover()
    assert reply.node.evaluate(HEAD_VIEW)["lit"] == "k3"  # layer 1 head 3: "fox" reads "brown" alone
    view.scroll_into_view_if_needed()
    page.screenshot(path=str(tmp_path / "head-view.png"))
    assert chart_errors(page) == [] and watch.page_errors == [] and watch.console_errors == []
    assert watch.offsite == []
    page.close()
