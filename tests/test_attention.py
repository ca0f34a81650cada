"""`attend`, `selfattn` and `syntax` on the real packaged model and real spaCy."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest

from tools import charts
from tools.attention import facts, patterns, replies, selfattn, syntax

CAT = "The cat sat on the mat"


def chart_rows(spec: dict) -> int:
    """Data rows a Vega-Lite spec embeds (Altair puts them under ``datasets``)."""
    return sum(len(rows) for rows in spec.get("datasets", {}).values())


def encoding(spec: dict) -> dict:
    """The encoding of a heatmap's cells (the first layer when values are printed on them)."""
    return (spec["layer"][0] if "layer" in spec else spec)["encoding"]


def npy(result, filename: str) -> np.ndarray:
    artifact = next(a for a in result.artifacts if a.filename == filename)
    return np.load(io.BytesIO(artifact.data), allow_pickle=False)


def text_of_tokens(lm, n: int) -> str:
    """A text that the model reads as exactly ``n`` tokens, [CLS] and [SEP] included."""
    words = ("the cat sat on the mat while a dog watched from the warm kitchen door " * 20).split()
    text = " ".join(words[: n - 2])
    assert len(lm.tokenizer(text)["input_ids"]) == n
    return text


# --- attend ------------------------------------------------------------------------------------

def test_every_attention_row_sums_to_one(run):
    reply = run(f"attend {CAT}")
    assert reply.ok, reply.error
    tensor = npy(reply.result, "attention.npy")
    assert tensor.shape == (6, 12, 8, 8)
    np.testing.assert_allclose(tensor.sum(-1), 1.0, atol=1e-5)


def drawn(result) -> np.ndarray:
    """The reply's raster of every drawn head, as the page decodes it: (layers, heads, n, n) floats."""
    (drawing,) = result.drawings
    assert drawing.kind == "attention-heads" and drawing.meta["scale"] == 255
    return np.frombuffer(drawing.data, dtype=np.uint8).reshape(drawing.meta["shape"]) / 255.0


def test_model_view_of_a_short_text_draws_every_weight_of_every_head(run):
    result = run(f"attend {CAT}").result
    tensor = npy(result, "attention.npy")
    np.testing.assert_allclose(drawn(result), tensor, atol=0.5 / 255 + 1e-6)  # every weight, to one byte
    assert result.drawings[0].meta["tokens"] == ["[CLS]", "the", "cat", "sat", "on", "the", "mat", "[SEP]"]
    spec = result.charts[0].chart.to_dict()  # the chart: what each head does, one panel per pattern
    assert chart_rows(spec) == 72 * len(facts.Pattern) and spec["facet"]["field"] == "pattern"
    assert "every weight" in result.text and result.settings["chart"] == "every weight of every drawn head"
    assert len(result.table("patterns")) == 72


def test_model_view_of_a_128_token_text_is_drawn_in_blocks_and_says_so(run, lm):
    reply = run(f"attend {text_of_tokens(lm, 128)}")
    assert reply.ok, reply.error
    result = reply.result
    assert result.settings["tokens"] == 128
    grid = drawn(result)
    assert grid.shape == (6, 12, 64, 64)  # blocks of two tokens
    np.testing.assert_allclose(grid.sum(-1), 1.0, atol=64 * 0.5 / 255)  # block rows still sum to 1
    assert "blocks of 2" in result.text
    assert npy(result, "attention.npy").shape == (6, 12, 128, 128)


@pytest.mark.parametrize("options, shape", [("--layer 2", (1, 12, 64, 64)), ("--head 5", (6, 1, 64, 64))])
def test_layer_and_head_across_layer_views_of_a_128_token_text_are_drawn_too(run, lm, options, shape):
    result = run(f"attend {text_of_tokens(lm, 128)} {options}").result
    assert drawn(result).shape == shape
    assert 0 < chart_rows(result.charts[0].chart.to_dict()) <= charts.MAX_ROWS


def test_one_head_of_a_128_token_text_keeps_top_keys_under_the_limit(run, lm):
    result = run(f"attend {text_of_tokens(lm, 128)} --layer 2 --head 5").result
    spec = result.charts[0].chart.to_dict()
    assert 0 < chart_rows(spec) <= charts.MAX_ROWS
    assert "top 39 keys" in result.text and result.drawings == []


def test_one_head_is_a_labelled_heatmap_with_exact_weights(run, lm):
    result = run(f"attend {CAT} --layer 2 --head 5").result
    spec = result.charts[0].chart.to_dict()
    weights = result.table("weights")
    assert list(weights["query \\ key"]) == ["0 [CLS]", "1 the", "2 cat", "3 sat", "4 on", "5 the", "6 mat", "7 [SEP]"]
    direct = lm.encoder(**lm.tokenizer(CAT, return_tensors="pt"), output_attentions=True).attentions[1][0, 4]
    np.testing.assert_allclose(weights.iloc[:, 1:].to_numpy(), direct.detach().numpy(), atol=1e-5)
    assert encoding(spec)["y"]["sort"][2] == "2 cat"
    assert {"field": "weight", "type": "quantitative", "format": ".4f"} in encoding(spec)["tooltip"]
    assert npy(result, "attention.npy").shape == (8, 8)
    assert json.loads(result.artifacts[1].data) == spec
    assert "layer 2 head 5" in result.text


def test_layer_view_draws_the_layers_heads_side_by_side(run):
    result = run(f"attend {CAT} --layer 3").result
    assert result.drawings[0].meta["layers"] == [3] and result.drawings[0].meta["heads"] == list(range(1, 13))
    np.testing.assert_allclose(drawn(result)[0], npy(result, "attention.npy")[0], atol=0.5 / 255 + 1e-6)
    assert chart_rows(result.charts[0].chart.to_dict()) == 12 * len(facts.Pattern)


def test_the_reply_names_the_strongest_head_per_pattern(run):
    result = run(f"attend {CAT}").result
    scores = result.table("patterns")
    best = scores.loc[scores["previous"].idxmax()]
    phrase = (f"layer {int(best['layer'])} head {int(best['head'])} looks at the previous token, "
              f"{best['previous']:.2f} on average")
    assert phrase in result.text
    assert best["previous"] > 0.9  # minilm has a clear previous-token head (layer 1 head 3)


def test_a_pair_marks_segments_a_and_b(run):
    result = run("attend Where is the bank? | By the river. --layer 1 --head 1").result
    assert list(result.table("tokens")["segment"]) == ["", "A", "A", "A", "A", "A", "", "B", "B", "B", "B", ""]
    labels = encoding(result.charts[0].chart.to_dict())["x"]["sort"]
    assert "4 bank ·A" in labels and "9 river ·B" in labels
    assert "segment A is positions 1–5, segment B 7–10" in result.text


# --- pattern scores on hand-built tensors --------------------------------------------------------

def test_pattern_scores_of_an_identity_head_and_a_previous_token_head():
    t = 6
    identity = np.eye(t)
    previous = np.zeros((t, t))
    previous[0, 0] = 1.0
    previous[np.arange(1, t), np.arange(t - 1)] = 1.0
    attn = np.stack([identity, previous])[None]  # (1 layer, 2 heads, T, T)
    pos = patterns.Positions(cls=[0], sep=[t - 1], text=list(range(1, t - 1)))
    scores = patterns.pattern_scores(attn, pos)
    ident, prev = scores.iloc[0], scores.iloc[1]
    assert (ident["self"], ident["previous"], ident["next"]) == (1.0, 0.0, 0.0)
    assert ident["to [CLS]"] == pytest.approx(1 / t, abs=1e-6) and ident["to [SEP]"] == pytest.approx(1 / t, abs=1e-6)
    assert (prev["self"], prev["previous"], prev["next"]) == (pytest.approx(1 / t, abs=1e-6), 1.0, 0.0)
    assert prev["to [CLS]"] == pytest.approx(2 / t, abs=1e-6)
    assert ident["entropy (bits)"] == pytest.approx(0.0, abs=1e-6)
    best = facts.strongest(scores)
    assert best[patterns.Pattern.SELF][:2] == (1, 1)
    assert best[patterns.Pattern.PREVIOUS][:2] == (1, 2)
    sentences = replies.describe_strongest(scores)
    assert "layer 1 head 2 looks at the previous token, 1.00 on average" in sentences


def test_uniform_attention_has_maximal_entropy_and_cls_reads_the_text():
    t = 8
    attn = np.full((1, 1, t, t), 1 / t)
    pos = patterns.Positions(cls=[0], sep=[t - 1], text=list(range(1, t - 1)))
    row = patterns.pattern_scores(attn, pos).iloc[0]
    assert row["entropy (bits)"] == pytest.approx(3.0)
    assert row["[CLS] reads text"] == pytest.approx(6 / 8)


def test_block_aggregation_keeps_rows_summing_to_one():
    rng = np.random.default_rng(0)
    m = rng.random((100, 100))
    m /= m.sum(1, keepdims=True)
    data = patterns.chart_data([({"layer": i}, m) for i in range(72)], [str(i) for i in range(100)])
    assert len(data.frame) <= charts.MAX_ROWS and "blocks" in data.note
    one = data.frame[data.frame["layer"] == 0]
    np.testing.assert_allclose(one.groupby("query")["weight"].sum(), 1.0, atol=1e-3)


# --- selfattn --------------------------------------------------------------------------------

def test_selfattn_matches_the_model_on_every_layer_of_the_default_model(lm):
    text = "The police is chasing a criminal on the run."
    for layer in range(1, lm.num_layers + 1):
        result = selfattn.selfattn(lm, [text], layer=layer)
        diffs = result.table("difference from the model")
        assert len(diffs) == lm.num_heads
        assert float(diffs["max |rebuilt - model|"].max()) < 1e-5, f"layer {layer}"
        assert result.settings["max_abs_diff"] < 1e-5


def test_selfattn_through_the_command_line_reports_the_difference(run):
    reply = run(f"selfattn {CAT} --layer 1")
    assert reply.ok, reply.error
    assert "so they match (tolerance 1e-5)" in reply.result.text
    shapes = reply.result.table("shapes").set_index("step")["shape"]
    assert shapes["input: hidden state 0"] == "8 x 384"
    assert shapes["Q, K, V split into heads"] == "12 x 8 x 32"
    assert npy(reply.result, "selfattn-weights.npy").shape == (12, 8, 8)


def test_causal_mask_is_zero_above_the_diagonal_and_rows_sum_to_one(run):
    result = run(f"selfattn {CAT} --causal --head 2").result
    checks = result.table("causal check")
    assert (checks["max weight above diagonal"] == 0).all()
    assert (checks["max |row sum - 1|"] < 1e-9).all()
    both = npy(result, "selfattn-weights.npy")  # (unmasked | causal, heads, T, T)
    assert both.shape == (2, 12, 8, 8)
    causal = both[1]
    assert np.all(np.triu(causal, k=1) == 0)
    np.testing.assert_allclose(causal.sum(-1), 1.0, atol=1e-6)
    assert causal[0, 0, 0] == pytest.approx(1.0)  # the first token can only see itself
    assert not np.all(np.triu(both[0], k=1) == 0)
    spec = result.charts[0].chart.to_dict()
    assert spec["facet"]["column"]["sort"] == ["rebuilt, unmasked", "rebuilt, causal mask"]  # unmasked on the left


def test_scaled_dot_product_softmaxes_over_the_key_axis():
    import torch

    q = torch.randn(2, 5, 4, dtype=torch.float64)
    k = torch.randn(2, 5, 4, dtype=torch.float64)
    w = selfattn.scaled_dot_product(q, k)
    expected = torch.softmax(q @ k.transpose(-1, -2) / 2.0, dim=-1)
    torch.testing.assert_close(w, expected)


def test_heads_toy_is_labelled_and_shows_per_head_and_concatenated_shapes(run):
    result = run(f"selfattn {CAT} --heads 8").result
    assert result.text.startswith("**TOY, not the model's attention:**")
    assert result.settings["toy"] is True
    toy = result.table("toy heads")
    assert len(toy) == 8 and set(toy["output shape"]) == {"8 x 48"}
    shapes = result.table("shapes").set_index("step")["shape"]
    assert shapes["concatenated output"] == "8 x 384"
    assert "TOY" in result.charts[0].chart.to_dict()["title"]


# --- syntax ----------------------------------------------------------------------------------

def test_syntax_aligns_words_to_pieces_and_finds_the_nsubj_arc(run):
    reply = run(f"syntax {CAT}")
    assert reply.ok, reply.error
    result = reply.result
    parse = result.table("parse").set_index("word")
    assert parse.loc["cat", "dep"] == "nsubj" and parse.loc["cat", "head"] == "sat"
    assert list(result.table("parse")["word pieces"]) == ["the", "cat", "sat", "on", "the", "mat"]
    relations = result.table("relations").set_index("relation")
    assert relations.loc["nsubj", "arcs"] == "cat → sat"
    assert relations.loc["nsubj", "best head (dependent → head)"].startswith("layer ")
    heads = result.table("heads")
    assert len(heads) == 72 and heads["distance ρ"].between(-1, 1).all()
    assert len(result.table("top heads")) == syntax.TOP_HEADS
    spec = result.charts[0].chart.to_dict()
    assert chart_rows(spec) == 72
    assert npy(result, "syntax-word-attention.npy").shape == (6, 12, 6, 6)


def test_alignment_of_a_word_split_into_pieces(lm):
    text = "Tokenization embeddings work."
    enc = lm.tokenizer(text, return_offsets_mapping=True)
    doc = syntax.parse(text)
    al = syntax.align(doc, enc["offset_mapping"], enc.sequence_ids())
    tokens = lm.tokenizer.convert_ids_to_tokens(enc["input_ids"])
    pieces = [[tokens[p] for p in ps] for ps in al.pieces]
    assert pieces[0] == ["token", "##ization"]
    assert pieces[1] == ["em", "##bed", "##ding", "##s"]
    assert al.lost == 0


def test_word_attention_sums_key_pieces_and_averages_query_pieces():
    al = syntax.Alignment(words=[0, 1], pieces=[[1], [2, 3]], heads=[1, -1], lost=0)
    rng = np.random.default_rng(1)
    attn = rng.random((2, 3, 5, 5))
    attn /= attn.sum(-1, keepdims=True)
    wa = syntax.word_attention(attn, al)
    a = attn[1, 2]
    assert wa[1, 2, 0, 1] == pytest.approx(a[1, 2] + a[1, 3])
    assert wa[1, 2, 1, 0] == pytest.approx((a[2, 1] + a[3, 1]) / 2)
    assert wa[1, 2, 1, 1] == pytest.approx((a[2, 2] + a[2, 3] + a[3, 2] + a[3, 3]) / 2)


# --- bad input -------------------------------------------------------------------------------

@pytest.mark.parametrize("line, sentence", [
    (f"attend {CAT} --layer 7", "--layer 7 is out of range: minilm has attention layers 1 to 6"),
    (f"attend {CAT} --layer 0", "--layer 0 is out of range: minilm has attention layers 1 to 6"),
    (f"attend {CAT} --layer 2 --head 13", "--head 13 is out of range: minilm has heads 1 to 12"),
    (f"selfattn {CAT} --layer 9", "--layer 9 is out of range: minilm has attention layers 1 to 6"),
    (f"selfattn {CAT} --head 0", "--head 0 is out of range: minilm has heads 1 to 12"),
    (f"selfattn {CAT} --heads 7", "--heads 7 does not divide minilm's hidden size 384"),
    ('attend "   "', "Text 1 is empty"),
    ('syntax "  "', "Text 1 is empty"),
    ("attend", "`attend` needs a text"),
])
def test_bad_input_gets_one_sentence_naming_the_valid_range(run, line, sentence):
    reply = run(line)
    assert not reply.ok
    assert sentence in reply.error


@pytest.mark.slow
def test_a_text_longer_than_the_model_limit_is_truncated_with_a_warning(run, lm):
    long = "the cat sat on the mat " * 100  # 602 tokens
    for verb in ("attend", "selfattn", "syntax"):
        reply = run(f"{verb} {long}")
        assert reply.ok, reply.error
        assert any(f"truncated to {lm.max_tokens} tokens" in w for w in reply.result.warnings), verb
    result = run(f"attend {long}").result
    assert result.settings["tokens"] == lm.max_tokens
    assert chart_rows(result.charts[0].chart.to_dict()) <= charts.MAX_ROWS
