"""The corpus map: its layout fitted once and kept, equal to scikit-learn's PCA, its binary form small, and
the `map` command's reply, tokens and `--in` selections (no browser; see test_page_map.py for the page)."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest

from assistant.dispatch import execute
from assistant.maps import Maps
from assistant.session import Session
from tests.corpus_helpers import clustered, vector_corpus
from tools.core.config import Settings
from tools.corpus import layout, maps
from tools.corpus.store import CorpusStore


@pytest.fixture()
def synthetic(tmp_path):
    vectors, groups = clustered(3000, 32, 5, seed=1)
    texts = [f"text {i} of group {g}" for i, g in enumerate(groups)]
    store = CorpusStore(tmp_path / "corpora")
    corpus = vector_corpus(store, tmp_path, texts, vectors, "synth")
    return store, corpus, tmp_path


def test_the_layout_is_fitted_once_stored_and_reused(synthetic):
    _, corpus, _ = synthetic
    coords, meta = layout.load_or_fit(corpus)
    coords_path, meta_path = layout.paths(corpus, layout.Method.PCA)
    assert coords_path.is_file() and meta_path.is_file() and not meta["reused"]
    assert coords.dtype == np.float32 and coords.shape == (3000, 2)
    stamp = coords_path.stat().st_mtime_ns
    again, meta2 = layout.load_or_fit(corpus)
    assert meta2["reused"] and coords_path.stat().st_mtime_ns == stamp
    np.testing.assert_array_equal(np.asarray(again), coords)


def test_pca_equals_scikit_learns_on_the_same_vectors(synthetic):
    from sklearn.decomposition import PCA

    _, corpus, _ = synthetic
    coords, meta = layout.load_or_fit(corpus)
    unit = np.asarray(corpus.unit_vectors(), dtype=np.float64)
    expected = PCA(n_components=2, svd_solver="full").fit(unit)
    reference = expected.transform(unit)
    signs = np.sign((reference * coords).sum(axis=0))  # a principal axis is defined up to its sign
    np.testing.assert_allclose(coords * signs, reference, atol=1e-5)
    np.testing.assert_allclose(meta["explained"], expected.explained_variance_ratio_, atol=1e-5)


def test_the_binary_map_costs_at_most_twelve_bytes_a_point(synthetic):
    _, corpus, _ = synthetic
    facts = maps.corpus_map(corpus, color="length")
    body = layout.points_bytes(facts.xy, facts.codes)
    assert len(body) / facts.rows <= 12 and facts.bytes_per_point <= 12
    assert body[:4] == b"MAP1"
    rows, code_bytes, _ = np.frombuffer(body[4:16], dtype="<u4")
    assert (rows, code_bytes) == (3000, 1)
    xy = np.frombuffer(body[16:16 + 8 * rows], dtype="<f4").reshape(-1, 2)
    np.testing.assert_array_equal(xy, facts.xy)
    assert np.abs(xy).max() <= 1.0
    assert list(np.frombuffer(body[16 + 8 * rows:], dtype=np.uint8)) == facts.codes.tolist()


def test_colour_by_cluster_uses_the_last_clusters_run(synthetic):
    from tools.corpus import clusters

    _, corpus, _ = synthetic
    quick = maps.corpus_map(corpus)
    assert quick.color_source == "quick" and quick.anchors
    found = clusters.clusters(corpus, 5)
    stored = maps.corpus_map(corpus)
    assert stored.color_source == "stored" and len(stored.categories) == 5
    assert stored.codes.tolist() == found.labels.tolist()


def test_umap_without_umap_learn_answers_with_a_sentence(synthetic):
    _, corpus, _ = synthetic
    if layout.umap_installed():
        pytest.skip("umap-learn is installed here")
    with pytest.raises(Exception, match="umap-learn"):
        maps.corpus_map(corpus, layout.Method.UMAP)


def test_the_map_command_issues_a_token_for_its_conversation_only(synthetic, hub):
    store, corpus, tmp = synthetic
    settings = Settings(corpus_dir=str(store.root))
    registry = Maps()
    session = Session()
    reply = execute("map --color length", session, hub, settings, maps=registry)
    assert reply.ok, reply.error
    r = reply.result
    assert r.text.startswith("**3,000 points**") and "PCA" in r.text and "explained variance" in r.text
    token = r.settings["map"]
    assert len(token) >= 32 and registry.get(token).conversation == session.page_key
    assert len(json.dumps(reply.to_json())) < 4000  # no coordinates in the JSON: a table and a token
    names = [a.filename for a in r.artifacts]
    assert "map_pca.parquet" in names and "map_pca.html" in names
    html = next(a for a in r.artifacts if a.filename.endswith(".html")).data.decode()
    assert "createScatterplot" not in html[:2000] and '"points": "TUFQ' in html  # base64 of MAP1
    session.close()
    assert registry.get(token) is None  # the token dies with the conversation


def test_search_and_clusters_in_a_selection(synthetic, hub):
    store, corpus, _ = synthetic
    settings = Settings(corpus_dir=str(store.root))
    registry = Maps()
    session = Session()
    token = execute("map", session, hub, settings, maps=registry).result.settings["map"]
    grant = registry.get(token)
    chosen = list(range(100, 160))
    assert registry.select(grant, chosen + [10**9, -1]) == 60
    from tools.corpus import search

    ids, scores = search.among_rows(corpus, np.asarray(corpus.unit_vectors()[[5]]), registry.selection(
        session.page_key).ids, 10)
    assert set(ids[0]) <= set(chosen) and np.all(np.diff(scores[0]) <= 1e-6)
    reply = execute("clusters --k 3 --in selection", session, hub, settings, maps=registry)
    assert reply.ok, reply.error
    assert "the selection: 60 of its 3,000 rows" in reply.result.text
    reply = execute("clusters --k 2 --in 0-9,20", session, hub, settings, maps=registry)
    assert reply.ok and "11 of its 3,000 rows" in reply.result.text
    fresh = Session()
    reply = execute("clusters --in selection", fresh, hub, settings, maps=registry)
    assert not reply.ok and "no selection yet" in reply.error
    # the conversation's selection outlives its page and the server: a reload (a new page of the same
    # conversation) and a restart (a new registry) both find it on disk, and an empty lasso forgets it
    reloaded, restarted = Session(id=session.key), Maps()
    reply = execute("clusters --k 3 --in selection", reloaded, hub, settings, maps=restarted)
    assert reply.ok and "the selection: 60 of its 3,000 rows" in reply.result.text, reply.error
    assert registry.select(grant, []) == 0
    reply = execute("clusters --in selection", Session(id=session.key), hub, settings, maps=Maps())
    assert not reply.ok and "no selection yet" in reply.error


@pytest.mark.slow
def test_pca_layout_of_100k_rows_fits_in_seconds(tmp_path):
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((100_000, 384)).astype(np.float32)
    store = CorpusStore(tmp_path / "c")
    corpus = vector_corpus(store, tmp_path, [f"t{i}" for i in range(len(vectors))], vectors, "big", 8192)
    start = time.perf_counter()
    coords, meta = layout.load_or_fit(corpus)
    assert coords.shape == (100_000, 2) and time.perf_counter() - start < 60


@pytest.mark.slow
def test_umap_fits_a_sample_places_the_rest_and_is_kept(synthetic, hub, monkeypatch):
    if not layout.umap_installed():
        pytest.skip("umap-learn is not installed (`pip install -r requirements-umap.txt -c constraints.txt`)")
    store, corpus, _ = synthetic
    monkeypatch.setattr(layout, "UMAP_SAMPLE", 1000)
    seen: list[tuple[float, str]] = []
    coords, meta = layout.load_or_fit(corpus, layout.Method.UMAP, lambda f, m: seen.append((f, m)))
    assert coords.shape == (3000, 2) and coords.dtype == np.float32 and np.isfinite(coords).all()
    assert meta["fit_rows"] == 1000 and meta["method"] == "umap" and not meta["reused"]
    assert "fitting UMAP on 1,000 rows" in seen[0][1] and seen[-1] == (1.0, "placing 2,000 of 2,000 rows")
    # the five groups of the vectors stay apart on the map: each point's nearest 2-D neighbour shares its group
    groups = np.array([int(t.rsplit(" ", 1)[1]) for t in corpus.rows()["text"]])
    d = ((coords[:500, None, :] - coords[None, :, :]) ** 2).sum(-1)
    d[np.arange(500), np.arange(500)] = np.inf
    assert (groups[d.argmin(axis=1)] == groups[:500]).mean() > 0.9
    settings = Settings(corpus_dir=str(store.root))
    session = Session()
    reply = execute("map --method umap", session, hub, settings, maps=Maps())
    assert reply.ok, reply.error
    assert "by UMAP" in reply.result.text and "was reused" in reply.result.text
    assert "the other 2,000 rows were placed by UMAP's transform" in reply.result.text
    session.close()
