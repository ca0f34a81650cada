"""What the similarity tools find, as typed facts: numbers, frames and the choices that shaped them.

The tools (``compare``, ``why``, ``words``, ``embed``, ``static``, ``neighbors``) compute these;
:mod:`~tools.similarity.replies` turns each into the words, tables and charts a person reads.
Nothing here is prose, except
``warnings``: each comes from the code that knows the rule (pooling, truncation), and the
integrated-gradients ``baseline``, described by :mod:`~tools.similarity.attribution`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

import numpy as np
import pandas as pd

from tools.encoding.pooling import Pooling
from tools.similarity.reference import References


@dataclass(frozen=True)
class Comparison:
    """Cosines between the sentence vectors of two or more texts, per pooling.

    Attributes:
        model: the model's name.
        texts: the texts as typed.
        poolings: the poolings compared, in order.
        cosines: one ``len(texts) x len(texts)`` cosine matrix per pooling.
        layer: the hidden state pooled (0 = embedding output).
        num_layers: how many layers the model has (``layer == num_layers`` is the last).
        asked_pool: the ``pool`` the caller asked for (``all`` or one name).
        warnings: truncated texts, an sbert recipe that ignored ``layer``.
        references: the model's reference cosines to judge these against, or why there are none (None: not
            looked up, as in a notebook's call).
    """

    model: str
    texts: tuple[str, ...]
    poolings: tuple[Pooling, ...]
    cosines: dict[Pooling, np.ndarray]
    layer: int
    num_layers: int
    asked_pool: str
    warnings: list[str] = field(default_factory=list)
    references: References | None = None


# --- why -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class WhyExact:
    """A mean-pooled cosine split exactly into token-pair contributions (:mod:`~tools.similarity.why_math`).

    Attributes:
        model: the model's name.
        texts: the two texts.
        pooling: ``mean``, or an ``sbert`` recipe that is a mean.
        layer: the hidden state pooled; num_layers: how many layers the model has.
        cosine: the cosine the contributions add up to.
        a_tokens, b_tokens: each text's tokens.
        matrix: the (a tokens, b tokens) contributions; its cells sum to ``cosine``.
        a_totals, b_totals: its row and column sums, each token's share.
        tokens: one row per token of both texts (text, position, token, label, kind, contribution, share).
        pairs: one row per token pair, in matrix order (positions, tokens, contribution, share).
        words: the tokens summed into the words they spell (text, word, tokens, kind, contribution, share).
        top_pairs: the word pairs (neither special) that carry the most, largest first: (a word, b word, value).
        special_sum: what the pairs with a special token add; punct_sum: the other pairs with punctuation.
        warnings: truncated texts, an sbert recipe that ignored ``layer``.
    """

    model: str
    texts: tuple[str, str]
    pooling: Pooling
    layer: int
    num_layers: int
    cosine: float
    a_tokens: tuple[str, ...]
    b_tokens: tuple[str, ...]
    matrix: np.ndarray
    a_totals: np.ndarray
    b_totals: np.ndarray
    tokens: pd.DataFrame
    pairs: pd.DataFrame
    words: pd.DataFrame
    top_pairs: tuple[tuple[str, str, float], ...]
    special_sum: float
    punct_sum: float
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class WhyGradients:
    """A cosine with no exact split, attributed to each text's tokens by integrated gradients.

    Attributes:
        model, texts, pooling, layer, num_layers, cosine: as in :class:`WhyExact`.
        tokens: one row per token of both texts (as in :class:`WhyExact`).
        words: the tokens summed into words (as in :class:`WhyExact`).
        completeness: one row per text: the attributions' sum against the score minus the baseline score,
            their gap and relative gap, and the integration points used (``steps``).
        top_words: per text, the words (not special) that add the most, largest first: (word, value).
        baseline: what the integration starts from; tolerance: the relative gap the points are doubled to reach.
        warnings: truncated texts, an sbert recipe that ignored ``layer``.
    """

    model: str
    texts: tuple[str, str]
    pooling: Pooling
    layer: int
    num_layers: int
    cosine: float
    tokens: pd.DataFrame
    words: pd.DataFrame
    completeness: pd.DataFrame
    top_words: tuple[tuple[tuple[str, float], ...], ...]
    baseline: str
    tolerance: float
    warnings: list[str] = field(default_factory=list)


# --- word: one word in several contexts ----------------------------------------------------

class Strategy(str, Enum):
    """How one token vector is made from the hidden states (index 0 = embedding output)."""

    FIRST = "first"
    LAST = "last"
    SUM_ALL = "sum-all"
    SUM_LAST4 = "sum-last4"
    CONCAT_LAST4 = "concat-last4"
    MEAN_LAST4 = "mean-last4"

    @property
    def needs_four_layers(self) -> bool:
        return self.value.endswith("last4")


@dataclass(frozen=True)
class Occurrence:
    """One place a word occurs: sentence, matched characters and the tokens covering them."""

    sentence: int  # 0-based index into the sentences
    start: int
    end: int
    surface: str  # the text as written ("Bank")
    positions: tuple[int, ...]  # token positions in the encoding
    pieces: tuple[str, ...]

    @property
    def label(self) -> str:
        """``s2:Bank@5`` (sentence 2, token 5), or ``s1:Embeddings@3-6`` for several pieces."""
        span = str(self.positions[0]) if len(self.positions) == 1 else f"{self.positions[0]}-{self.positions[-1]}"
        return f"s{self.sentence + 1}:{self.surface}@{span}"


@dataclass(frozen=True)
class WordInContext:
    """One word's vector in each of its occurrences, compared under each layer strategy.

    Attributes:
        model: the model's name.
        word: the word looked for.
        sentences: the sentences it was looked for in.
        strategies: the layer strategies run, in order.
        occurrences: the occurrences compared, in sentence order.
        cosines: one ``len(occurrences)`` square cosine matrix per strategy.
        pairs: one row per strategy and pair of occurrences (strategy, a, b, same sentence, cosine).
        summary: one row per strategy: dims, mean/min/max cosine, same- and cross-sentence means,
            the context and random-token baselines.
        seed: the seed of the random token.
        random_token: (sentence, position) of the random token, or None when there was none to draw.
        random_piece: that token's text.
        warnings: strategies left out, sentences without the word, occurrences cut.
    """

    model: str
    word: str
    sentences: tuple[str, ...]
    strategies: tuple[Strategy, ...]
    occurrences: tuple[Occurrence, ...]
    cosines: dict[Strategy, np.ndarray]
    pairs: pd.DataFrame
    summary: pd.DataFrame
    seed: int
    random_token: tuple[int, int] | None
    random_piece: str | None
    warnings: list[str] = field(default_factory=list)


# --- embed ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Embedding:
    """Token and sentence vectors of one or more texts, and their norms.

    Attributes:
        model: the model's name.
        texts: the texts as typed.
        layer: the hidden state of the token vectors and the sentence vector.
        num_layers: how many layers the model has; hidden_size: its vector size.
        pooling: how the sentence vectors were pooled.
        tokens: each text's tokens; special: whether each token is a special token.
        sentences: the (texts, dims) float32 sentence vectors; sentence_norms: their norms.
        token_vectors: each text's (tokens, hidden) vectors at ``layer``; token_norms: their norms.
        state_norms: each text's (hidden states, tokens) vector norms, index 0 the embedding output.
        mean_norms: each text's mean token norm per hidden state.
        warnings: truncated texts, an sbert recipe that ignored ``layer``.
    """

    model: str
    texts: tuple[str, ...]
    layer: int
    num_layers: int
    hidden_size: int
    pooling: Pooling
    tokens: tuple[tuple[str, ...], ...]
    special: tuple[tuple[bool, ...], ...]
    sentences: np.ndarray
    sentence_norms: np.ndarray
    token_vectors: tuple[np.ndarray, ...]
    token_norms: tuple[np.ndarray, ...]
    state_norms: tuple[np.ndarray, ...]
    mean_norms: tuple[np.ndarray, ...]
    warnings: list[str] = field(default_factory=list)


# --- static: GloVe beside the model --------------------------------------------------------

@dataclass(frozen=True)
class StaticWord:
    """A word's one static vector beside its contextual vector in each occurrence.

    Attributes:
        model: the model's name; static: the static vectors' name (GloVe 6B 50d).
        word: the word; sentences: the sentences it was looked for in.
        strategy: the layer strategy of the contextual vectors.
        occurrences: the occurrences compared.
        static_cosines, model_cosines: square cosine matrices between the occurrences.
        warnings: sentences without the word, occurrences cut.
    """

    model: str
    static: str
    word: str
    sentences: tuple[str, ...]
    strategy: Strategy
    occurrences: tuple[Occurrence, ...]
    static_cosines: np.ndarray
    model_cosines: np.ndarray
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class StaticSentences:
    """Average-GloVe sentence vectors beside the model's pooled ones.

    Attributes:
        model: the model's name; static: the static vectors' name (GloVe 6B 50d).
        texts: the texts; pooling: the model's pooling (last layer).
        static_cosines, model_cosines: square cosine matrices between the texts.
        words_used: how many of each text's words GloVe knew; unknown: the words it did not.
        warnings: truncated texts.
    """

    model: str
    static: str
    texts: tuple[str, ...]
    pooling: Pooling
    static_cosines: np.ndarray
    model_cosines: np.ndarray
    words_used: tuple[int, ...]
    unknown: tuple[tuple[str, ...], ...]
    warnings: list[str] = field(default_factory=list)


# --- neighbors -----------------------------------------------------------------------------

@dataclass(frozen=True)
class Neighbours:
    """The words nearest to one word by cosine.

    Attributes:
        word: the word asked about.
        space: ``model`` (the input-embedding matrix) or ``glove``.
        source: the model's name, or the static vectors' name for ``glove``.
        query: what the query vector was made of: the word's tokens (their mean for several),
            or the lower-cased word in GloVe.
        rows: how many rows the space has; dims: their size.
        neighbours: one row per neighbour, best first (rank, neighbour, id, cosine; ``word piece`` for model).
        k: how many were asked for.
        sample: the mean cosine of the ``k`` nearest neighbours of each of a seeded sample of whole words of the
            same space: what this word's neighbourhood is read against (empty: none).
    """

    word: str
    space: str
    source: str
    query: tuple[str, ...]
    rows: int
    dims: int
    neighbours: pd.DataFrame
    k: int
    sample: np.ndarray = field(default_factory=lambda: np.zeros(0))
