"""Helpers of the corpus tests: a corpus filled from known vectors (no model), brute-force cosine top-k."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tools.core.config import Settings
from tools.corpus.encode import encode_corpus
from tools.corpus.folder import Corpus
from tools.corpus.read import read_texts
from tools.corpus.store import CorpusStore


def vector_corpus(store: CorpusStore, folder: Path, texts: list[str], vectors: np.ndarray, name: str,
                  chunk_rows: int = 256) -> Corpus:
    """A corpus of ``texts`` whose 'encoder' returns the given ``vectors`` (texts must be distinct)."""
    assert len(set(texts)) == len(texts)
    path = folder / f"{name}.txt"
    path.write_text("\n".join(texts) + "\n", encoding="utf-8")
    read = read_texts(path, Settings(corpus_max_rows=10**7, corpus_max_chars=10**6, corpus_max_mb=10**4))
    corpus = store.create(read, "synthetic", "mean", vectors.shape[1], name, chunk_rows)
    lookup = {t: i for i, t in enumerate(texts)}
    encode_corpus(corpus, lambda batch: vectors[[lookup[t] for t in batch]])
    return corpus


def unit(vectors: np.ndarray) -> np.ndarray:
    v = np.asarray(vectors, dtype=np.float64)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def brute_top_k(corpus_vectors: np.ndarray, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Cosine top-k by a full float64 sort: (ids, scores), best first."""
    scores = unit(queries) @ unit(corpus_vectors).T
    ids = np.argsort(-scores, axis=1, kind="stable")[:, :k]
    return ids, np.take_along_axis(scores, ids, axis=1)


def clustered(n: int, dims: int, groups: int, seed: int = 0, latent: int = 24) -> tuple[np.ndarray, np.ndarray]:
    """``n`` float32 vectors in ``groups`` clusters on a low-dimensional subspace plus noise, like real embeddings."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((groups, latent))
    labels = rng.integers(0, groups, n)
    z = centres[labels] + 0.5 * rng.standard_normal((n, latent))
    x = z @ rng.standard_normal((latent, dims)) + 0.3 * rng.standard_normal((n, dims))
    return x.astype(np.float32), labels
