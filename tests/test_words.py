"""`word`, `embed` and `neighbors --space model` on the real packaged model."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
import torch

from tools.encoding.pooling import Pooling, sentence_vectors
from tools.similarity import words

RIVER_1 = "We sat on the river bank and watched the water."
RIVER_2 = "The boat drifted slowly towards the muddy bank of the river."
MONEY = "I deposited my salary at the bank this morning."


def direct_hidden_states(lm, sentence: str) -> tuple[list[torch.Tensor], list[str], list[tuple[int, int]]]:
    """One sentence through transformers directly: hidden states (each (T, D)), tokens, offsets."""
    enc = lm.tokenizer(sentence, return_tensors="pt", return_offsets_mapping=True)
    offsets = [tuple(o) for o in enc.pop("offset_mapping")[0].tolist()]
    with torch.inference_mode():
        out = lm.encoder(**{k: v.to(lm.device) for k, v in enc.items()}, output_hidden_states=True)
    states = [h[0].float().cpu() for h in out.hidden_states]
    return states, lm.tokenizer.convert_ids_to_tokens(enc["input_ids"][0]), offsets


def direct_strategy(states: list[torch.Tensor], positions: list[int], name: str) -> torch.Tensor:
    """The source notebooks' formulas, written out by hand, then the mean over the word's pieces."""
    last = len(states) - 1
    by_hand = {
        "first": states[1],
        "last": states[last],
        "sum-all": sum(states[i] for i in range(last + 1)),
        "sum-last4": states[last - 3] + states[last - 2] + states[last - 1] + states[last],
        "concat-last4": torch.cat([states[last - 3], states[last - 2], states[last - 1], states[last]], dim=1),
        "mean-last4": (states[last - 3] + states[last - 2] + states[last - 1] + states[last]) / 4,
    }[name]
    return by_hand[positions].mean(dim=0)


def positions_of(offsets: list[tuple[int, int]], start: int, end: int) -> list[int]:
    return [i for i, (s, e) in enumerate(offsets) if e > s and s < end and e > start]


def cos(a: torch.Tensor, b: torch.Tensor) -> float:
    return float(torch.nn.functional.cosine_similarity(a.double(), b.double(), dim=0))


# --- strategies equal a direct computation ------------------------------------------------

@pytest.mark.parametrize("strategy", [s.value for s in words.Strategy])
def test_every_strategy_equals_direct_computation_from_hidden_states(lm, strategy):
    sentences = ["Embeddings map words to vectors.", "Contextual embeddings differ from static embeddings."]
    occs, vecs = words.vectors(lm, "embeddings", sentences, strategy)
    assert [o.sentence for o in occs] == [0, 1, 1]
    for occ, vec in zip(occs, vecs):
        states, tokens, offsets = direct_hidden_states(lm, sentences[occ.sentence])
        positions = positions_of(offsets, occ.start, occ.end)
        assert [tokens[p] for p in positions] == ["em", "##bed", "##ding", "##s"]
        expected = direct_strategy(states, positions, strategy)
        np.testing.assert_allclose(vec, expected.numpy(), atol=1e-5, rtol=1e-5)


def test_pair_cosines_in_the_reply_equal_direct_cosines(lm, run):
    reply = run(f"word bank | {RIVER_1} | {MONEY} --strategy mean-last4")
    assert reply.ok, reply.error
    got = reply.result.table("pairs")["cosine"].iloc[0]
    vecs = []
    for sentence in (RIVER_1, MONEY):
        states, _, offsets = direct_hidden_states(lm, sentence)
        start = sentence.index("bank")
        vecs.append(direct_strategy(states, positions_of(offsets, start, start + 4), "mean-last4"))
    assert got == pytest.approx(cos(*vecs), abs=1e-5)


def test_concat_last4_has_four_times_the_hidden_size(lm, run):
    _, vecs = words.vectors(lm, "bank", [RIVER_1, MONEY], "concat-last4")
    assert vecs.shape == (2, 4 * lm.hidden_size)
    reply = run(f"word bank | {RIVER_1} | {MONEY}")
    dims = reply.result.table("strategies").set_index("strategy")["dims"]
    assert dims["concat-last4"] == 4 * lm.hidden_size
    assert dims["last"] == lm.hidden_size


# --- what the word command shows ---------------------------------------------------------

@pytest.mark.parametrize("strategy", ["last", "mean-last4"])
def test_two_river_banks_are_closer_than_a_river_bank_and_a_money_bank(run, strategy):
    reply = run(f"word bank | {RIVER_1} | {RIVER_2} | {MONEY} --strategy {strategy}")
    assert reply.ok, reply.error
    label = dict(zip(reply.result.table("occurrences")["sentence"], reply.result.table("occurrences")["occurrence"]))
    pairs = reply.result.table("pairs").set_index(["a", "b"])["cosine"]
    river_river = pairs[(label[1], label[2])]
    river_money = pairs[(label[1], label[3])]
    assert river_river > river_money
    assert reply.result.settings["strategy"] == strategy


def test_all_strategies_give_one_row_each_with_baselines_and_a_seed(run):
    reply = run(f"word bank | {RIVER_1} | {MONEY} --seed 7")
    assert reply.ok, reply.error
    summary = reply.result.table("strategies")
    assert list(summary["strategy"]) == [s.value for s in words.Strategy]
    assert summary[["context baseline", "random-token baseline"]].notna().all().all()
    assert reply.result.settings["seed"] == 7
    assert "seed 7" in reply.result.text
    random_token = reply.result.table("random token")
    again = run(f"word bank | {RIVER_1} | {MONEY} --seed 7").result.table("random token")
    pd.testing.assert_frame_equal(random_token, again)
    assert random_token["token"].iloc[0] != "bank"


def test_capitalised_and_multi_piece_words_are_found(run):
    reply = run("word embeddings | Embeddings are vectors. | BERT makes EMBEDDINGS, and embeddings differ.")
    assert reply.ok, reply.error
    occ = reply.result.table("occurrences")
    assert list(occ["text"]) == ["Embeddings", "EMBEDDINGS", "embeddings"]
    assert set(occ["pieces"]) == {"em ##bed ##ding ##s"}
    assert list(occ["sentence"]) == [1, 2, 2]
    same = reply.result.table("pairs").query("strategy == 'last'")["same sentence"]
    assert same.tolist() == [False, False, True]


def test_a_word_inside_a_longer_word_is_not_an_occurrence(run):
    reply = run("word bank | The banks closed. | A bank opened. | Banking is hard, the bank said.")
    assert reply.ok, reply.error
    assert list(reply.result.table("occurrences")["sentence"]) == [2, 3]
    assert any("sentence 1" in w for w in reply.result.warnings)


def test_a_word_missing_from_some_sentences_is_named_with_its_pieces(run):
    reply = run("word embeddings | Embeddings are vectors. | The cat sat. | Models make embeddings.")
    assert reply.ok, reply.error
    warning = " ".join(reply.result.warnings)
    assert "does not occur in sentence 2" in warning
    assert "em ##bed ##ding ##s" in warning


def test_an_absent_word_gets_the_message(run):
    reply = run("word embeddings | The cat sat on the mat. | A dog barked.")
    assert not reply.ok
    assert "does not occur in sentences 1, 2" in reply.error
    assert "em ##bed ##ding ##s" in reply.error


def test_a_word_found_only_once_says_so(run):
    reply = run(f"word river | {RIVER_1} | {MONEY}")
    assert not reply.ok
    assert "occurs only once" in reply.error


def test_one_strategy_draws_an_occurrence_heatmap(run):
    reply = run(f"word bank | {RIVER_1} | {RIVER_2} | {MONEY} --strategy last")
    spec = reply.result.charts[0].chart.to_dict()
    data = next(iter(spec["datasets"].values()))
    assert len(data) == 9  # 3 occurrences x 3
    assert {row["a"] for row in data} == set(reply.result.table("occurrences")["occurrence"])
    assert spec["layer"][0]["mark"]["type"] == "rect"


def test_all_strategies_draw_grouped_bars(run):
    reply = run(f"word bank | {RIVER_1} | {MONEY}")
    spec = reply.result.charts[0].chart.to_dict()
    assert spec["mark"]["type"] == "bar"
    assert spec["encoding"]["yOffset"]["field"] == "series"
    data = next(iter(spec["datasets"].values()))
    assert {row["strategy"] for row in data} == {s.value for s in words.Strategy}
    assert {"context baseline", "random-token baseline"} <= {row["series"] for row in data}


# --- bad input -----------------------------------------------------------------------------

def test_a_word_of_only_punctuation_is_refused(run):
    reply = run(f"word ?! | {RIVER_1} | {MONEY}")
    assert not reply.ok
    assert "no letters or digits" in reply.error


def test_more_sentences_than_the_limit_are_refused(run):
    line = "word bank | " + " | ".join(f"Sentence {i} is by the bank." for i in range(65))
    reply = run(line)
    assert not reply.ok
    assert "at most 64 texts" in reply.error and "ASSISTANT_MAX_TEXTS" in reply.error


def test_an_empty_sentence_between_pipes_is_refused(run):
    reply = run(f"word bank | {RIVER_1} | | {MONEY}")
    assert not reply.ok
    assert "Text 3 is empty" in reply.error


def test_a_strategy_typo_gets_a_suggestion(run):
    reply = run(f"word bank | {RIVER_1} | {MONEY} --strategy mean-lst4")
    assert not reply.ok
    assert "Did you mean `mean-last4`?" in reply.error


def test_a_sentence_given_as_the_word_is_refused(run):
    reply = run(f"word {RIVER_1} | {MONEY}")
    assert not reply.ok
    assert "looks like a sentence" in reply.error


# --- embed ---------------------------------------------------------------------------------

def test_embed_reports_every_hidden_state_and_token_norms(lm, run):
    text = "BERT provides contextual embeddings."
    reply = run(f"embed {text} --layer 3")
    assert reply.ok, reply.error
    shapes = reply.result.table("hidden states")
    states, tokens, _ = direct_hidden_states(lm, text)
    assert list(shapes["hidden state"]) == list(range(lm.num_layers + 1))
    assert set(shapes["shape"]) == {f"{len(tokens)} x {lm.hidden_size}"}
    norms = reply.result.table("token norms")
    assert list(norms["token"]) == tokens
    np.testing.assert_allclose(norms["norm"], states[3].norm(dim=1).numpy(), rtol=1e-5, atol=1e-4)
    assert reply.result.settings == {"layer": 3, "pool": "mean"}


def test_embed_downloads_hold_the_sentence_vectors(lm, run):
    from safetensors.numpy import load

    texts = ["A cat sat on the mat.", "A kitten sat."]
    reply = run(f"embed {texts[0]} | {texts[1]} --pool cls")
    assert reply.ok, reply.error
    files = {a.filename: a.data for a in reply.result.artifacts}
    assert set(files) == {"sentence_vectors.npy", "embeddings.safetensors", "sentence_vectors.csv", "token_vectors.csv"}
    expected, encs = sentence_vectors(lm, texts, Pooling.CLS)
    matrix = np.load(io.BytesIO(files["sentence_vectors.npy"]), allow_pickle=False)
    np.testing.assert_allclose(matrix, expected.numpy(), rtol=1e-5, atol=1e-6)
    tensors = load(files["embeddings.safetensors"])
    np.testing.assert_allclose(tensors["sentence_vectors"], matrix)
    assert tensors["token_vectors_2"].shape == (len(encs[1].tokens), lm.hidden_size)
    csv = pd.read_csv(io.BytesIO(files["sentence_vectors.csv"]))
    assert list(csv["text"]) == texts
    np.testing.assert_allclose(csv.drop(columns="text").to_numpy(), matrix, rtol=1e-5, atol=1e-6)
    tokens_csv = pd.read_csv(io.BytesIO(files["token_vectors.csv"]), keep_default_na=False)
    assert len(tokens_csv) == sum(len(e.tokens) for e in encs)


def test_embed_chart_is_a_token_by_layer_heatmap(lm, run):
    reply = run("embed The cat sat.")
    spec = reply.result.charts[0].chart.to_dict()
    data = next(iter(spec["datasets"].values()))
    assert len(data) == (lm.num_layers + 1) * 6  # [CLS] the cat sat . [SEP]
    assert {row["hidden state"] for row in data} >= {"embeddings", f"layer {lm.num_layers}"}


def test_embed_layer_out_of_range_is_refused(lm, run):
    reply = run(f"embed A cat. --layer {lm.num_layers + 1}")
    assert not reply.ok
    assert f"0 (embeddings) to {lm.num_layers}" in reply.error


# --- neighbors in the model's input embeddings --------------------------------------------

def test_model_neighbours_of_bank_skip_special_and_unused_rows(lm, run):
    reply = run("neighbors bank --k 30")
    assert reply.ok, reply.error
    frame = reply.result.table("neighbours")
    assert len(frame) == 30
    assert "banks" in set(frame["neighbour"].head(5))
    assert "bank" not in set(frame["neighbour"])
    assert not frame["neighbour"].str.match(r"^\[.*\]$").any()
    weight = lm.encoder.get_input_embeddings().weight.detach()
    bank, banks = lm.tokenizer.convert_tokens_to_ids(["bank", "banks"])
    expected = float(torch.nn.functional.cosine_similarity(weight[bank], weight[banks], dim=0))
    got = frame.set_index("neighbour").loc["banks", "cosine"]
    assert got == pytest.approx(expected, abs=1e-5)
    assert reply.result.settings == {"space": "model", "k": 30}


def test_model_neighbours_of_a_multi_piece_word_use_the_mean_of_its_pieces(lm, run):
    reply = run("neighbors embeddings --k 3")
    assert reply.ok, reply.error
    assert "mean of its 4 pieces" in reply.result.text
    weight = lm.encoder.get_input_embeddings().weight.detach()
    ids = lm.tokenizer("embeddings", add_special_tokens=False)["input_ids"]
    query = weight[ids].mean(dim=0)
    top = reply.result.table("neighbours").iloc[0]
    assert top["cosine"] == pytest.approx(float(torch.nn.functional.cosine_similarity(query, weight[top["id"]], dim=0)),
                                          abs=1e-5)


def test_neighbors_bad_inputs(run):
    assert "from 1 to 100" in run("neighbors bank --k 500").error
    assert "single word" in run("neighbors river bank").error
    assert "Did you mean `glove`?" in run("neighbors bank --space glvoe").error


@pytest.mark.slow  # two fresh interpreters load torch and the model
def test_word_runs_from_the_command_line_with_json():
    import json
    import subprocess
    import sys

    from tests.conftest import ROOT

    ok = subprocess.run([sys.executable, "-m", "assistant", "run", f"word bank | {RIVER_1} | {MONEY} --strategy last",
                         "--json"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    answer = json.loads(ok.stdout)
    assert ok.returncode == 0 and answer["ok"] and answer["settings"]["strategy"] == "last"
    assert answer["tables"][0]["name"] == "strategies"
    bad = subprocess.run([sys.executable, "-m", "assistant", "run", "word ... | A bank. | A bank.", "--json"],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2
    assert "no letters or digits" in json.loads(bad.stdout)["error"]


@pytest.mark.parametrize("verb", ["word", "embed", "static", "neighbors"])
def test_every_example_of_the_issue_3_commands_works(run, verb):
    from assistant.commands.registry import TABLE

    for example in TABLE[verb].examples:
        reply = run(example)
        assert reply.ok, (example, reply.error)
        assert reply.result.tables and reply.result.charts
