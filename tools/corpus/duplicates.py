"""Near-duplicates: pairs of rows whose cosine reaches a threshold, joined into groups.

Each row is compared with its ``k`` nearest neighbours from the corpus's index (exact or HNSW,
see :mod:`tools.corpus.index`), never with every other row, so the work grows with N x k; a
group larger than ``k + 1`` is still found whole when its members link up through their
neighbours. Groups are the connected components of the pairs (scipy.sparse.csgraph).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from tools.core.errors import UserError
from tools.corpus.facts import Duplicates
from tools.corpus.folder import Corpus

DEFAULT_THRESHOLD = 0.95
DEFAULT_NEIGHBOURS = 10


def duplicates(corpus: Corpus, threshold: float = DEFAULT_THRESHOLD, k: int = DEFAULT_NEIGHBOURS) -> Duplicates:
    """Every pair (a < b) with cosine >= ``threshold`` among each row's ``k`` nearest neighbours, and their groups."""
    if not 0.0 < threshold <= 1.0:
        raise UserError(f"--threshold is a cosine between 0 and 1, like 0.95; not {threshold}.")
    if not 1 <= k <= 100:
        raise UserError(f"--k (neighbours per row) must be between 1 and 100, not {k}.")
    index = corpus.index()
    ids, scores = index.neighbours(k)
    n = index.rows
    rows = np.repeat(np.arange(n), ids.shape[1])
    cols, vals = ids.reshape(-1), scores.reshape(-1)
    keep = (cols >= 0) & (vals >= threshold - 1e-6)
    a, b = np.minimum(rows[keep], cols[keep]), np.maximum(rows[keep], cols[keep])
    pairs = pd.DataFrame({"a": a, "b": b, "cosine": vals[keep].astype(float)})
    pairs = pairs.groupby(["a", "b"], as_index=False)["cosine"].max()
    groups: list[tuple[int, ...]] = []
    if len(pairs):
        graph = coo_matrix((np.ones(len(pairs)), (pairs["a"], pairs["b"])), shape=(n, n))
        _, component = connected_components(graph, directed=False)
        members = pd.Series(np.arange(n)).groupby(component).agg(list)
        linked = set(pairs["a"]) | set(pairs["b"])
        found = [tuple(int(i) for i in m) for m in members if len(m) > 1 and m[0] in linked]
        found.sort(key=lambda g: (-len(g), g[0]))
        number = {row: g for g, members_ in enumerate(found) for row in members_}
        pairs["group"] = pairs["a"].map(number).astype(int)
        groups = found
    else:
        pairs["group"] = pd.Series(dtype=int)
    pairs = pairs.sort_values(["cosine", "a", "b"], ascending=[False, True, True], ignore_index=True)
    return Duplicates(corpus.info(), float(threshold), int(ids.shape[1]), index.kind_for_neighbours(), pairs,
                      tuple(groups), corpus.rows())
