"""Nearest neighbours over a corpus's unit vectors: exact while that is fast enough, HNSW (usearch) above.

Two questions, two costs (measured on 2 shared cores, 384 dims):

- A few queries against every row (``search``): brute force is one matrix-vector product,
  about 8 ms per query at 50,000 rows and 127 ms (p50; p95 236 ms, loaded) at 1,000,000, so it stays
  exact up to :data:`EXACT_SEARCH_MAX_ROWS`, the largest corpus: every search has recall 1.
- Every row against every row (``duplicates``, ``outliers``): brute force grows with the square,
  about 2.2 s per 1,000 rows at 50,000 rows (110 s in all), against 14 s to build an HNSW graph of
  100,000 corpus vectors whose recall@10 was 0.998 (:data:`EXPANSION_ADD`). So a corpus of more than
  :data:`HNSW_MIN_ROWS` rows gets an HNSW graph when its encoding finishes (``index.usearch``,
  memory-mapped on load, its recall@10 against exact search measured on a sample and recorded),
  used for all-row neighbours, and for search above :data:`EXACT_SEARCH_MAX_ROWS`.

Scores are cosines (inner products of unit vectors), best first.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import numpy as np

from tools.core import cancel
from tools.core.errors import UserError

#: Up to this many rows a query is compared with every row (exact); above it, the HNSW graph answers.
EXACT_SEARCH_MAX_ROWS = 1_000_000
#: Above this many rows the corpus gets an HNSW graph for all-row neighbours.
HNSW_MIN_ROWS = 10_000
INDEX_FILE = "index.usearch"
#: HNSW settings: 16 links per node, 64 candidates while building, 128 while searching. On 100,000 minilm vectors
#: of the corpus bench's texts (2-core AMD EPYC 25/17): 64 while building took 14.0 s for recall@10 0.9977, 128 took
#: 27.6 s for 0.9992, 40 took 7.6 s for 0.9860 (1,000 rows as queries against exact search).
CONNECTIVITY, EXPANSION_ADD, EXPANSION_SEARCH = 16, 64, 128
#: Rows whose neighbours are compared with exact ones to measure the graph's recall@10.
RECALL_SAMPLE = 500
#: Query rows per block of brute-force products.
BLOCK = 512
#: Scores computed at once (query rows x corpus rows of one tile): 16 MB of float32, and 32 MB of int64 positions
#: while its best are picked, whatever the corpus's size (all 100,000 rows at once took 1.2 GB for 500 queries).
TILE_CELLS = 1 << 22


def exact_search(unit: np.ndarray, queries: np.ndarray, k: int,
                 progress: Callable[[float], None] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` rows of ``unit`` with the highest inner product with each query: (ids, scores), best first.

    Queries go in blocks of :data:`BLOCK`, the corpus in tiles of at most :data:`TILE_CELLS` scores: each
    tile's best ``k`` of each query are kept, then the best ``k`` of those; rows of equal score come in row order.
    """
    n = unit.shape[0]
    k = min(k, n)
    ids = np.empty((len(queries), k), dtype=np.int64)
    scores = np.empty((len(queries), k), dtype=np.float32)
    for start in range(0, len(queries), BLOCK):
        cancel.check()
        block = np.asarray(queries[start:start + BLOCK], dtype=np.float32)
        tile = max(k, TILE_CELLS // len(block))
        found = [_best(block @ np.asarray(unit[lo:lo + tile]).T, k, lo) for lo in range(0, n, tile)]
        top, part = _best_of(np.concatenate([f[0] for f in found], axis=1),
                             np.concatenate([f[1] for f in found], axis=1), k)
        ids[start:start + len(block)], scores[start:start + len(block)] = top, part
        if progress is not None:
            progress(min(1.0, (start + len(block)) / len(queries)))
    return ids, scores


def _best(products: np.ndarray, k: int, first: int) -> tuple[np.ndarray, np.ndarray]:
    """Each row's ``k`` highest products (ids counted from ``first``, scores), in no order."""
    width = products.shape[1]
    if k >= width:
        top = np.broadcast_to(np.arange(width), products.shape)
    else:
        top = np.argpartition(products, width - k, axis=1)[:, width - k:]
    return top + first, np.take_along_axis(products, top, axis=1)


def _best_of(ids: np.ndarray, scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Each row's ``k`` best of these candidates, best first; equal scores in row-id order."""
    order = np.lexsort((ids, -scores), axis=1)[:, :k]
    return np.take_along_axis(ids, order, axis=1), np.take_along_axis(scores, order, axis=1)


def build_hnsw(unit: np.ndarray, threads: int = 0):
    """An HNSW graph (usearch, inner product, float32) over ``unit``; keys are row ids."""
    from usearch.index import Index

    index = Index(ndim=unit.shape[1], metric="ip", dtype="f32", connectivity=CONNECTIVITY,
                  expansion_add=EXPANSION_ADD, expansion_search=EXPANSION_SEARCH)
    step = 8192
    for start in range(0, unit.shape[0], step):
        cancel.check()
        stop = min(start + step, unit.shape[0])
        index.add(np.arange(start, stop, dtype=np.uint64), np.ascontiguousarray(unit[start:stop]), threads=threads)
    return index


def hnsw_search(index, queries: np.ndarray, k: int, threads: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(ids, scores) from the HNSW graph, best first; a row with fewer than ``k`` hits is padded with -1 / nan."""
    found = index.search(np.ascontiguousarray(queries, dtype=np.float32), k, threads=threads)
    keys = np.asarray(found.keys).reshape(len(queries), -1).astype(np.int64)
    dist = np.asarray(found.distances).reshape(len(queries), -1).astype(np.float32)
    counts = np.asarray(found.counts).reshape(-1)
    mask = np.arange(keys.shape[1])[None, :] >= counts[:, None]
    keys[mask] = -1
    scores = 1.0 - dist
    scores[mask] = np.nan
    return keys, scores


def recall_at_k(approx: np.ndarray, exact: np.ndarray) -> float:
    """The share of each exact top-k found in the approximate top-k, averaged over queries."""
    k = exact.shape[1]
    return float(np.mean([len(set(a.tolist()) & set(e.tolist())) / k for a, e in zip(approx, exact)]))


def measure_recall(index, unit: np.ndarray, k: int = 10, sample: int = RECALL_SAMPLE, seed: int = 0) -> float:
    """recall@k of ``index`` against exact search, for a random sample of rows used as queries."""
    rng = np.random.default_rng(seed)
    rows = np.sort(rng.choice(unit.shape[0], size=min(sample, unit.shape[0]), replace=False))
    queries = np.asarray(unit[rows])
    return recall_at_k(hnsw_search(index, queries, k)[0], exact_search(unit, queries, k)[0])


def build_index(folder: Path, unit: np.ndarray) -> tuple[str, float | None]:
    """The corpus's index, written beside its vectors: ``("exact", None)`` or ``("hnsw", recall@10)``."""
    if unit.shape[0] <= HNSW_MIN_ROWS:
        return "exact", None
    index = build_hnsw(unit)
    recall = measure_recall(index, unit)
    tmp = folder / f".{INDEX_FILE}.tmp"
    index.save(str(tmp))
    os.replace(tmp, folder / INDEX_FILE)  # a crash never leaves a half-written graph under the real name
    return "hnsw", recall


class VectorIndex:
    """Search over one corpus's unit vectors: exact products, or its HNSW graph memory-mapped from disk."""

    def __init__(self, unit: np.ndarray, graph=None) -> None:
        self.unit = unit
        self.graph = graph

    @classmethod
    def open(cls, folder: Path, unit: np.ndarray, kind: str) -> VectorIndex:
        graph = None
        if kind == "hnsw":
            from usearch.index import Index

            graph = Index.restore(str(folder / INDEX_FILE), view=True)
            if graph is None:
                raise UserError(f"The index of this corpus could not be read ({INDEX_FILE}); drop the corpus and "
                                "load its file again.")
            graph.expansion_search = EXPANSION_SEARCH  # type: ignore[misc]  # a setter at run time, unseen by mypy
        return cls(unit, graph)

    @property
    def rows(self) -> int:
        return int(self.unit.shape[0])

    def kind_for_search(self) -> str:
        return "hnsw" if self.graph is not None and self.rows > EXACT_SEARCH_MAX_ROWS else "exact"

    def kind_for_neighbours(self) -> str:
        return "hnsw" if self.graph is not None else "exact"

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` closest rows to each unit-length query: (ids, cosines), best first."""
        queries = np.atleast_2d(np.asarray(queries, dtype=np.float32))
        k = min(k, self.rows)
        if self.kind_for_search() == "hnsw":
            return hnsw_search(self.graph, queries, k)
        return exact_search(self.unit, queries, k)

    def neighbours(self, k: int, progress: Callable[[float], None] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Every row's ``k`` nearest other rows: (ids, cosines), each (N, k), best first.

        A row is never its own neighbour; an identical text elsewhere is.
        """
        k = min(k, self.rows - 1)
        if k < 1:
            return np.empty((self.rows, 0), np.int64), np.empty((self.rows, 0), np.float32)
        if self.kind_for_neighbours() == "hnsw":
            ids, scores = [], []
            step = 8192
            for start in range(0, self.rows, step):
                cancel.check()
                block = np.asarray(self.unit[start:start + step])
                i, s = hnsw_search(self.graph, block, k + 1)
                ids.append(i)
                scores.append(s)
                if progress is not None:
                    progress(min(1.0, (start + len(block)) / self.rows))
            ids_all, scores_all = np.concatenate(ids), np.concatenate(scores)
        else:
            ids_all, scores_all = exact_search(self.unit, self.unit, k + 1, progress)
        return _drop_self(ids_all, scores_all, k)


def _drop_self(ids: np.ndarray, scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Remove each row's own id from its hits (or the last hit when it is absent), keeping ``k``."""
    rows = np.arange(ids.shape[0])[:, None]
    is_self = ids == rows
    missing = ~is_self.any(axis=1)
    is_self[missing, -1] = True  # not found (ties, approximation): the weakest hit goes instead
    keep = ~is_self
    out_ids = ids[keep].reshape(ids.shape[0], -1)[:, :k]
    out_scores = scores[keep].reshape(ids.shape[0], -1)[:, :k]
    return out_ids, out_scores
