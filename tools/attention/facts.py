"""What the attention tools find, as typed facts: weights, head scores, shapes and the choices that shaped them.

The tools (``attend``, ``selfattn``, ``syntax``) compute these; :mod:`~tools.attention.replies`
turns each into the words, tables and charts a person reads. Nothing here is prose, except
``warnings`` (each comes from the code that knows the rule: truncation, cut-off words) and
:attr:`ChartData.note` (the row-limit rule says how it reduced a chart's rows).

Layers and heads are numbered from 1 (see the package docstring).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

import numpy as np
import pandas as pd

# --- the schema of the pattern-score frame ------------------------------------------------------

class Pattern(str, Enum):
    """What a head may do; each value is a column of the pattern table."""

    SELF = "self"
    PREVIOUS = "previous"
    NEXT = "next"
    CLS = "to [CLS]"
    SEP = "to [SEP]"
    CLS_READS = "[CLS] reads text"


#: The pattern table's column of mean row entropy.
ENTROPY = "entropy (bits)"


def strongest(scores: pd.DataFrame) -> dict[Pattern, tuple[int, int, float]]:
    """For each pattern, the (layer, head, score) of the head that scores highest in a pattern table."""
    best = {}
    for pattern in Pattern:
        row = scores.loc[scores[pattern.value].idxmax()]
        best[pattern] = (int(row["layer"]), int(row["head"]), float(row[pattern.value]))
    return best


# --- the columns of the syntax head-score frame -------------------------------------------------

DEP_TO_HEAD = "dependent → head"
HEAD_TO_DEP = "head → dependent"
ARC_SHARE = "arc share"
RHO = "distance ρ"


# --- chart rows ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class ChartData:
    """Tidy rows for attention heatmaps, and how they were reduced to fit the row limit."""

    frame: pd.DataFrame
    order: list[str]
    note: str  # "" when every weight is shown


class View(str, Enum):
    """Which heads a reply draws."""

    HEAD = "head"  # one heatmap
    LAYER = "layer"  # one layer's heads side by side
    HEAD_ACROSS_LAYERS = "head across layers"  # one head number in every layer
    MODEL = "model"  # every layer x head


# --- every drawn head as a raster ---------------------------------------------------------------

@dataclass(frozen=True)
class HeadGrid:
    """The drawn heads' attention quantised for the page: every weight of every head, as bytes.

    Attributes:
        layers: the drawn layers (1-based), rows of the grid.
        heads: the drawn heads (1-based), columns of the grid.
        tokens: the label of each row and column of a head's matrix (a token, or a block of tokens).
        block: tokens per block (1: every token has its own row and column).
        weights: uint8, (len(layers), len(heads), n, n); ``round(weight * 255)``.
    """

    layers: tuple[int, ...]
    heads: tuple[int, ...]
    tokens: tuple[str, ...]
    block: int
    weights: np.ndarray


# --- the commands' facts ------------------------------------------------------------------------

@dataclass(frozen=True)
class AttentionMaps:
    """One text's (or pair's) attention, the view drawn and every head's pattern scores.

    Attributes:
        model: the model's name.
        num_layers: attention layers of the model.
        num_heads: heads per layer.
        tokens: the word pieces, special tokens included.
        segments: ``A`` / ``B`` per token of a pair ("" for special tokens and single texts).
        labels: unique axis labels per token (``3 cat ·A``).
        pair: whether the input was a pair of texts.
        view: which heads are drawn.
        layer: the asked ``--layer`` (None: every layer).
        head: the asked ``--head`` (None: every head).
        scores: one row per head (layer, head, one column per :class:`Pattern`, :data:`ENTROPY`).
        chart: the drawn heads' weights as chart rows (one head), or their pattern scores as chart rows.
        weights: the drawn heads' attention, (layers, heads, T, T), or (T, T) for one head.
        grid: the drawn heads quantised as a raster grid (every view of several heads; None for one head).
        warnings: truncation.
    """

    model: str
    num_layers: int
    num_heads: int
    tokens: tuple[str, ...]
    segments: tuple[str, ...]
    labels: tuple[str, ...]
    pair: bool
    view: View
    layer: int | None
    head: int | None
    scores: pd.DataFrame
    chart: ChartData
    weights: np.ndarray
    grid: HeadGrid | None = None
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Shapes:
    """The shape of every step of a hand-built self-attention.

    Attributes:
        hidden: the input hidden state (T, hidden size).
        weight: each query/key/value weight (out x in).
        split: Q, K, V split into heads (heads, T, d).
        weights: the attention weights (heads, T, T).
        context: the concatenated output (T, heads * d).
    """

    hidden: tuple[int, ...]
    weight: tuple[int, ...]
    split: tuple[int, ...]
    weights: tuple[int, ...]
    context: tuple[int, ...]


@dataclass(frozen=True)
class RebuiltAttention:
    """A layer's self-attention rebuilt by hand and its distance from the model's own weights.

    Attributes:
        model: the model's name.
        layer: the rebuilt attention layer (it reads hidden state ``layer - 1``).
        head: the head drawn.
        causal: whether the causal mask was also applied.
        heads: the model's head count.
        hidden_size: the model's hidden size.
        tokens: how many tokens the text became.
        differences: per head, the largest |rebuilt - model| weight.
        within: per head, whether that difference is within the tolerance.
        shapes: every step's shape.
        checks: with ``causal``, per head the largest masked weight and row-sum error (head,
            max weight above diagonal, max |row sum - 1|, masked); otherwise None.
        chart: the drawn head's weights as chart rows (rebuilt vs model's, or unmasked vs causal).
        weights: the rebuilt weights (heads, T, T), or (2, heads, T, T) unmasked and causal.
        warnings: truncation.
    """

    model: str
    layer: int
    head: int
    causal: bool
    heads: int
    hidden_size: int
    tokens: int
    differences: np.ndarray
    within: np.ndarray
    shapes: Shapes
    checks: pd.DataFrame | None
    chart: ChartData
    weights: np.ndarray
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ToyAttention:
    """A toy: a hidden state split into a chosen number of heads with random projections.

    Attributes:
        model: the model's name.
        model_heads: the model's own head count (not compared).
        layer: the attention layer whose input hidden state (``layer - 1``) is used.
        causal: whether the causal mask is applied.
        heads: the toy's head count.
        seed: the seed of the random projections.
        hidden_size: the model's hidden size.
        tokens: how many tokens the text became.
        checks: per toy head, the largest weight above the diagonal and row-sum error (head,
            max weight above diagonal, max |row sum - 1|, masked).
        shapes: every step's shape.
        chart: the first toy heads' weights as chart rows.
        weights: the toy's weights (heads, T, T), masked with ``causal``.
        warnings: truncation.
    """

    model: str
    model_heads: int
    layer: int
    causal: bool
    heads: int
    seed: int
    hidden_size: int
    tokens: int
    checks: pd.DataFrame
    shapes: Shapes
    chart: ChartData
    weights: np.ndarray
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class SyntaxAgreement:
    """Every head's attention scored against a dependency parse.

    Attributes:
        model: the model's name.
        num_layers: attention layers of the model.
        num_heads: heads per layer.
        parser: the spaCy pipeline's name.
        words: spaCy words aligned to word pieces.
        sentences: sentences in the parse.
        pieces: word pieces of the encoding, special tokens included.
        scores: one row per head (layer, head, :data:`DEP_TO_HEAD`, :data:`HEAD_TO_DEP`,
            :data:`ARC_SHARE`, :data:`RHO`).
        top: the heads with the highest arc share, best first.
        relations: per dependency relation, its arcs and best heads.
        parse: one row per spaCy word, with its word pieces.
        chance: the arc share of uniform attention over the other words.
        word_attention: word-to-word attention (layers, heads, W, W).
        rho_pairs: word pairs in the same sentence (the population of ρ).
        rho_sample: the most pairs ρ is computed on (a fixed sample beyond that).
        warnings: truncation, words cut off.
    """

    model: str
    num_layers: int
    num_heads: int
    parser: str
    words: int
    sentences: int
    pieces: int
    scores: pd.DataFrame
    top: pd.DataFrame
    relations: pd.DataFrame
    parse: pd.DataFrame
    chance: float
    word_attention: np.ndarray
    rho_pairs: int
    rho_sample: int
    warnings: list[str] = field(default_factory=list)
