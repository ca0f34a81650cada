"""The corpus store with the real model: encode once, reopen from disk, search like brute force."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from tests.corpus_helpers import brute_top_k, vector_corpus
from tools.core.config import Settings
from tools.core.errors import UserError
from tools.corpus import encode as corpus_encode
from tools.corpus import folder as corpus_folder
from tools.corpus import replies
from tools.corpus.encode import ChunkEncoder, encode_corpus, load_corpus
from tools.corpus.files import save_npy
from tools.corpus.search import search
from tools.corpus.store import CorpusStore
from tools.encoding.pooling import Pooling, sentence_vectors

QUERIES = ["A man is playing a guitar.", "Stocks fell sharply on Monday."]


@pytest.fixture(scope="module")
def sentences(stsb_dir):
    """180 distinct STS-B dev sentences (read where they live, never copied)."""
    frame = pd.read_csv(stsb_dir / "sts-dev.tsv", sep="\t", header=None, quoting=3, usecols=[5], dtype=str)
    return list(dict.fromkeys(frame[5].str.strip()))[:180]


def test_encode_once_reopen_in_a_fresh_store_and_search_like_brute_force(lm, tmp_path, sentences, monkeypatch):
    path = tmp_path / "dev.csv"
    pd.DataFrame({"n": range(len(sentences)), "sentence": sentences,
                  "source": ["stsb-dev"] * len(sentences)}).to_csv(path, index=False)
    settings = Settings(corpus_dir=str(tmp_path / "store"))
    progress = []
    read, report = load_corpus(CorpusStore.from_settings(settings), path, lm, settings, chunk_rows=64,
                               progress=lambda f, m: progress.append(f))
    assert report.info.complete and report.chunks_encoded == 3 and report.rows_encoded == len(sentences)
    assert report.info.pooling == "sbert" and report.info.index_kind == "exact"
    assert progress == sorted(progress) and progress[-1] == 1.0
    expected_vectors = sentence_vectors(lm, sentences, Pooling.SBERT)[0].numpy()
    query_vectors = sentence_vectors(lm, QUERIES, Pooling.SBERT)[0].numpy()
    want_ids, want_scores = brute_top_k(expected_vectors, query_vectors, 7)

    def no_encoding(self, texts):
        raise AssertionError("the corpus was encoded again")

    monkeypatch.setattr(ChunkEncoder, "__call__", no_encoding)
    fresh = CorpusStore(tmp_path / "store")  # a new process sees only the folder
    corpus = fresh.open(report.info.name)
    np.testing.assert_allclose(corpus.vectors(), expected_vectors, atol=1e-5)
    assert isinstance(corpus.unit_vectors(), np.memmap)
    hits = search(lm, corpus, QUERIES, k=7).hits
    for q, query in enumerate(QUERIES):
        got = hits[hits["query"] == query]
        assert got["rank"].tolist() == list(range(1, 8))
        assert got["id"].tolist() == want_ids[q].tolist()
        np.testing.assert_allclose(got["score"], want_scores[q], atol=1e-5)
        assert got["text"].tolist() == [sentences[i] for i in want_ids[q]]
        assert (got["source"] == "stsb-dev").all() and got["n"].tolist() == [str(i) for i in want_ids[q]]
    _, again = load_corpus(fresh, path, lm, settings)  # the same file again: the same folder, nothing encoded
    assert again.reused and again.info.key == report.info.key
    result = replies.loaded(read.report, again)
    assert "nothing was encoded again" in result.text and result.table("corpus")["rows"].tolist() == [180]


def test_a_chunk_moved_into_place_before_a_crash_counts_and_is_never_encoded_again(tmp_path, monkeypatch):
    monkeypatch.setattr(corpus_folder, "NORMALISE_ROWS", 7)  # the finished corpus is normalised in blocks of 7 rows
    store = CorpusStore(tmp_path / "store")
    texts = [f"row {i}" for i in range(100)]
    vectors = np.random.default_rng(1).standard_normal((100, 8)).astype(np.float32)
    corpus = vector_corpus(store, tmp_path, texts[:1], vectors[:1], "warmup")  # the store works at all
    assert corpus.manifest.complete
    path = tmp_path / "c.txt"
    path.write_text("\n".join(texts), encoding="utf-8")
    from tools.corpus.read import read_texts

    corpus = store.create(read_texts(path, Settings()), "synthetic", "mean", 8, "c", chunk_rows=30)
    save_npy(corpus.chunk_path(1), vectors[30:60])  # on disk under its final name, manifest not yet rewritten
    assert json.loads((corpus.folder / "manifest.json").read_text())["chunks_done"] == []
    reopened = store.open("c")
    assert reopened.pending_chunks() == [0, 2, 3]
    seen = []

    def encoder(batch):
        seen.extend(batch)
        return vectors[[texts.index(t) for t in batch]]

    report = encode_corpus(reopened, encoder)
    assert sorted(seen) == sorted(texts[:30] + texts[60:]) and report.chunks_skipped == 1
    np.testing.assert_allclose(reopened.vectors(), vectors, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(reopened.unit_vectors(), axis=1), 1.0, rtol=1e-6)
    assert not (reopened.folder / "chunks").exists()  # joined into vectors.npy, then removed


def test_a_corpus_begun_before_length_order_resumes_in_file_order(tmp_path):
    from tools.corpus.read import read_texts

    texts = [f"{'long ' * (i % 5)}row {i}" for i in range(40)]  # file order is not length order
    vectors = np.random.default_rng(3).standard_normal((40, 4)).astype(np.float32)
    path = tmp_path / "old.txt"
    path.write_text("\n".join(texts), encoding="utf-8")
    store = CorpusStore(tmp_path / "store")
    corpus = store.create(read_texts(path, Settings()), "synthetic", "mean", 4, "old", chunk_rows=10)
    corpus.manifest.version = 1  # as format 1 left it: chunk 0 is rows 0-9
    corpus.write_manifest()
    save_npy(corpus.chunk_path(0), vectors[:10])
    reopened = store.open("old")
    assert reopened.pending_chunks() == [1, 2, 3]
    seen = []

    def encoder(batch):
        seen.extend(batch)
        return vectors[[texts.index(t) for t in batch]]

    encode_corpus(reopened, encoder)
    assert sorted(seen) == sorted(texts[10:])
    np.testing.assert_allclose(store.open("old").vectors(), vectors, rtol=1e-6, atol=1e-6)


def test_names_listing_drop_and_the_disk_limit(tmp_path):
    store = CorpusStore(tmp_path / "store", disk_limit_bytes=10 * 2**20)
    vectors = np.eye(5, 16, dtype=np.float32) + 0.1
    a = vector_corpus(store, tmp_path, [f"a{i}" for i in range(5)], vectors, "alpha")
    vector_corpus(store, tmp_path, [f"b{i}" for i in range(5)], vectors, "beta")
    listed = store.list()
    assert [i.name for i in listed.corpora] == ["alpha", "beta"] and listed.bytes_on_disk > 0
    assert "2 corpora" in replies.listing(listed).text
    with pytest.raises(UserError, match="taken by another corpus"):
        vector_corpus(store, tmp_path, [f"c{i}" for i in range(5)], vectors, "alpha")
    info = store.drop("alpha")
    assert info.key == a.key and not a.folder.exists() and [i.name for i in store.list().corpora] == ["beta"]
    with pytest.raises(UserError, match="There is no corpus `alpha`; the corpora here are `beta`"):
        store.open("alpha")
    tiny = CorpusStore(tmp_path / "tiny", disk_limit_bytes=1000)
    with pytest.raises(UserError, match="ASSISTANT_CORPUS_DISK_MB"):
        vector_corpus(tiny, tmp_path, [f"d{i}" for i in range(50)], np.ones((50, 16), np.float32), "delta")


def test_search_encodes_queries_with_the_corpus_model_only(lm, tmp_path):
    store = CorpusStore(tmp_path / "store")
    corpus = vector_corpus(store, tmp_path, ["x", "y", "z"], np.eye(3, 384, dtype=np.float32), "other")
    with pytest.raises(UserError, match="encoded with synthetic, not minilm"):
        search(lm, corpus, ["a query"])
    with pytest.raises(UserError, match="pool sbert"):
        corpus_encode.corpus_pooling(lm, "cls")


def test_cancelling_between_chunks_keeps_the_finished_ones_for_the_next_run(tmp_path):
    from tools.core import cancel
    from tools.corpus.read import read_texts

    texts = [f"line {i}" for i in range(50)]
    vectors = np.random.default_rng(2).standard_normal((50, 4)).astype(np.float32)
    path = tmp_path / "c.txt"
    path.write_text("\n".join(texts), encoding="utf-8")
    store = CorpusStore(tmp_path / "store")
    corpus = store.create(read_texts(path, Settings()), "synthetic", "mean", 4, "c", chunk_rows=10)
    token = cancel.CancelToken()
    calls = []

    def encoder(batch):
        calls.append(len(batch))
        if len(calls) == 2:
            token.cancel("The command passed its time limit.")
        return vectors[[texts.index(t) for t in batch]]

    with cancel.scope(token), pytest.raises(cancel.Cancelled, match="time limit"):
        encode_corpus(corpus, encoder)
    assert calls == [10, 10] and store.open("c").pending_chunks() == [2, 3, 4]
    report = encode_corpus(store.open("c"), encoder)
    assert report.chunks_skipped == 2 and report.chunks_encoded == 3 and calls == [10] * 5
    np.testing.assert_allclose(store.open("c").vectors(), vectors, rtol=1e-6, atol=1e-6)
