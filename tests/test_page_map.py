"""The corpus map in headless Chromium against the real app: `map` draws every point with WebGL from binary
coordinates (8-12 bytes a point), hovering shows a text, a selection lists texts in the side panel and then
`search ... --in selection` answers from the selection only; no page error."""

from __future__ import annotations

import pytest

from tests.browsing import Watch, ask
from tests.corpus_helpers import clustered, vector_corpus
from tools.corpus.store import CorpusStore

pytestmark = [pytest.mark.browser, pytest.mark.long]
WAIT_DRAWN = "() => !!document.querySelector('.corpus-map[data-drawn=\"1\"]')"


def _corpus(tmp_path, rows: int, hub) -> str:
    """A corpus of ``rows`` synthetic texts whose vectors are made directly (plus MiniLM-like dims for search)."""
    lm = hub.get("minilm")
    words = ["delivery late", "refund money", "great product", "broken screen", "friendly staff"]
    vectors, groups = clustered(rows, lm.hidden_size, 5, seed=3)
    texts = [f"{words[g]} number {i}" for i, g in enumerate(groups)]
    store = CorpusStore(tmp_path / "corpora")
    corpus = vector_corpus(store, tmp_path, texts, vectors, "reviews", 4096)
    corpus.manifest.model = "minilm"  # searched with the real model's query vectors
    corpus.write_manifest()
    return str(store.root)


def _open(browser, url):
    page = browser.new_page()
    watch = Watch.on(page)
    sizes: dict[str, int] = {}
    page.on("response", lambda r: sizes.__setitem__(r.url, len(r.body())) if "/assistant/map/" in r.url
            and r.url.endswith("/points") else None)
    page.goto(url)
    page.wait_for_selector("#command-box textarea")
    return page, watch, sizes


def test_map_draws_every_point_hovers_selects_and_searches_the_selection(serve, browser, hub, tmp_path):
    rows = 5_000
    _, url = serve(corpus_dir=_corpus(tmp_path, rows, hub))
    page, watch, sizes = _open(browser, url)
    reply = ask(page, "map")
    assert reply.ok, reply.inner_text()[:400]
    page.wait_for_function(WAIT_DRAWN, timeout=60_000)
    token = page.get_attribute(".corpus-map", "data-map")
    state = f"window.assistantMap.states.get({token!r})"
    assert page.evaluate(f"{state}.plot.get('isPointsDrawn')") is True
    assert page.evaluate(f"{state}.plot.get('points').length") == rows
    # pixels: the canvas is not blank (WebGL2 through SwiftShader)
    painted = page.evaluate("""() => { const c = document.querySelector('.map-canvas');
        const o = document.createElement('canvas'); o.width = c.width; o.height = c.height;
        const g = o.getContext('2d'); g.drawImage(c, 0, 0);
        const d = g.getImageData(0, 0, o.width, o.height).data; let n = 0;
        for (let i = 0; i < d.length; i += 4) if (d[i] < 240 || d[i + 1] < 240 || d[i + 2] < 240) n++;
        return n; }""")
    assert painted > 1000, painted
    points = [size for u, size in sizes.items() if token in u]
    assert points and 8 * rows <= points[0] <= 12 * rows, points
    # hover: the point's own screen position, then its text in the tooltip
    box = page.locator(".map-canvas").bounding_box()
    at = page.evaluate(f"{state}.plot.getScreenPosition(123)")
    page.mouse.move(box["x"] + at[0], box["y"] + at[1])
    page.wait_for_selector(".map-tip:not([hidden])", timeout=10_000)
    assert "number" in page.inner_text(".map-tip")
    # a selection (regl-scatterplot's select API, as a lasso ends): listed in the side panel, kept on the server
    chosen = list(range(0, rows, rows // 50))[:40]
    page.evaluate(f"{state}.plot.select({chosen})")
    page.wait_for_function("() => document.querySelectorAll('#map-selection li').length > 0", timeout=10_000)
    assert "40 selected" in page.inner_text("#map-selection")
    page.wait_for_timeout(300)
    reply = ask(page, "search refund money --in selection --k 5")
    assert reply.ok, reply.inner_text()[:400]
    assert "the 40 selected rows" in reply.inner_text()
    column = [h.strip() for h in reply.node.locator(".reply-table thead th").all_inner_texts()].index("id") + 1
    ids = [int(c) for c in reply.node.locator(f".reply-table tbody tr td:nth-child({column})").all_inner_texts()]
    assert ids and set(ids) <= set(chosen), ids
    # a lasso drawn with the mouse (shift + drag): the points inside the drawn square are selected and listed
    page.evaluate(f"{state}.plot.deselect()")
    page.locator(".map-canvas").scroll_into_view_if_needed()
    box = page.locator(".map-canvas").bounding_box()  # the search reply below has moved the map
    at = page.evaluate(f"{state}.plot.getScreenPosition(123)")  # a square around a point that is surely there
    cx = min(max(box["x"] + at[0], box["x"] + 80), box["x"] + box["width"] - 80)  # the square stays on the map
    cy = min(max(box["y"] + at[1], box["y"] + 80), box["y"] + box["height"] - 80)
    # the lasso closes itself: it ends at the fourth corner, far from its start (a mouse-up near the start is a click)
    corners = [(cx - 70, cy - 70), (cx + 70, cy - 70), (cx + 70, cy + 70), (cx - 70, cy + 70)]
    page.keyboard.down("Shift")
    page.mouse.move(*corners[0])
    page.mouse.down()
    for x, y in corners[1:]:
        page.mouse.move(x, y, steps=12)
    page.mouse.up()
    page.keyboard.up("Shift")
    page.wait_for_function(f"() => {state}.plot.get('selectedPoints').length > 0", timeout=10_000)
    lassoed = page.evaluate(f"{state}.plot.get('selectedPoints')")
    inside = page.evaluate(f"""(ids) => ids.map(i => {state}.plot.getScreenPosition(i))""", lassoed)
    assert all(cx - 75 - box["x"] <= x <= cx + 75 - box["x"] and cy - 75 - box["y"] <= y <= cy + 75 - box["y"]
               for x, y in inside), "a lassoed point lies outside the drawn square"
    page.wait_for_function(f"() => document.querySelector('#map-selection').innerText.includes('{len(lassoed):,} "
                           "selected')", timeout=10_000)
    assert watch.page_errors == [], watch.page_errors
    assert page.evaluate("window.assistant.errors") == []
    page.screenshot(path=str(tmp_path / "map-20k.png"))
    page.close()


def test_another_conversation_cannot_fetch_the_map(serve, browser, hub, tmp_path):
    import urllib.error
    import urllib.request

    _, url = serve(corpus_dir=_corpus(tmp_path, 2000, hub))
    page, _, _ = _open(browser, url)
    ask(page, "map")
    page.wait_for_function(WAIT_DRAWN, timeout=60_000)
    token = page.get_attribute(".corpus-map", "data-map")
    with urllib.request.urlopen(f"{url}assistant/map/{token}/meta") as r:  # the token is the key
        assert r.status == 200
    for guess in ("x" * 32, token[:-1] + ("A" if token[-1] != "A" else "B")):
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(f"{url}assistant/map/{guess}/points")
        assert err.value.code == 404
    page.close()


@pytest.mark.slow
def test_a_map_of_100k_points_screenshot(serve, browser, hub, tmp_path):
    rows = 100_000
    _, url = serve(corpus_dir=_corpus(tmp_path, rows, hub), time_limit_s=300)
    page, watch, _ = _open(browser, url)
    ask(page, "map")
    page.wait_for_function(WAIT_DRAWN, timeout=120_000)
    shot = tmp_path / "map-100k.png"
    page.locator(".corpus-map").screenshot(path=str(shot))
    assert watch.page_errors == []
    print("screenshot", shot)  # docs/gallery/map-100k.png is one of these
    assert page.evaluate("document.querySelector('.corpus-map').dataset.points") == str(rows)
