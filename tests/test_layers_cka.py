"""`cka`: linear CKA (Kornblith et al. 2019) checked against the paper's formulas written out here."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

from tests.downloads import csv_names
from tools.core.config import Settings
from tools.core.errors import UserError
from tools.layers.cka import cka, layer_similarity, linear_cka, resolve_estimator
from tools.layers.facts import CkaEstimator, CkaUnit

SENTENCES = ["The cat sat on the mat.", "A man is playing a guitar.", "Two dogs run across the green field.",
             "She deposited the money at the bank.", "The river bank was muddy after the rain.",
             "A woman is slicing an onion.", "Children are playing in the park.", "He reads a book by the fire."]


# --- the formulas, written from the papers --------------------------------------------------------

def hsic_biased(k: np.ndarray, l: np.ndarray) -> float:
    """Gretton et al. (2005): tr(KHLH) / (n-1)², H = I - 11ᵀ/n."""
    n = len(k)
    h = np.eye(n) - np.ones((n, n)) / n
    return float(np.trace(k @ h @ l @ h) / (n - 1) ** 2)


def hsic_unbiased(k: np.ndarray, l: np.ndarray) -> float:
    """Song et al. (2012), eq. 5: K̃, L̃ are K, L with zero diagonals."""
    n = len(k)
    kt, lt = k - np.diag(np.diag(k)), l - np.diag(np.diag(l))
    one = np.ones(n)
    value = (np.trace(kt @ lt) + (one @ kt @ one) * (one @ lt @ one) / ((n - 1) * (n - 2))
             - 2.0 / (n - 2) * (one @ kt @ lt @ one))
    return float(value / (n * (n - 3)))


def cka_reference(x: np.ndarray, y: np.ndarray, debiased: bool) -> float:
    """CKA = HSIC(K, L) / sqrt(HSIC(K, K) HSIC(L, L)) with linear kernels on the raw (uncentred) features."""
    hsic = hsic_unbiased if debiased else hsic_biased
    k, l = x @ x.T, y @ y.T
    return hsic(k, l) / np.sqrt(hsic(k, k) * hsic(l, l))


@pytest.fixture(scope="module")
def xy():
    rng = np.random.default_rng(7)
    x = rng.normal(size=(40, 12)) + 3.0  # not centred: the estimators must centre (or not need to)
    y = np.tanh(x @ rng.normal(size=(12, 9))) + 0.3 * rng.normal(size=(40, 9))
    return x, y


@pytest.mark.parametrize("debiased", [False, True])
def test_cka_equals_the_formula(xy, debiased):
    x, y = xy
    assert linear_cka(x, y, debiased) == pytest.approx(cka_reference(x, y, debiased), abs=1e-6)
    assert linear_cka(x, x, debiased) == pytest.approx(1.0, abs=1e-9)


@pytest.mark.parametrize("debiased", [False, True])
def test_cka_is_one_against_an_orthogonal_rotation_and_a_scale(xy, debiased):
    x, _ = xy
    q, _ = np.linalg.qr(np.random.default_rng(3).normal(size=(12, 12)))
    assert linear_cka(x, 2.5 * x @ q, debiased) == pytest.approx(1.0, abs=1e-9)


def test_the_biased_and_debiased_estimators_differ_with_few_examples(xy):
    x, y = xy
    assert abs(linear_cka(x, y, False) - linear_cka(x, y, True)) > 1e-3


def test_auto_debiases_below_ten_times_the_hidden_size():
    assert resolve_estimator(CkaEstimator.AUTO, 3839, 384) is CkaEstimator.DEBIASED
    assert resolve_estimator(CkaEstimator.AUTO, 3840, 384) is CkaEstimator.BIASED
    assert resolve_estimator(CkaEstimator.BIASED, 10, 384) is CkaEstimator.BIASED


# --- on the real model ------------------------------------------------------------------------------

def token_states_direct(lm, texts):
    """(L+1, N, D) hidden states of every non-special token, one unpadded forward pass per text."""
    tok, rows = lm.tokenizer, []
    for text in texts:
        enc = tok(text, return_tensors="pt", return_special_tokens_mask=True)
        special = enc.pop("special_tokens_mask")[0].bool()
        with torch.no_grad():
            hidden = lm.encoder(**enc, output_hidden_states=True).hidden_states
        rows.append(torch.stack(hidden)[:, 0][:, ~special].numpy())
    return np.concatenate(rows, axis=1)


@pytest.mark.parametrize("estimator", ["biased", "debiased"])
def test_the_layer_matrix_is_cka_of_the_models_token_states(lm, estimator):
    f = layer_similarity(lm, SENTENCES, estimator=estimator)
    states = token_states_direct(lm, SENTENCES).astype(np.float64)
    assert f.unit is CkaUnit.TOKENS and f.examples == states.shape[1]
    expected = np.array([[cka_reference(a, b, estimator == "debiased") for b in states] for a in states])
    np.testing.assert_allclose(f.matrix, expected, atol=1e-5)
    np.testing.assert_allclose(np.diag(f.matrix), 1.0, atol=1e-9)
    np.testing.assert_allclose(f.matrix, f.matrix.T, atol=1e-9)


def test_auto_says_it_debiased_a_few_tokens_and_the_reply_has_a_heatmap_and_a_csv(lm):
    result = cka(lm, SENTENCES)
    assert result.settings["estimator"] == "debiased" and result.settings["unit"] == "tokens"
    first = re.split(r"(?<! al)\. ", result.text)[0]
    assert "Kornblith" in first and "HSIC" in first
    assert "debiased" in result.text and "fewer than ten times the hidden size" in result.text
    spec = result.charts[0].chart.to_dict()
    assert sum(len(v) for v in spec["datasets"].values()) == 49
    assert csv_names(result) == ["cka-1-cka-matrix.csv"]  # the table, once
    assert result.table("cka matrix").shape == (7, 8)


def test_another_model_with_the_same_tokenizer_compares_tokens(lm):
    f = layer_similarity(lm, SENTENCES, other=lm)
    assert f.unit is CkaUnit.TOKENS and f.other == "minilm"
    np.testing.assert_allclose(np.diag(f.matrix), 1.0, atol=1e-9)


def test_another_tokenizer_compares_mean_pooled_sentences_and_says_so(lm, tiny_mlm_hub):
    tiny = tiny_mlm_hub.get("tiny-mlm")
    result = cka(lm, SENTENCES, other=tiny)
    f_shape = result.table("cka matrix").shape
    assert f_shape == (7, 1 + tiny.num_layers + 1)
    assert result.settings["unit"] == "sentences" and result.settings["examples"] == len(SENTENCES)
    assert "tokenizers split the sentences differently" in result.text


def test_stsb_sentences_and_the_size_limit(lm, stsb_dir):
    f = layer_similarity(lm, sentences=6, seed=3, settings=Settings(data_dir=str(stsb_dir)))
    assert f.source == "stsb-train" and f.sentences == 6 and f.seed == 3
    with pytest.raises(UserError, match="from 2 to 1000"):
        layer_similarity(lm, sentences=5000)
    with pytest.raises(UserError, match="auto, biased, debiased"):
        layer_similarity(lm, SENTENCES, estimator="unbiased-ish")


def test_progress_is_reported_and_a_cancelled_command_stops(lm):
    from tools.core import cancel

    seen = []
    layer_similarity(lm, SENTENCES, progress=lambda done, what: seen.append((done, what)))
    assert seen and seen[-1][0] == 1.0 and all(0.0 <= d <= 1.0 for d, _ in seen)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)
    token = cancel.CancelToken()
    token.cancel("past the time limit")
    with cancel.scope(token), pytest.raises(cancel.Cancelled, match="past the time limit"):
        layer_similarity(lm, SENTENCES)
