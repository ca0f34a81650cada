"""`compare` on the real packaged model, checked against transformers and sentence-transformers."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tools.similarity import compare as similarity

SURVEY = (
    "In 1995, the last survey, those numbers were equal.",
    "The last time the survey was conducted, in 1995, those numbers matched.",
)
UNRELATED = "A chef slices onions in a busy restaurant kitchen."


def direct_mean(lm, text: str, layer: int = -1) -> np.ndarray:
    """Masked mean pooling written the way the source notebooks do it, in a padded batch."""
    batch = lm.tokenizer([text, "a much longer second text so that the first one gets padding tokens"],
                         padding=True, return_tensors="pt")
    with torch.no_grad():
        out = lm.encoder(**batch, output_hidden_states=True)
    states = out.hidden_states[layer][0]
    mask = batch["attention_mask"][0].unsqueeze(-1).float()
    return ((states * mask).sum(0) / mask.sum()).numpy()


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))


def test_mean_pooling_equals_direct_transformers_computation(lm):
    result = similarity.compare(lm, list(SURVEY), pool="mean")
    expected = cosine(direct_mean(lm, SURVEY[0]), direct_mean(lm, SURVEY[1]))
    assert result.table("similarity")["cosine"][0] == pytest.approx(expected, abs=1e-5)


def test_mean_pooling_at_a_chosen_layer_equals_direct_computation(lm):
    result = similarity.compare(lm, list(SURVEY), pool="mean", layer=2)
    expected = cosine(direct_mean(lm, SURVEY[0], 2), direct_mean(lm, SURVEY[1], 2))
    assert result.table("similarity")["cosine"][0] == pytest.approx(expected, abs=1e-5)
    assert result.settings["layer"] == 2
    assert "layer 2 of 6" in result.text


def test_sbert_pooling_equals_sentence_transformers_encode(lm):
    from sentence_transformers import SentenceTransformer

    st = SentenceTransformer(lm.source.location, device="cpu")
    vecs = st.encode(list(SURVEY), convert_to_numpy=True)
    expected = cosine(vecs[0], vecs[1])
    result = similarity.compare(lm, list(SURVEY), pool="sbert")
    assert result.table("similarity")["cosine"][0] == pytest.approx(expected, abs=1e-5)


def test_survey_paraphrase_beats_an_unrelated_pair_under_every_pooling(lm):
    para = similarity.compare(lm, list(SURVEY), pool="all").table("similarity")
    unrelated = similarity.compare(lm, [SURVEY[0], UNRELATED], pool="all").table("similarity")
    assert list(para["pooling"]) == ["cls", "mean", "max", "sbert"]
    for p, u in zip(para.itertuples(), unrelated.itertuples()):
        assert p.cosine > u.cosine, p.pooling


def test_three_texts_give_a_symmetric_matrix_and_a_heatmap(lm):
    texts = ["A man plays guitar.", "Someone is playing an instrument.", "The stock market fell."]
    result = similarity.compare(lm, texts)
    matrix = result.tables[0].frame.set_index("text").to_numpy()
    assert matrix.shape == (3, 3)
    np.testing.assert_allclose(np.diag(matrix), 1.0, atol=1e-5)
    np.testing.assert_allclose(matrix, matrix.T, atol=1e-6)
    assert matrix[0, 1] > matrix[0, 2]  # guitar is closer to instrument than to stocks
    spec = result.charts[0].chart.to_dict()
    marks = {layer["mark"]["type"] if isinstance(layer["mark"], dict) else layer["mark"] for layer in spec["layer"]}
    assert "rect" in marks
    assert "1: A man plays guitar." in result.text


def test_long_text_is_truncated_with_a_warning(run):
    long_text = ("word " * 2000).strip()  # a 10,000-character paste, about 2,000 tokens
    assert len(long_text) == 9999
    reply = run(f"compare {long_text} | short text")
    assert reply.ok, reply.error
    (warning,) = reply.result.warnings
    assert "Text 1 was truncated to 512 tokens: 1490 tokens were dropped" in warning


def test_compare_from_the_command_line_reports_every_pooling(run):
    reply = run(f"compare {SURVEY[0]} | {SURVEY[1]} --pool all")
    assert reply.ok
    data = reply.to_json()
    assert data["ok"] and data["command"] == "compare" and data["model"] == "minilm"
    rows = data["tables"][0]["rows"]
    cosine = data["tables"][0]["columns"].index("cosine")
    assert [r[0] for r in rows] == ["cls", "mean", "max", "sbert"]
    assert all(0.5 < r[cosine] <= 1.0 for r in rows)
    assert data["charts"][0]["vega_lite"]["$schema"].startswith("https://vega.github.io/schema/vega-lite/")


def test_truncation_warnings_name_each_long_text_by_its_position(run):
    long_text = ("word " * 600).strip()
    reply = run(f"compare {long_text} | short text | {long_text}")
    assert reply.ok, reply.error
    assert [w.split(" was")[0] for w in reply.result.warnings] == ["Text 1", "Text 3"]


def test_sbert_at_a_chosen_layer_says_it_reads_the_last_layer_in_every_command_that_takes_both(run, lm):
    """`project --pool sbert --layer 2` once pooled the last layer while its text said layer 2."""
    from assistant.commands.registry import COMMANDS
    from tools.encoding.pooling import Pooling, sbert_layer_warnings

    takers = [s.name for s in COMMANDS if {"pool", "layer"} <= {o.name for o in s.options}]
    assert {"compare", "embed", "project", "why"} <= set(takers)
    texts = "A man plays guitar. | Someone is playing an instrument. | The stock market fell."
    for verb in takers:
        line_texts = " | ".join(texts.split(" | ")[:2]) if verb == "why" else texts
        reply = run(f"{verb} {line_texts} --pool sbert --layer 2")
        assert reply.ok, (verb, reply.error)
        (sentence,) = sbert_layer_warnings(lm, [Pooling.SBERT], 2)
        assert reply.result.warnings.count(sentence) == 1, (verb, reply.result.warnings)
        assert not run(f"{verb} {line_texts} --pool sbert").result.warnings  # the last layer: nothing to say
    sentences = run(f"project {texts} --level sentences --pool sbert --layer 2").result
    assert "last layer" in sentences.text and "layer 2" not in sentences.text



def test_the_facts_are_the_numbers_the_reply_prints(lm):
    """A notebook can take the facts (numpy matrices, no prose) and get exactly what the reply shows."""
    texts = ["A cat sat on the mat.", "A kitten sat on the rug.", "The stock market fell."]
    facts = similarity.comparison(lm, texts, pool="all")
    assert facts.texts == tuple(texts) and facts.layer == facts.num_layers == lm.num_layers
    reply = similarity.compare(lm, texts, pool="all")
    for pooling in facts.poolings:
        matrix = facts.cosines[pooling]
        assert isinstance(matrix, np.ndarray) and matrix.shape == (3, 3)
        shown = reply.table(f"similarity ({pooling.value})").drop(columns="text").to_numpy(dtype=float)
        np.testing.assert_allclose(shown, matrix, atol=5e-7)  # the table is rounded to 6 decimals
    two = similarity.comparison(lm, texts[:2])
    assert f"**{two.cosines[two.poolings[0]][0, 1]:.4f}**" in similarity.compare(lm, texts[:2]).text


def test_encodings_pooled_together_by_length_are_each_pooled_alone(lm):
    """The commands' path pools the encodings of one length in one stack: each vector is the one its encoding alone
    gives, at the last layer and another, for every pooling, texts of equal and of different lengths mixed."""
    from tools.encoding.encode import encode
    from tools.encoding.pooling import Pooling, pool, pooled_encodings

    texts = [*SURVEY, UNRELATED, "A cat.", "A dog.", "Hi", "word " * 40]
    encs = encode(lm, texts)
    assert len({len(e.input_ids) for e in encs}) < len(encs)  # some share a length, so they are stacked
    for pooling in Pooling:
        for layer in (None, 3):
            alone = torch.stack([pool(lm, e, pooling, layer if pooling is not Pooling.SBERT else None) for e in encs])
            together = pooled_encodings(lm, encs, pooling, layer if pooling is not Pooling.SBERT else None)
            np.testing.assert_allclose(together.numpy(), alone.numpy(), rtol=1e-6, atol=1e-7)


def test_a_corpus_bulk_vectors_are_the_commands_vectors_and_sentence_transformers(lm):
    """The bulk path (each batch pooled where it ran, no per-text states) gives every pooling's vectors as the
    commands' path does, repeats and a text past sbert's 256-token cap included, and sbert as sentence-transformers."""
    from sentence_transformers import SentenceTransformer

    from tools.encoding.pooling import Pooling, bulk_vectors, sentence_vectors

    texts = [*SURVEY, UNRELATED, SURVEY[0], "word " * 300, "Hi"]
    for pooling in Pooling:
        bulk = bulk_vectors(lm, texts, pooling)
        assert bulk.shape == (len(texts), lm.hidden_size) and bulk.dtype == np.float32
        np.testing.assert_allclose(bulk, sentence_vectors(lm, texts, pooling)[0].numpy(), atol=1e-5)
    st = SentenceTransformer(lm.source.location, device="cpu")
    expected = st.encode(texts, convert_to_numpy=True)
    np.testing.assert_allclose(bulk_vectors(lm, texts, Pooling.SBERT), expected, atol=1e-5)
