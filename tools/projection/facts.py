"""What the projection tools find, as typed facts: coordinates, the rows a chart draws and the choices made.

``project`` (:mod:`~tools.projection.maps`, :mod:`~tools.projection.vocab_basis`,
:mod:`~tools.projection.glove_basis`) and ``vocab`` (:mod:`~tools.projection.vocab`) compute these;
:mod:`~tools.projection.replies` turns each into the words, tables, charts and downloads a person reads.
Nothing here is prose, except ``notes`` and ``warnings``: each comes from the code that knows the rule
(the fit's perplexity or pre-reduction, truncation, pooling, GloVe's unknown words).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

import numpy as np
import pandas as pd

from tools.encoding.pooling import Pooling
from tools.projection.fit import Fitted, Method


@dataclass(frozen=True)
class FitSummary:
    """How a map was fitted, as its reply needs it (the coordinates are in the map's frames).

    Attributes:
        method: PCA, t-SNE or UMAP.
        dims: 2, or 3 (shown as three pairwise views).
        explained: PCA's explained-variance ratio per component (None otherwise).
        notes: sentences about choices the method made for this input (perplexity, pre-reduction).
    """

    method: Method
    dims: int
    explained: np.ndarray | None
    notes: tuple[str, ...]


def summary(fitted: Fitted, dims: int) -> FitSummary:
    """The facts of ``fitted`` a reply uses."""
    return FitSummary(fitted.method, dims, fitted.explained, fitted.notes)


@dataclass(frozen=True)
class TokenMap:
    """``project --level tokens``: every token of every text and each text's sentence vector in one map.

    Attributes:
        model: the model's name.
        texts: the texts as typed.
        layer: the hidden state of the token vectors; num_layers: how many layers the model has.
        pooling: how the sentence vectors were pooled.
        fit: how the map was fitted.
        fitted_together: t-SNE cannot place points afterwards, so it was fitted on the tokens and the
            sentence vectors together (otherwise on the tokens, the sentence vectors placed afterwards).
        n_tokens: how many of ``points`` are tokens (the rest are sentence vectors).
        kinds: the values of the ``kind`` column, in legend order (token, special token, sentence vector).
        points: one row per token, then one per text's sentence vector (text, position, token, kind, dim1...).
        shown: the rows the chart draws: all of ``points``, or a seeded sample keeping every special token
            and sentence vector.
        sampled: whether ``shown`` is a sample.
        warnings: truncated texts.
        layer_warnings: an sbert recipe that ignored ``layer`` (said after the chart's sample).
    """

    model: str
    texts: tuple[str, ...]
    layer: int
    num_layers: int
    pooling: Pooling
    fit: FitSummary
    fitted_together: bool
    n_tokens: int
    kinds: tuple[str, ...]
    points: pd.DataFrame
    shown: pd.DataFrame
    sampled: bool
    warnings: list[str] = field(default_factory=list)
    layer_warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class SentenceMap:
    """``project --level sentences``: one point per text, its sentence vector.

    Attributes:
        model: the model's name.
        texts: the texts as typed.
        layer: the hidden state pooled (the last for ``sbert``, whatever was asked).
        asked_layer: the hidden state the caller asked for.
        num_layers: how many layers the model has.
        pooling: how the sentence vectors were pooled.
        fit: how the map was fitted.
        points: one row per text (text, token: its short label, position, kind, dim1...).
        warnings: truncated texts, an sbert recipe that ignored ``layer``.
    """

    model: str
    texts: tuple[str, ...]
    layer: int
    asked_layer: int
    num_layers: int
    pooling: Pooling
    fit: FitSummary
    points: pd.DataFrame
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class VocabBasisMap:
    """``project --basis vocab``: each token's static row and contextual vector in a map of the vocabulary.

    Attributes:
        model: the model's name.
        texts: the texts as typed.
        layer: the hidden state of the contextual vectors; num_layers: how many layers the model has.
        pooling: the pooling asked for (unused by this map).
        fit: how the map was fitted on the input-embedding matrix.
        basis_rows: how many vocabulary rows the map was fitted on.
        basis_sampled: whether those rows are a seeded sample (UMAP is fitted on at most a few thousand).
        tokens: one row per token of the texts: text, position, token, id, special, its static and
            contextual coordinates, how far it moved and the cosine between its two vectors.
        shown: the chart's rows: each token twice (``kind`` ``static`` or ``contextual``, ``order`` 0 or 1,
            ``pair`` joining the two), or a seeded sample of them.
        sampled: whether ``shown`` is a sample.
        background: vocabulary rows drawn in grey for orientation (dim1..., token).
        warnings: truncated texts.
    """

    model: str
    texts: tuple[str, ...]
    layer: int
    num_layers: int
    pooling: Pooling
    fit: FitSummary
    basis_rows: int
    basis_sampled: bool
    tokens: pd.DataFrame
    shown: pd.DataFrame
    sampled: bool
    background: pd.DataFrame
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class GloveMap:
    """``project --basis glove``: the texts' words in a map of GloVe's most frequent words.

    Attributes:
        source: the static vectors' name (GloVe 6B 50d).
        texts: the texts as typed.
        fit: how the map was fitted.
        basis_words: how many of GloVe's most frequent words the map was fitted on.
        words: one row per word GloVe knows (text, position, word, dim1...).
        shown: the first rows of ``words``, those the chart draws.
        background: GloVe words drawn in grey for orientation (dim1..., token).
        shared: the words found in more than one text, sorted.
        warnings: words GloVe does not know (left out of the map).
    """

    source: str
    texts: tuple[str, ...]
    fit: FitSummary
    basis_words: int
    words: pd.DataFrame
    shown: pd.DataFrame
    background: pd.DataFrame
    shared: tuple[str, ...]
    warnings: list[str] = field(default_factory=list)


class Color(str, Enum):
    """The label that colours the vocabulary chart."""

    LENGTH = "length"
    VOWELS = "vowels"
    NUMBER = "number"
    SUBWORD = "subword"
    SPECIAL = "special"


@dataclass(frozen=True)
class Vocabulary:
    """``vocab``: the first rows of the input-embedding matrix, projected and labelled.

    Attributes:
        model: the model's name; hidden_size: the width of its vectors.
        n: how many rows, in id order, were considered.
        skipped: how many of them were ``[unused…]`` placeholders.
        color: the label that colours the chart.
        fit: how the map was fitted.
        tokens: one row per token kept: id, token, its labels (length, vowels, number, subword, special), dim1...
        shown: the chart's rows: all of ``tokens``, or a seeded sample keeping every special token.
        sampled: whether ``shown`` is a sample.
        vectors: the tokens' input-embedding rows, in ``tokens`` order.
        labels: the Projector's metadata: token and its labels, one row per vector.
    """

    model: str
    hidden_size: int
    n: int
    skipped: int
    color: Color
    fit: FitSummary
    tokens: pd.DataFrame
    shown: pd.DataFrame
    sampled: bool
    vectors: np.ndarray
    labels: pd.DataFrame
