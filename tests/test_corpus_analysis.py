"""Clusters, c-TF-IDF labels, duplicates and outliers recover what was planted; their replies are complete and safe."""

from __future__ import annotations

import csv
import io
import math
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import normalized_mutual_info_score

from assistant.render.terminal import write_downloads
from tests.corpus_helpers import clustered, vector_corpus
from tools.core.config import Settings
from tools.core.errors import UserError
from tools.corpus import replies
from tools.corpus.clusters import c_tf_idf, clusters
from tools.corpus.duplicates import duplicates
from tools.corpus.encode import load_corpus
from tools.corpus.outliers import outliers
from tools.corpus.store import CorpusStore

TOPICS = {
    "cooking": ["Stir the onions in butter until they turn golden.", "Bake the bread for forty minutes.",
                "Season the soup with salt and fresh pepper.", "Chop the garlic and fry it gently in olive oil.",
                "Whisk the eggs with sugar before folding in the flour.", "Simmer the tomato sauce for an hour.",
                "Roast the chicken with lemon and rosemary.", "Knead the dough until it is smooth and elastic."],
    "football": ["The striker scored twice in the second half.", "The goalkeeper saved a penalty in extra time.",
                 "The referee showed a red card to the defender.", "Their midfield controlled the match from kickoff.",
                 "The coach changed tactics after the first goal.", "Fans cheered as the winger crossed the ball.",
                 "The team won the league on the final day.", "A late header equalised in stoppage time."],
    "astronomy": ["The telescope observed a distant galaxy.", "Astronomers found a planet orbiting a red dwarf.",
                  "The comet's tail points away from the sun.", "A supernova briefly outshone its whole galaxy.",
                  "Jupiter's moons were tracked through the night.", "The probe sent images of Saturn's rings.",
                  "Dark matter shapes how galaxies rotate.", "The eclipse darkened the sky for three minutes."],
}


def test_clusters_recover_topics_with_the_real_model(lm, tmp_path):
    texts, truth = [], []
    for label, sentences in enumerate(TOPICS.values()):
        for s in sentences:
            texts.append(s)
            truth.append(label)
    path = tmp_path / "topics.jsonl"
    pd.DataFrame({"text": texts, "topic": [list(TOPICS)[t] for t in truth]}).to_json(path, orient="records", lines=True)
    settings = Settings(corpus_dir=str(tmp_path / "store"))
    store = CorpusStore.from_settings(settings)
    _, report = load_corpus(store, path, lm, settings)
    found = clusters(store.open(report.info.name), "auto")
    assert found.chosen_by == "silhouette" and found.k == 3 and found.unassigned == 0
    assert normalized_mutual_info_score(truth, found.labels) > 0.9
    words = {w for group in found.label_words for w, _ in group[:8]}
    assert {"galaxy", "team"} & words
    for group, reps in enumerate(found.representatives):  # representatives belong to their own group
        assert len(reps) == 3 and all(found.labels[r] == group for r in reps)
    result = replies.clusters(found)
    assert len(result.table("rows")) == len(texts) and result.table("clusters")["size"].sum() == len(texts)
    assert result.text.startswith("**3 clusters**") and "silhouette" in result.text


def test_one_clusters_rows_are_listed_closest_to_its_centroid_first(tmp_path):
    vectors, _ = clustered(600, 16, 4, seed=3)
    store = CorpusStore(tmp_path / "corpora")
    texts = [f"text {i}" for i in range(600)]
    corpus = vector_corpus(store, tmp_path, texts, vectors, "planted")
    whole = clusters(corpus, 4, seed=1)
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    for said, group in (("2", 2), ("largest", int(np.argmax(whole.sizes))), ("smallest", int(np.argmin(whole.sizes)))):
        shown = clusters(corpus, 4, seed=1, group=said)  # the same k and seed: the groups read back, not fitted again
        assert shown.shown == group and np.array_equal(shown.labels, whole.labels) and shown.reused
        assert "the groups of the last run of this k and seed, read back" in replies.clusters(shown).text
        members = np.flatnonzero(whole.labels == group)  # computed apart: cosine to the members' normalised mean
        centre = unit[members].mean(axis=0)
        cosine = unit[members] @ (centre / np.linalg.norm(centre))
        assert sorted(shown.members) == members.tolist()
        np.testing.assert_allclose(shown.closeness, np.sort(cosine)[::-1], atol=1e-5)
        result = replies.clusters(shown)
        listed = result.table(f"cluster {group}")  # the group's table first, the usual tables after it
        assert result.tables[0].name == f"cluster {group}" and len(listed) == whole.sizes[group]
        assert list(listed.columns[:4]) == ["rank", "id", "cosine to centre", "text"]
        assert listed["text"].iat[0] == texts[shown.members[0]]
        assert result.text.startswith(f"**Cluster {group}** of 4 in **planted** ({whole.sizes[group]:,} rows")
        spec = result.charts[0].to_json()["vega_lite"]  # the sizes' bars, the group listed in a colour of its own
        bars = next(iter(spec["datasets"].values()))
        assert spec["encoding"]["color"]["field"] == "rows"
        assert [b["rows"] for b in bars] == ["listed below" if g == group else "the others" for g in range(4)]
    assert not whole.reused and not clusters(corpus, 4, seed=2).reused  # (another seed is another run)
    auto = clusters(corpus, "auto", seed=1)
    again = clusters(corpus, "auto", seed=1, group="largest")  # k chosen again as it was, its silhouettes kept
    assert not auto.reused and again.reused and again.k == auto.k and again.silhouettes == auto.silhouettes
    assert again.chosen_by == "silhouette" and again.sample_rows == auto.sample_rows
    assert np.array_equal(again.labels, auto.labels)
    with pytest.raises(UserError) as refused:
        clusters(corpus, 4, seed=1, group="7")
    assert str(refused.value) == "There are 4 clusters, numbered 0 to 3: --group `7` is none of them (or say largest " \
                                 "or smallest)."


def test_c_tf_idf_matches_a_hand_computation():
    docs = ["apple apple banana", "banana cherry cherry cherry", "apple date"]
    got = c_tf_idf(docs, top=10)
    counts = [Counter(d.split()) for d in docs]
    words = sorted(set().union(*counts))
    mean_words = sum(sum(c.values()) for c in counts) / len(counts)  # A = 9 / 3
    for c, ranked in zip(counts, got):
        total = sum(c.values())
        expect = {w: c[w] / total * math.log(1 + mean_words / sum(o[w] for o in counts)) for w in words if c[w]}
        assert set(dict(ranked)) == set(expect)
        assert np.allclose([dict(ranked)[w] for w in expect], [expect[w] for w in expect], rtol=1e-12)
        assert [w for w, _ in ranked] == sorted(expect, key=lambda w: (-expect[w], w))
    assert got[1][0][0] == "cherry" and got[2][0][0] == "date"


def test_duplicates_find_planted_near_copies_and_group_them(tmp_path):
    vectors, _ = clustered(600, 64, 12, seed=3)
    rng = np.random.default_rng(4)
    planted = {(10, 600), (10, 601), (250, 602), (400, 603)}  # row 10 has two near-copies: one group of three
    extra = [vectors[a] + 0.01 * np.linalg.norm(vectors[a]) * rng.standard_normal(64) / 8
             for a, _ in sorted(planted, key=lambda p: p[1])]
    allv = np.vstack([vectors, np.array(extra, dtype=np.float32)])
    texts = [f"text {i}" for i in range(len(allv))]
    corpus = vector_corpus(CorpusStore(tmp_path / "s"), tmp_path, texts, allv, "dups")
    unit = allv / np.linalg.norm(allv, axis=1, keepdims=True)
    cos = unit @ unit.T
    np.fill_diagonal(cos, -1)
    truth = {(int(a), int(b)) for a, b in zip(*np.nonzero(np.triu(cos >= 0.99)))}
    assert planted <= truth  # the planted copies are the pairs above 0.99 (and they are few)
    found = duplicates(corpus, threshold=0.99)
    assert set(zip(found.pairs["a"], found.pairs["b"])) == truth
    groups = {frozenset(g) for g in found.groups}
    assert frozenset({10, 600, 601}) in groups and frozenset({250, 602}) in groups
    result = replies.duplicates(found)
    assert len(result.table("pairs")) == len(truth) and "near-duplicate groups" in result.text


def test_outliers_find_planted_far_points(tmp_path):
    vectors, _ = clustered(800, 48, 6, seed=5)
    far = np.random.default_rng(6).standard_normal((5, 48)).astype(np.float32) * 10  # off the data's subspace
    allv = np.vstack([vectors, far])
    corpus = vector_corpus(CorpusStore(tmp_path / "s"), tmp_path, [f"t{i}" for i in range(len(allv))], allv, "out")
    found = outliers(corpus, top=5, k=10)
    assert set(found.ids) == set(range(800, 805))
    assert list(found.distances) == sorted(found.distances, reverse=True)
    result = replies.outliers(found)
    assert len(result.table("distances")) == 805 and result.table("outliers")["id"].tolist() == list(found.ids)


def test_corpus_replies_neutralise_formulas_in_csv_and_keep_every_row(tmp_path):
    texts = ["=HYPERLINK(\"http://evil.example\")", "+1+2", "@SUM(A1)", "plain words"] + [f"r{i}" for i in range(6000)]
    vectors = np.random.default_rng(0).standard_normal((len(texts), 16)).astype(np.float32)
    corpus = vector_corpus(CorpusStore(tmp_path / "s"), tmp_path, texts, vectors, "hostile", chunk_rows=4096)
    result = replies.outliers(outliers(corpus, top=len(texts)))
    assert len(result.table("outliers")) == len(texts)  # the table holds them all...
    assert all(len(c.chart.to_dict()["datasets"][next(iter(c.chart.to_dict()["datasets"]))]) <= 5000
               for c in result.charts)  # ...the chart stays under the row limit
    written = [Path(p) for p in write_downloads(result, tmp_path) if p.endswith(".csv")]  # as every face writes them
    assert [p.name for p in written] == ["outliers-1-outliers.csv", "outliers-2-distances.csv"]  # each table, once
    download = written[0].read_text(encoding="utf-8")
    cells = [cell for row in csv.reader(io.StringIO(download)) for cell in row]
    assert "'=HYPERLINK(\"http://evil.example\")" in cells and "'+1+2" in cells and "'@SUM(A1)" in cells
    assert not any(c.startswith(("=", "+", "@")) for c in cells)
