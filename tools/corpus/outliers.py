"""Outliers: the rows farthest, on average, from their ``k`` nearest neighbours (cosine distance)."""

from __future__ import annotations

import numpy as np

from tools.core.errors import UserError
from tools.corpus.facts import Outliers
from tools.corpus.folder import Corpus


def outliers(corpus: Corpus, top: int = 20, k: int = 10) -> Outliers:
    """The ``top`` rows with the largest mean distance (1 - cosine) to their ``k`` nearest other rows."""
    if not 1 <= k <= 100:
        raise UserError(f"--k (neighbours per row) must be between 1 and 100, not {k}.")
    if top < 1:
        raise UserError(f"--top must be at least 1, not {top}.")
    index = corpus.index()
    if index.rows < 2:
        raise UserError(f"Corpus `{corpus.name}` has one row; outliers need at least two.")
    _, scores = index.neighbours(k)
    distance = 1.0 - np.nanmean(scores.astype(np.float64), axis=1)
    order = np.lexsort((np.arange(len(distance)), -distance))[: min(top, len(distance))]
    return Outliers(corpus.info(), int(top), int(scores.shape[1]), index.kind_for_neighbours(),
                    tuple(int(i) for i in order), tuple(float(distance[i]) for i in order), distance, corpus.rows())
