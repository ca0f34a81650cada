"""Search a corpus: each query encoded with the corpus's own model and pooling, then its closest rows."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from tools.core.errors import UserError
from tools.core.text import code
from tools.corpus.facts import SearchHits
from tools.corpus.folder import Corpus
from tools.corpus.read import clear_of
from tools.encoding.pooling import Pooling, sentence_vectors
from tools.models.hub import LoadedModel

#: The most hits one query may ask for.
MAX_K = 1000
#: The columns a search puts beside each hit's row.
HIT_COLUMNS = ("rank", "score", "query")


def query_vectors(lm: LoadedModel, corpus: Corpus, queries: Sequence[str],
                  rows: Sequence[int | None] | None = None) -> np.ndarray:
    """Unit-length vectors of ``queries``, made as the corpus's own were (same model, same pooling); a query that
    names a corpus row (``rows``, from :meth:`Corpus.named_row`) is that row's stored vector."""
    if lm.name != corpus.manifest.model:
        raise UserError(f"Corpus `{corpus.name}` was encoded with {corpus.manifest.model}, not {lm.name}; search it "
                        f"with `--model {corpus.manifest.model}` (a query must be encoded as its rows were).")
    rows = list(rows) if rows is not None else [None] * len(queries)
    unit = np.zeros((len(queries), corpus.manifest.dims), dtype=np.float64)
    typed = [i for i, row in enumerate(rows) if row is None]
    if typed:
        vectors, _ = sentence_vectors(lm, [queries[i] for i in typed], Pooling(corpus.manifest.pooling))
        unit[typed] = vectors.double().numpy()
        unit[typed] /= np.maximum(np.linalg.norm(unit[typed], axis=1, keepdims=True), 1e-12)
    stored = {i: row for i, row in enumerate(rows) if row is not None}
    if stored:
        unit[list(stored)] = np.asarray(corpus.unit_vectors()[list(stored.values())], dtype=np.float64)
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
    row ids, searched exactly). A query ``#N`` is row N: its stored vector, and its hits are its neighbours (the row
    itself left out)."""
    queries = [q.strip() for q in queries if q.strip()]
    if not queries:
        raise UserError("`search` needs a query, like `search a cat on a mat`.")
    if not 1 <= k <= MAX_K:
        raise UserError(f"--k must be between 1 and {MAX_K}, not {k}.")
    named = [corpus.named_row(q) for q in queries]
    wanted = k + (any(n is not None for n in named))  # one more, for the row itself
    vectors = query_vectors(lm, corpus, queries, named)
    index = corpus.index()
    if among is None:
        ids, scores = index.search(vectors, wanted)
    else:
        ids, scores = among_rows(corpus, vectors, among, wanted)
    rows = clear_of(corpus.rows(), HIT_COLUMNS)  # (a file's own `score` column is kept as `score_1`)
    parts = []
    for q, (row_ids, row_scores) in enumerate(zip(ids, scores)):
        found = np.flatnonzero((row_ids >= 0) & (row_ids != (-1 if named[q] is None else named[q])))[:k]
        hit = rows.iloc[row_ids[found]].reset_index(drop=True)
        parts.append(hit.assign(rank=np.arange(1, len(found) + 1), score=row_scores[found].astype(float),
                                query=queries[q]))
    if parts[0].empty and named[0] is not None:
        raise UserError(f"Corpus {code(corpus.name, 30)} has no row besides {queries[0]}"
                        + (" in the selection" if among is not None else "") + " to be near it.")
    frame = pd.concat(parts, ignore_index=True)
    frame = frame[["rank", "id", "score", "text", *[c for c in rows.columns if c not in ("id", "text")], "query"]]
    texts = corpus.texts() if any(n is not None for n in named) else []
    said = tuple(q if n is None else texts[n] for q, n in zip(queries, named))
    return SearchHits(corpus.info(), lm.name, corpus.manifest.pooling, tuple(queries), k, frame,
                      index.kind_for_search() if among is None else "exact", among=0 if among is None else len(among),
                      query_texts=said)
