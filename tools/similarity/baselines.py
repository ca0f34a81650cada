"""Context-blind sentence vectors, the baselines a contextual model must beat.

- GloVe 6B 50d (loaded once, read-only, by :mod:`tools.similarity.static`): the mean of a
  text's word vectors.
- A model's own input-embedding matrix: the mean of the rows of a text's token ids
  (special tokens left out), before any layer has mixed in context.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from tools.models.hub import LoadedModel
from tools.similarity.static import GLOVE as GLOVE_NAME
from tools.similarity.static import glove, words_of

__all__ = ["GLOVE_NAME", "glove_average", "input_embedding_average"]


def glove_average(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """The mean GloVe vector of each text's known words, and how many known words each had.

    Words are those of the ``static`` command (lower-cased runs of letters and
    digits, :func:`tools.similarity.static.words_of`); a text with no known word gets a zero vector.
    """
    table = glove()
    words = [words_of(t) for t in texts]
    flat = [w for ws in words for w in ws]
    rows = table.words.get_indexer(flat) if flat else np.zeros(0, dtype=int)
    out = np.zeros((len(texts), table.dims), dtype=np.float32)
    known = np.zeros(len(texts), dtype=int)
    at = 0
    for i, ws in enumerate(words):
        mine = rows[at:at + len(ws)]
        at += len(ws)
        mine = mine[mine >= 0]
        if len(mine):
            out[i] = np.asarray(table.vectors[np.sort(mine)], dtype=np.float32).mean(axis=0)
            known[i] = len(mine)
    return out, known


def input_embedding_average(lm: LoadedModel, token_ids: Sequence[np.ndarray]) -> np.ndarray:
    """The mean input-embedding row of each id sequence, special tokens left out, shape (N, hidden)."""
    matrix = lm.encoder.get_input_embeddings().weight
    special = set(lm.tokenizer.all_special_ids)
    out = np.zeros((len(token_ids), matrix.shape[1]), dtype=np.float32)
    with torch.inference_mode():
        for i, ids in enumerate(token_ids):
            keep = [int(t) for t in ids if int(t) not in special]
            if keep:
                rows = matrix[torch.tensor(keep, device=matrix.device)]
                out[i] = rows.float().mean(dim=0).cpu().numpy()
    return out
