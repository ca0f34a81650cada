"""`--vs MODEL`: one reply with two models' answers side by side.

Each model's numbers must equal that model's own reply; tables carry a `model`
column; each chart is drawn once per model; `again --vs` works; bad names and
commands that do not take `--vs` get one sentence.
"""

from __future__ import annotations

import pytest

from assistant.commands.registry import COMMANDS
from assistant.dispatch import execute
from assistant.render.vega import vegalite_version
from assistant.session import Session
from tests.test_masking import build_tiny
from tools.core.config import Settings
from tools.models.hub import ModelHub

A, B = "A man plays guitar.", "Someone is playing an instrument."


def _panels(spec: dict) -> list[dict]:
    return spec.get("hconcat") or spec.get("vconcat") or []


def _compiles(spec: dict) -> None:
    """Vega-Lite compiles the spec (a duplicated signal or a bad encoding raises here)."""
    import vl_convert

    vl_convert.vegalite_to_vega(spec, vl_version=vegalite_version().replace(".", "_"))


def _own(run, line: str, model: str):
    reply = run(line, Session(model=model))
    assert reply.ok, reply.error
    return reply.result


def test_compare_vs_int8_has_each_models_own_number_and_a_panel_per_model(run):
    reply = run(f"compare {A} | {B} --vs minilm:int8", Session(model="minilm"))
    assert reply.ok, reply.error
    table = reply.result.table("similarity")
    assert list(table["model"]) == ["minilm", "minilm:int8"]
    for model in ("minilm", "minilm:int8"):
        own = _own(run, f"compare {A} | {B}", model).table("similarity")["cosine"][0]
        assert table.loc[table["model"] == model, "cosine"].item() == own
    text = reply.result.text
    fp32, int8 = table["cosine"]
    assert text.startswith("**minilm** vs **minilm:int8**: cosine mean") and f"{int8 - fp32:+.4f}" in text
    (chart,) = reply.to_json()["charts"]
    panels = _panels(chart["vega_lite"])
    assert len(panels) == 2
    assert [p["title"].split(" — ")[0] for p in panels] == ["minilm", "minilm:int8"]
    _compiles(chart["vega_lite"])


def test_why_vs_int8_joins_tokens_and_pairs_and_draws_both(run):
    reply = run(f"why {A} | {B} --vs minilm:int8", Session(model="minilm"))
    assert reply.ok, reply.error
    result = reply.result
    tokens, pairs = result.table("tokens"), result.table("pairs")
    assert set(tokens["model"]) == set(pairs["model"]) == {"minilm", "minilm:int8"}
    for model in ("minilm", "minilm:int8"):
        own = _own(run, f"why {A} | {B}", model)
        mine = tokens[tokens["model"] == model].drop(columns=["model"]).reset_index(drop=True)
        assert mine.equals(own.table("tokens"))
        assert pairs.loc[pairs["model"] == model, "contribution"].sum() == pytest.approx(
            own.settings["cosine"], rel=1e-5)
    assert "token contributions differ by at most" in result.text
    for chart in reply.to_json()["charts"]:
        assert len(_panels(chart["vega_lite"])) == 2, chart["name"]
        _compiles(chart["vega_lite"])


def test_attend_vs_puts_both_pattern_tables_in_one_with_a_facet_per_model(run):
    reply = run("attend The cat sat on the mat --vs minilm:int8", Session(model="minilm"))
    assert reply.ok, reply.error
    patterns = reply.result.table("patterns")
    assert patterns.groupby("model").size().to_dict() == {"minilm": 72, "minilm:int8": 72}
    own = _own(run, "attend The cat sat on the mat", "minilm:int8").table("patterns")
    assert patterns[patterns["model"] == "minilm:int8"].drop(columns=["model"]).reset_index(drop=True).equals(own)
    assert "strongest head" in reply.result.text and "per-head pattern scores differ by at most" in reply.result.text
    chart = reply.to_json()["charts"][0]
    assert chart["name"] == "patterns" and chart["vega_lite"]["facet"]["column"]["field"] == "model"
    _compiles(chart["vega_lite"])
    # every head of each model as a raster, one after the other, each titled with its model
    drawings = reply.result.drawings
    assert [d.name for d in drawings] == ["minilm: attention heads", "minilm:int8: attention heads"]
    assert [d.meta["title"].split()[0] for d in drawings] == ["minilm", "minilm:int8"]
    assert drawings[1].data == _own(run, "attend The cat sat on the mat", "minilm:int8").drawings[0].data


def test_again_vs_adds_a_model_and_again_vs_default_drops_it(run):
    session = Session(model="minilm")
    first = run(f"compare {A} | {B}", session)
    assert first.ok
    again = run("again --vs minilm:int8", session)
    assert again.ok, again.error
    assert list(again.result.table("similarity")["model"]) == ["minilm", "minilm:int8"]
    assert session.history[-1].endswith("--vs minilm:int8")
    back = run("again --vs default", session)
    assert back.ok and "model" not in back.result.table("similarity").columns


@pytest.fixture(scope="module")
def folders_hub(tmp_path_factory):
    root = tmp_path_factory.mktemp("vs-models")
    build_tiny(root / "tiny-mlm")
    build_tiny(root / "tiny-angle", mask_token="<mask>", seed=1)
    return ModelHub(Settings(model_roots=str(root)))


def test_local_folders_side_by_side(folders_hub):
    session = Session(model="tiny-mlm")
    reply = execute("tokenize the cat sat on the mat --vs tiny-angle", session, folders_hub)
    assert reply.ok, reply.error
    assert set(reply.result.table("tokens")["model"]) == {"tiny-mlm", "tiny-angle"}
    assert "both split the text into the same 8 tokens" in reply.result.text
    compare = execute("compare the cat sat | the dog ran --vs tiny-angle", session, folders_hub)
    own = execute("compare the cat sat | the dog ran", Session(model="tiny-angle"), folders_hub)
    table = compare.result.table("similarity")
    assert table.loc[table["model"] == "tiny-angle", "cosine"].item() == own.result.table("similarity")["cosine"][0]


@pytest.mark.parametrize("line, words", [
    (f"compare {A} | {B} --vs minilmm", "Did you mean `minilm`"),
    (f"compare {A} | {B} --vs minilm", "already uses"),
    ("embed A cat sat. --vs minilm:int8", "does not take --vs"),
    (f"compare {A} | {B} --vs", "--vs needs a value"),
])
def test_bad_vs_is_one_sentence(run, line, words):
    reply = run(line, Session(model="minilm"))
    assert not reply.ok and words in reply.error, reply.error
    if "already uses" in words:  # the models it offers instead are other ones
        assert "like `minilm`" not in reply.error and "`minilm:int8`" in reply.error
    if "does not take" in words:
        assert all(f"`{c.name}`" in reply.error for c in COMMANDS if c.takes_vs)
        assert {c.name for c in COMMANDS if c.takes_vs} == {"compare", "word", "tokenize", "attend", "neighbors", "why",
                                                            "probe", "contextuality", "rollout", "lens"}


@pytest.mark.browser
@pytest.mark.slow
def test_why_and_side_by_side_charts_draw_on_the_page(live_app, browser):
    """The page draws every chart of `why` (both methods) and of `--vs` replies, with no error."""
    from tests.browsing import Watch, ask, chart_errors

    page = browser.new_page()
    watch = Watch.on(page)
    page.goto(live_app)
    page.wait_for_selector("#command-box textarea")
    lines = [f"why {A} | {B}", f"why {A} | {B} --pool max",
             "compare A cat. | A kitten. | A dog. --vs minilm:int8", "attend The cat sat on the mat --vs minilm:int8",
             "attend The cat sat on the mat --layer 2 --vs minilm:int8", f"why {A} | {B} --vs minilm:int8",
             "word bank | We sat on the river bank. | I paid the bank. --vs minilm:int8",
             "tokenize Where is the bank? | By the river. --vs minilm:int8", "neighbors bank --vs minilm:int8",
             "probe --task pos --sentences 8 --vs minilm:int8", "contextuality --sentences 20 --vs minilm:int8"]
    for line in lines:
        reply = ask(page, line)
        assert reply.ok, (line, reply.inner_text()[:300])
        charts, drawn = reply.charts()
        assert charts >= 1 and drawn == charts, (line, charts, drawn, chart_errors(page))
        if line.startswith("attend"):  # both models' rasters drawn, each under its model's title
            page.wait_for_function("r => r.querySelectorAll(\".drawing[data-drawn='1']\").length === 2",
                                   arg=reply.node.element_handle())
            titles = reply.node.locator(".drawing .heads-title").all_inner_texts()
            assert [t.split()[0] for t in titles] == ["minilm", "minilm:int8"], titles
    assert chart_errors(page) == [] and watch.page_errors == [] and watch.console_errors == []
    page.close()
