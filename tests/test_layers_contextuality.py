"""`contextuality`: Ethayarajh's (2019) measures recomputed here with plain numpy from the model's own
hidden states."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

from tests.downloads import csv_names
from tools.core.config import Settings
from tools.core.errors import UserError
from tools.layers.contextuality import (
    contextuality,
    contextuality_measures,
    intra_sentence_similarity,
    max_explainable_variance,
    self_similarity,
)

BANK = ["I sat on the bank of the river.", "The bank raised its interest rates.", "She works at a bank downtown.",
        "We walked along the river bank at dusk.", "The bank closed early today.", "A bank of fog rolled in."]
WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)*")


def cos(a, b):
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def self_similarity_loop(rows):
    """1/(n²-n) Σ_j Σ_{k≠j} cos(v_j, v_k)."""
    n = len(rows)
    return sum(cos(rows[j], rows[k]) for j in range(n) for k in range(n) if j != k) / (n * n - n)


def mev_eig(rows):
    """The largest eigenvalue of XXᵀ over its trace (σ₁² / Σσᵢ²)."""
    values = np.linalg.eigvalsh(rows @ rows.T)
    return float(values.max() / values.sum())


def test_the_measures_equal_their_definitions_on_random_vectors():
    rows = np.random.default_rng(1).normal(size=(7, 5)) + 0.5
    assert self_similarity(rows) == pytest.approx(self_similarity_loop(rows), abs=1e-12)
    assert max_explainable_variance(rows) == pytest.approx(mev_eig(rows), abs=1e-12)
    mean = rows.mean(axis=0)
    assert intra_sentence_similarity(rows) == pytest.approx(np.mean([cos(r, mean) for r in rows]), abs=1e-12)


def words_direct(lm, text):
    """Each word's mean word-piece vector per hidden state (L+1, W, D) and the words, from one plain pass."""
    enc = lm.tokenizer(text, return_offsets_mapping=True, return_tensors="pt")
    offsets = enc.pop("offset_mapping")[0].tolist()
    with torch.no_grad():
        hidden = torch.stack(lm.encoder(**enc, output_hidden_states=True).hidden_states)[:, 0].double().numpy()
    words, vectors = [], []
    for m in WORD.finditer(text):
        pieces = [p for p, (a, b) in enumerate(offsets) if b > a and a < m.end() and b > m.start()]
        words.append(m.group(0).lower())
        vectors.append(hidden[:, pieces].mean(axis=1))
    return words, np.stack(vectors, axis=1)


def test_on_the_model_the_measures_equal_a_direct_numpy_computation(lm):
    f = contextuality_measures(lm, ["bank"], texts=BANK, seed=0)
    assert f.words == ("bank",) and f.counts == (6,) and f.sentences == 6 and not f.chosen
    direct = [words_direct(lm, t) for t in BANK]
    occurrences = np.stack([v[:, w.index("bank")] for w, v in direct], axis=1)  # (L+1, 6, D)
    for layer in range(lm.num_layers + 1):
        assert f.self_similarity[0, layer] == pytest.approx(self_similarity_loop(occurrences[layer]), abs=1e-5)
        assert f.mev[0, layer] == pytest.approx(mev_eig(occurrences[layer]), abs=1e-5)
        intra = np.mean([np.mean([cos(v[layer, k], v[layer].mean(axis=0)) for k in range(v.shape[1])])
                         for _, v in direct])
        assert f.intra_similarity[layer] == pytest.approx(intra, abs=1e-5)
    assert f.occurrences == sum(len(w) for w, _ in direct)


def test_the_baseline_is_seeded_and_a_mean_cosine(lm):
    a = contextuality_measures(lm, ["bank"], texts=BANK, seed=0, pairs=200)
    b = contextuality_measures(lm, ["bank"], texts=BANK, seed=0, pairs=200)
    c = contextuality_measures(lm, ["bank"], texts=BANK, seed=1, pairs=200)
    np.testing.assert_array_equal(a.baseline, b.baseline)
    np.testing.assert_array_equal(a.mev_baseline, b.mev_baseline)
    assert not np.allclose(a.baseline, c.baseline)
    assert ((a.baseline > -1) & (a.baseline < 1)).all() and ((a.mev_baseline > 0) & (a.mev_baseline <= 1)).all()


def test_picked_words_occur_in_five_sentences_and_the_reply_has_curves_and_csvs(lm, stsb_dir):
    result = contextuality(lm, sentences=40, seed=2, settings=Settings(data_dir=str(stsb_dir)))
    counts = result.table("most context-specific words")["sentences"]
    assert len(counts) and (counts >= 5).all()
    first = result.text.split(". ")[0]
    assert "self-similarity" in first and "Ethayarajh" in first and "anisotropy baseline" in first
    assert result.settings["picked"] is True and result.settings["seed"] == 2
    assert result.settings["sentences"] == 40 and result.settings["source"] == "stsb-train"
    layers = result.table("contextuality by layer")
    assert list(layers["layer"]) == list(range(lm.num_layers + 1))
    assert layers["adjusted self-similarity"].to_numpy() == pytest.approx(
        (layers["self-similarity"] - layers["anisotropy baseline"]).to_numpy(), abs=2e-4)
    spec = result.charts[0].chart.to_dict()
    assert sum(len(v) for v in spec["datasets"].values()) == 5 * (lm.num_layers + 1)
    assert csv_names(result) == ["contextuality-1-contextuality-by-layer.csv", "contextuality-2-words-by-layer.csv",
                                 "contextuality-3-most-context-specific-words.csv"]  # each table, once


def test_named_words_find_their_sentences_in_stsb(lm, stsb_dir):
    f = contextuality_measures(lm, ["guitar", "Playing"], sentences=20, settings=Settings(data_dir=str(stsb_dir)))
    assert f.words == ("guitar", "playing") and min(f.counts) >= 2 and f.sentences <= 20


def test_bad_words_and_sizes_get_a_sentence(lm):
    with pytest.raises(UserError, match="not one word"):
        contextuality_measures(lm, ["river bank"], texts=BANK)
    with pytest.raises(UserError, match="at most 30 words"):
        contextuality_measures(lm, [f"w{i}" for i in range(31)], texts=BANK)
    with pytest.raises(UserError, match="from 2 to 1000"):
        contextuality_measures(lm, ["bank"], sentences=2000)
    with pytest.raises(UserError, match="two or more sentences"):
        contextuality_measures(lm, ["zebra"], texts=BANK)
