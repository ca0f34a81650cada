"""Nearest words by cosine: in the model's input-embedding matrix, or in GloVe 6B 50d."""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

import numpy as np
import pandas as pd
import torch

from tools.core.errors import UserError
from tools.core.text import code
from tools.core.timing import answer
from tools.encoding import unknown
from tools.models.hub import LoadedModel, as_model
from tools.similarity import replies
from tools.similarity.facts import Neighbours
from tools.similarity.static import GLOVE, glove, oov_message

_UNUSED = re.compile(r"^\[unused\d+\]$|^<unused\d+>$")
MAX_K = 100
#: How many vocabulary words (seeded) the tightness of a neighbourhood is measured against.
SAMPLE_WORDS = 200
#: GloVe's sample is drawn from its most frequent words (rows are in frequency order).
GLOVE_COMMON = 20_000
_GLOVE_SAMPLE: list[np.ndarray] = []
_GLOVE_LOCK = threading.Lock()


class Space(str, Enum):
    """Where neighbours are looked for."""

    MODEL = "model"
    GLOVE = "glove"


@dataclass(frozen=True)
class InputEmbeddings:
    """A model's input-embedding rows as unit vectors, with the rows neighbours may come from."""

    raw: torch.Tensor  # (V, D) the matrix itself (read-only use)
    unit: torch.Tensor  # (V, D) float32, rows normalised
    allowed: torch.Tensor  # (V,) bool: not special, not [unused...]
    tokens: list[str]


def input_embeddings(lm: LoadedModel) -> InputEmbeddings:
    """The model's input-embedding matrix prepared once per model (shared read-only)."""
    with lm.lock:
        if lm.state.input_embeddings is None:
            lm.state.input_embeddings = _build_input_embeddings(lm)
        return lm.state.input_embeddings


def _build_input_embeddings(lm: LoadedModel) -> InputEmbeddings:
    weight = lm.encoder.get_input_embeddings().weight.detach().float().cpu()
    tokens = lm.tokenizer.convert_ids_to_tokens(list(range(weight.shape[0])))
    special = set(lm.tokenizer.all_special_ids)
    allowed = torch.tensor([i not in special and t is not None and not _UNUSED.match(t)
                            for i, t in enumerate(tokens)])
    return InputEmbeddings(weight, torch.nn.functional.normalize(weight, dim=1), allowed, [t or "" for t in tokens])


def _top_cosines(unit: torch.Tensor, rows: torch.Tensor, allowed: torch.Tensor) -> np.ndarray:
    """Each sampled row's :data:`MAX_K` highest cosines to the allowed rows, itself left out, best first."""
    out = []
    for chunk in rows.split(50):
        scores = unit[chunk] @ unit.T
        scores = scores.masked_fill(~allowed, float("-inf"))
        scores[torch.arange(len(chunk)), chunk] = float("-inf")
        out.append(torch.topk(scores, MAX_K, dim=1).values.numpy())
    return np.concatenate(out)


def model_sample(lm: LoadedModel) -> np.ndarray:
    """The nearest-neighbour cosines (:data:`SAMPLE_WORDS` seeded rows x :data:`MAX_K`) of whole-word vocabulary
    rows, computed once per model: what a neighbourhood's tightness is read against."""
    matrix = input_embeddings(lm)
    with lm.lock:
        if lm.state.neighbourhoods is None:
            words = torch.tensor([bool(a) and t.isalpha() and not t.startswith("##")
                                  for a, t in zip(matrix.allowed.tolist(), matrix.tokens)])
            pool = torch.nonzero(words).flatten()
            pick = pool[torch.from_numpy(np.random.default_rng(0).choice(len(pool), min(SAMPLE_WORDS, len(pool)),
                                                                          replace=False))]
            lm.state.neighbourhoods = _top_cosines(matrix.unit, pick, matrix.allowed)
        return lm.state.neighbourhoods


def glove_sample() -> np.ndarray:
    """The same for :data:`SAMPLE_WORDS` seeded words among GloVe's :data:`GLOVE_COMMON` most frequent."""
    with _GLOVE_LOCK:
        if not _GLOVE_SAMPLE:
            table = glove()
            pick = np.random.default_rng(0).choice(min(GLOVE_COMMON, len(table.words)), SAMPLE_WORDS, replace=False)
            _GLOVE_SAMPLE.append(np.asarray([[s for _, s in table.nearest(np.asarray(table.vectors[i]), MAX_K,
                                                                          exclude=frozenset({int(i)}))]
                                             for i in pick]))
        return _GLOVE_SAMPLE[0]


def _model_neighbors(lm: LoadedModel, word: str, k: int) -> Neighbours:
    matrix = input_embeddings(lm)
    ids = lm.tokenizer(word, add_special_tokens=False)["input_ids"]
    if not ids:
        raise UserError(f"{lm.name}'s tokenizer makes no tokens of {code(word, 30)}; give a word such as `bank`.")
    unknown.note(lm, word, ids)
    pieces = lm.tokenizer.convert_ids_to_tokens(ids)
    query = matrix.raw[ids].mean(dim=0)  # a multi-piece word: the mean of its pieces' rows
    scores = matrix.unit @ torch.nn.functional.normalize(query, dim=0)
    scores = scores.masked_fill(~matrix.allowed, float("-inf"))
    if len(ids) == 1:
        scores[ids[0]] = float("-inf")  # the word itself
    top = torch.topk(scores, k)
    rows = [{"rank": r + 1, "neighbour": matrix.tokens[int(i)], "id": int(i), "cosine": float(s),
             "word piece": matrix.tokens[int(i)].startswith("##")}
            for r, (s, i) in enumerate(zip(top.values, top.indices))]
    return Neighbours(word, Space.MODEL.value, lm.name, tuple(pieces), len(matrix.tokens), int(matrix.raw.shape[1]),
                      pd.DataFrame(rows), k, model_sample(lm)[:, :k].mean(axis=1))


def _glove_neighbors(word: str, k: int) -> Neighbours:
    table = glove()
    index = table.row(word)
    if index is None:
        raise UserError(oov_message([word.lower()]))
    found = table.nearest(np.asarray(table.vectors[index]), k, exclude=frozenset({index}))
    rows = [{"rank": r + 1, "neighbour": str(table.words[i]), "id": i, "cosine": s} for r, (i, s) in enumerate(found)]
    return Neighbours(word, Space.GLOVE.value, GLOVE, (word.lower(),), len(table.words), table.dims,
                      pd.DataFrame(rows), k, glove_sample()[:, :k].mean(axis=1))


def nearest(
    model: LoadedModel | str | None,
    texts: Sequence[str],
    space: str = "model",
    k: int = 10,
) -> Neighbours:
    """The ``k`` nearest words to one word by cosine.

    Args:
        model: a loaded model or its name (used for ``space="model"``).
        texts: one word.
        space: ``model`` (the model's input-embedding matrix; a word of several
            pieces is the mean of its pieces) or ``glove`` (GloVe 6B 50d, lower-cased).
        k: how many neighbours, 1 to 100.

    Returns:
        The facts; ``neighbors`` (the same call) answers with a Result:
        A ranked table of neighbours with their cosine, and a bar chart.
    """
    if len(texts) != 1:
        raise UserError(f"`neighbors` takes one word, like `neighbors bank`; got {len(texts)} texts.")
    word = " ".join(texts[0].split())
    if not word or len(word.split()) > 1:
        raise UserError(f"`neighbors` takes a single word, like `neighbors bank`; {code(word, 40)} has spaces.")
    try:
        chosen = Space((space or "model").lower())
    except ValueError:
        raise UserError(f"Unknown --space {code(space, 20)}; use model or glove.") from None
    if not 1 <= int(k) <= MAX_K:
        raise UserError(f"--k must be from 1 to {MAX_K}; got {k}.")
    if chosen is Space.GLOVE:
        return _glove_neighbors(word, int(k))  # GloVe needs no model
    return _model_neighbors(as_model(model), word, int(k))


#: The one-call tool: :func:`nearest` answered as a Result by the family's formatter.
neighbors = answer(nearest, replies.neighbors, "neighbors")
