"""Search a corpus: each query encoded with the corpus's own model and pooling, then its closest rows."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from tools.core.errors import UserError
from tools.corpus.facts import SearchHits
from tools.corpus.folder import Corpus
from tools.encoding.pooling import Pooling, sentence_vectors
from tools.models.hub import LoadedModel

#: The most hits one query may ask for.
MAX_K = 1000


def query_vectors(lm: LoadedModel, corpus: Corpus, queries: Sequence[str]) -> np.ndarray:
    """Unit-length vectors of ``queries``, made as the corpus's own were (same model, same pooling)."""
    if lm.name != corpus.manifest.model:
        raise UserError(f"Corpus `{corpus.name}` was encoded with {corpus.manifest.model}, not {lm.name}; search it "
                        f"with `--model {corpus.manifest.model}` (a query must be encoded as its rows were).")
    vectors, _ = sentence_vectors(lm, list(queries), Pooling(corpus.manifest.pooling))
    unit = vectors.double().numpy()
    unit /= np.maximum(np.linalg.norm(unit, axis=1, keepdims=True), 1e-12)
    return unit.astype(np.float32)


def among_rows(corpus: Corpus, vectors: np.ndarray, among: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Exact top-``k`` by cosine over the rows ``among`` only: (ids, scores) per query, -1 where fewer."""
    unit = corpus.unit_vectors()
    scores = np.concatenate([vectors @ np.asarray(unit[among[i:i + 65536]], np.float32).T
                             for i in range(0, len(among), 65536)], axis=1)
    take = min(k, len(among))
    order = np.argsort(-scores, axis=1, kind="stable")[:, :take]
    ids = np.full((len(vectors), k), -1, dtype=np.int64)
    best = np.zeros((len(vectors), k), dtype=np.float32)
    ids[:, :take] = among[order]
    best[:, :take] = np.take_along_axis(scores, order, axis=1)
    return ids, best


def search(lm: LoadedModel, corpus: Corpus, queries: Sequence[str], k: int = 10,
           among: np.ndarray | None = None) -> SearchHits:
    """The ``k`` rows closest to each query by cosine, best first, with their metadata (``among``: only these
    row ids, searched exactly)."""
    queries = [q for q in queries if q.strip()]
    if not queries:
        raise UserError("`search` needs a query, like `search a cat on a mat`.")
    if not 1 <= k <= MAX_K:
        raise UserError(f"--k must be between 1 and {MAX_K}, not {k}.")
    index = corpus.index()
    if among is None:
        ids, scores = index.search(query_vectors(lm, corpus, queries), k)
    else:
        ids, scores = among_rows(corpus, query_vectors(lm, corpus, queries), among, k)
    rows = corpus.rows()
    parts = []
    for q, (row_ids, row_scores) in enumerate(zip(ids, scores)):
        found = row_ids >= 0
        hit = rows.iloc[row_ids[found]].reset_index(drop=True)
        hit.insert(0, "score", row_scores[found].astype(float))
        hit.insert(0, "rank", np.arange(1, int(found.sum()) + 1))
        hit.insert(0, "query", queries[q])
        parts.append(hit)
    frame = pd.concat(parts, ignore_index=True)
    frame = frame[["query", "rank", "id", "score", "text", *[c for c in rows.columns if c not in ("id", "text")]]]
    return SearchHits(corpus.info(), lm.name, corpus.manifest.pooling, tuple(queries), k, frame,
                      index.kind_for_search() if among is None else "exact", among=0 if among is None else len(among))
