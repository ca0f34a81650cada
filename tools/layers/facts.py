"""What the layer measures find, as typed facts: numbers per layer and the choices that shaped them.

The tools of this package (``probe``, ``contextuality``, ``cka``, ``rollout``, ``lens``) compute
these; :mod:`~tools.layers.replies` turns each into the words, tables and charts a person reads.
Nothing here is prose except ``warnings`` (each written by the code that knows the rule).

Hidden states are numbered 0 (the embedding output) to L (the last layer's output), as ``--layer``
means in every command; attention layers 1 to L (layer l turns hidden state l-1 into l).
The string choices are ``str`` enums, so a command layer can list them as its options.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Self

import numpy as np

from tools.core.errors import UserError


class Choice(str, Enum):
    """A string choice of a layer command; :meth:`parse` turns a typed value into a member or one sentence."""

    @classmethod
    def parse(cls, value: str | Self, option: str) -> Self:
        if isinstance(value, cls):
            return value
        try:
            return cls(str(value).strip().lower())
        except ValueError:
            raise UserError(f"Unknown {option} `{value}`; use one of {', '.join(c.value for c in cls)}.") from None


class ProbeTask(Choice):
    """What ``probe`` predicts from each word's vector (spaCy's automatic tags, not gold)."""

    POS = "pos"  # the universal part-of-speech tag
    DEP = "dep"  # the dependency relation to its head
    ALL = "all"  # both

    def tasks(self) -> tuple[ProbeTask, ...]:
        return (ProbeTask.POS, ProbeTask.DEP) if self is ProbeTask.ALL else (self,)


class RolloutMethod(Choice):
    """How attention is followed down the layers (Abnar & Zuidema 2020)."""

    ROLLOUT = "rollout"  # matrix products of the residual-adjusted attention
    FLOW = "flow"  # maximum flow through the layered graph of the same matrices


class CkaEstimator(Choice):
    """Which HSIC estimator CKA uses."""

    AUTO = "auto"  # debiased when examples are fewer than ten times the hidden size
    BIASED = "biased"  # Gretton et al. (2005), as in Kornblith et al. (2019)
    DEBIASED = "debiased"  # the unbiased HSIC of Song et al. (2012)


class CkaUnit(str, Enum):
    """What one example of CKA is."""

    TOKENS = "tokens"  # every word piece of every sentence (both models read the same pieces)
    SENTENCES = "sentences"  # each sentence's mean-pooled vector (the tokenizers differ)


# --- probe -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class TaskScores:
    """One probing task across the hidden states 0..L.

    Attributes:
        task: POS or DEP.
        labels: the label set seen in training, most frequent first.
        accuracy: held-out accuracy of the linear probe per hidden state, (L+1,).
        control: held-out accuracy of the same probe on the control task, (L+1,).
        majority: the held-out accuracy of always answering the most frequent training label.
        gains: Δ_l per hidden state: max(0, accuracy_l - max(accuracy_0..l-1)); Δ_0 = 0.
        expected_layer: Σ l·Δ_l / Σ Δ_l (None when no layer improves on the embeddings).
        peak: the hidden state with the highest accuracy (the lowest one on a tie).
        train_words: words the probes were trained on; ``test_words`` held out.
        control_labels: word type -> its control label (the types of the training words).
    """

    task: ProbeTask
    labels: tuple[str, ...]
    accuracy: np.ndarray
    control: np.ndarray
    majority: float
    gains: np.ndarray
    expected_layer: float | None
    peak: int
    train_words: int
    test_words: int
    control_labels: dict[str, str]

    @property
    def selectivity(self) -> np.ndarray:
        """Accuracy minus control accuracy (Hewitt & Liang 2019)."""
        return self.accuracy - self.control


@dataclass(frozen=True)
class Probing:
    """Linear probes for spaCy's tags on every hidden state, with the control task.

    Attributes:
        model: the model's name; ``num_layers`` its layers.
        source: where the sentences came from (``stsb-train``, ``texts`` or ``corpus NAME``).
        sentences: sentences used; ``test_sentences`` the indices (into them) held out.
        words: words aligned to word pieces (spaCy tokens with at least one piece).
        scores: one :class:`TaskScores` per task asked.
        parser: the spaCy pipeline.
        seed: the seed of the sentence sample and the split; ``control_seed`` of the control labels.
        test_share: the share of sentences held out.
        regularization: the inverse regularisation strength C of the logistic regressions.
        warnings: truncation, sentences without words.
    """

    model: str
    num_layers: int
    source: str
    sentences: tuple[str, ...]
    test_sentences: tuple[int, ...]
    words: int
    scores: tuple[TaskScores, ...]
    parser: str
    seed: int
    control_seed: int
    test_share: float
    regularization: float
    warnings: list[str] = field(default_factory=list)


# --- contextuality -----------------------------------------------------------------------------

@dataclass(frozen=True)
class Contextuality:
    """Ethayarajh's (2019) measures of how contextual each hidden state is.

    Attributes:
        model: the model's name; ``num_layers`` its layers.
        source: where the sentences came from; ``sentences`` how many were read.
        words: the words measured (lower case); ``counts`` their occurrences (one per sentence).
        chosen: whether the words were picked (the most frequent ones) rather than given.
        self_similarity: (W, L+1) mean cosine between a word's occurrences in different sentences.
        mev: (W, L+1) maximum explainable variance of each word's occurrence matrix.
        intra_similarity: (L+1,) mean cosine between a word and its sentence's mean vector.
        baseline: (L+1,) mean cosine between random occurrences of words in different sentences.
        mev_baseline: (L+1,) the mean MEV of random occurrence matrices of the same sizes as the words'.
        pairs: random occurrence pairs behind ``baseline``; ``occurrences`` the pool they came from.
        seed: the seed of the sentence sample, the random pairs and the random matrices.
        warnings: words not found, truncation.
    """

    model: str
    num_layers: int
    source: str
    sentences: int
    words: tuple[str, ...]
    counts: tuple[int, ...]
    chosen: bool
    self_similarity: np.ndarray
    mev: np.ndarray
    intra_similarity: np.ndarray
    baseline: np.ndarray
    mev_baseline: np.ndarray
    pairs: int
    occurrences: int
    seed: int
    warnings: list[str] = field(default_factory=list)


# --- cka ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class LayerSimilarity:
    """Linear CKA between the hidden states of one model, or of two.

    Attributes:
        model: the model's name; ``other`` the second model's (None: the model against itself).
        matrix: (L_a+1, L_b+1) CKA, rows this model's hidden states, columns the other's.
        estimator: BIASED or DEBIASED (what AUTO resolved to); ``asked`` what was asked.
        unit: what one example is; ``examples`` how many.
        hidden_sizes: the widths of the two models.
        source: where the sentences came from; ``sentences`` how many; ``seed`` the sample's seed.
        warnings: truncation, sentences left out.
    """

    model: str
    other: str | None
    matrix: np.ndarray
    estimator: CkaEstimator
    asked: CkaEstimator
    unit: CkaUnit
    examples: int
    hidden_sizes: tuple[int, int]
    source: str
    sentences: int
    seed: int
    warnings: list[str] = field(default_factory=list)


# --- rollout -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class AttentionRollout:
    """Attention followed from the outputs down to the inputs, beside the raw attention.

    Attributes:
        model: the model's name; ``num_layers`` its layers.
        tokens: the word pieces, special tokens included; ``labels`` unique axis labels.
        method: ROLLOUT or FLOW.
        relevance: (T, T) output token (rows, top layer) -> input token (columns, layer 0).
        raw: (T, T) the last layer's attention, averaged over heads.
        attribution: (T,) |gradient x input| of the [CLS] vector's norm per input token.
        special: per token, whether it is a special token ([CLS], [SEP]).
        rho: Spearman correlation between the [CLS] row of ``relevance`` and ``attribution`` over the
            text's own tokens (special tokens left out).
        warnings: truncation.
        row: the output token whose row the reply reads first (0: [CLS]; ``rollout --token``).
    """

    model: str
    num_layers: int
    tokens: tuple[str, ...]
    labels: tuple[str, ...]
    method: RolloutMethod
    relevance: np.ndarray
    raw: np.ndarray
    attribution: np.ndarray
    special: tuple[bool, ...]
    rho: float
    warnings: list[str] = field(default_factory=list)
    row: int = 0


# --- lens --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class LogitLens:
    """The masked-LM head read at every hidden state of the mask's position.

    Attributes:
        model: the model's name; ``num_layers`` its layers.
        text: the text as typed; ``tokens`` its word pieces; ``position`` the mask's.
        top: candidates per layer.
        ids: (L+1, top) token ids ranked by probability (special tokens left out).
        words: (L+1, top) their strings.
        probabilities: (L+1, top) their probabilities (softmax over the whole vocabulary).
        answer: the last layer's top token; ``answer_id`` its id.
        answer_rank: (L+1,) its rank per hidden state (1 = top; special tokens left out).
        answer_probability: (L+1,) its probability per hidden state.
        warnings: truncation.
    """

    model: str
    num_layers: int
    text: str
    tokens: tuple[str, ...]
    position: int
    top: int
    ids: np.ndarray
    words: tuple[tuple[str, ...], ...]
    probabilities: np.ndarray
    answer: str
    answer_id: int
    answer_rank: np.ndarray
    answer_probability: np.ndarray
    warnings: list[str] = field(default_factory=list)
