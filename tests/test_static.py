"""`static` and `neighbors --space glove` with the real GloVe 6B 50d vectors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tools.encoding.pooling import Pooling, cosine_matrix, sentence_vectors
from tools.similarity import static, words

RIVER = "We sat on the river bank and watched the water."
MONEY = "I deposited my salary at the Bank this morning."


def unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v)


def test_glove_loads_once_and_is_read_only():
    table = static.glove()
    assert static.glove() is table
    assert table.vectors.shape == (400_000, 50)
    assert not table.vectors.flags.writeable
    with pytest.raises(ValueError):
        table.vectors[0, 0] = 1.0
    assert table.row("Bank") == table.row("bank") is not None


def test_glove_neighbours_of_bank_include_banks(run):
    reply = run("neighbors bank --space glove --k 10")
    assert reply.ok, reply.error
    frame = reply.result.table("neighbours")
    assert "banks" in set(frame["neighbour"])
    assert "bank" not in set(frame["neighbour"])
    assert frame["cosine"].is_monotonic_decreasing
    table = static.glove()
    expected = float(unit(table.vector("bank")) @ unit(table.vector("banks")))
    assert frame.set_index("neighbour").loc["banks", "cosine"] == pytest.approx(expected, abs=1e-5)
    assert reply.result.model == static.GLOVE
    spec = reply.result.charts[0].chart.to_dict()
    assert len(next(iter(spec["datasets"].values()))) == 10


def test_glove_neighbours_of_an_unknown_word_get_the_message(run):
    reply = run("neighbors qwzxvbnmk --space glove")
    assert not reply.ok
    assert "`qwzxvbnmk` is not in GloVe 6B 50d's 400,000-word lower-case vocabulary" in reply.error


def test_static_word_mode_is_one_for_glove_and_not_for_the_model(lm, run):
    reply = run(f"static bank | {RIVER} | {MONEY}")
    assert reply.ok, reply.error
    pairs = reply.result.table("pairs")
    assert reply.result.settings["mode"] == "word"
    assert pairs[static.GLOVE].iloc[0] == pytest.approx(1.0, abs=1e-6)
    _, vecs = words.vectors(lm, "bank", [RIVER, MONEY], "last")
    expected = float(unit(vecs[0]) @ unit(vecs[1]))
    contextual = pairs[f"{lm.name} (last)"].iloc[0]
    assert contextual == pytest.approx(expected, abs=1e-5)
    assert contextual < 0.99
    assert "**1.0**" in reply.result.text


def test_static_word_mode_out_of_vocabulary(run):
    reply = run("static qwzxvbnmk | The qwzxvbnmk sat. | A qwzxvbnmk ran.")
    assert not reply.ok
    assert "not in GloVe 6B 50d" in reply.error


def test_static_sentences_put_average_glove_beside_the_model(lm, run):
    a, b = "A man plays guitar.", "Someone is playing an instrument."
    reply = run(f"static {a} | {b}")
    assert reply.ok, reply.error
    row = reply.result.table("pairs").iloc[0]
    table = static.glove()
    mean_a = np.mean([table.vector(w) for w in ["a", "man", "plays", "guitar"]], axis=0)
    mean_b = np.mean([table.vector(w) for w in ["someone", "is", "playing", "an", "instrument"]], axis=0)
    assert row[f"{static.GLOVE} (mean of words)"] == pytest.approx(float(unit(mean_a) @ unit(mean_b)), abs=1e-5)
    model_vecs, _ = sentence_vectors(lm, [a, b], Pooling.MEAN)
    assert row[f"{lm.name} (mean)"] == pytest.approx(float(cosine_matrix(model_vecs)[0, 1]), abs=1e-5)
    assert reply.result.settings == {"mode": "sentences", "pool": "mean"}


def test_static_sentences_report_unknown_words(run):
    reply = run("static The qwzxvbnmk fell. | A cat sat.")
    assert reply.ok, reply.error
    used = reply.result.table("glove words")
    assert used["unknown words"].iloc[0] == "qwzxvbnmk"
    assert any("does not know" in w for w in reply.result.warnings)
    refused = run("static qwzxvbnmk zzqqvvx | A cat sat.")
    assert not refused.ok
    assert "Text 1 has no word that GloVe 6B 50d knows" in refused.error


def test_static_chart_has_both_kinds_of_vectors(run):
    reply = run(f"static bank | {RIVER} | {MONEY}")
    spec = reply.result.charts[0].chart.to_dict()
    data = next(iter(spec["datasets"].values()))
    assert {row["vectors"] for row in data} == {static.GLOVE, "minilm (last)"}


def test_static_strategy_typo_gets_a_suggestion(run):
    reply = run(f"static bank | {RIVER} | {MONEY} --strategy lst")
    assert not reply.ok
    assert "Did you mean `last`?" in reply.error


def test_static_from_python_takes_a_model_name():
    result = static.static("minilm", ["A cat sat.", "A kitten sat."], pool="cls")
    assert result.command == "static" and result.model == "minilm"
    row = result.table("pairs").iloc[0]
    assert 0.5 < row["minilm (cls)"] < 1.0
    assert torch.isfinite(torch.tensor(row[f"{static.GLOVE} (mean of words)"]))
