"""What the inspection tools find, as typed facts: tokens, predictions, sizes and the choices that shaped them.

The tools (``mask``, ``mask_why``, ``tokenize``, ``describe``) compute these;
:mod:`~tools.inspection.replies` turns each into the words, tables and charts a person reads.
Nothing here is prose, except ``warnings``: each comes from the code that knows the rule
(the masked-LM fallback, truncation).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

import pandas as pd

from tools.encoding.unknown import Unseen
from tools.models.cpu import Cpu, KernelChoice, Measured


@dataclass(frozen=True)
class Fills:
    """The top candidates for each mask of one text, a greedy joint filling, and what each mask attended to.

    Attributes:
        model: the name of the model that predicted.
        conversation_model: the name of the conversation's model.
        fell_back: whether ``model`` stands in for a conversation model without a masked-LM head.
        mask_token: the predicting model's own mask token.
        typed: every mask as the person typed it, in order.
        top: candidates per mask.
        candidates: one frame per filled mask (rank, token, probability, sentence, word piece, id).
        joint: with several masks, the greedy left-to-right filling (step, mask, token, probability,
            sentence so far, word piece); ``None`` with one mask.
        joint_sentence: the text filled by ``joint`` ("" with one mask).
        joint_probability: the product of ``joint``'s probabilities (1.0 with one mask).
        attention: the tokens each mask attends to most in the last layer, heads averaged
            (mask, rank, position, token, attention).
        warnings: the fallback model, masks past the model's limit.
    """

    model: str
    conversation_model: str
    fell_back: bool
    mask_token: str
    typed: tuple[str, ...]
    top: int
    candidates: tuple[pd.DataFrame, ...]
    joint: pd.DataFrame | None
    joint_sentence: str
    joint_probability: float
    attention: pd.DataFrame
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class FillReasons:
    """Which input tokens drove each explained mask's top fill (integrated gradients).

    Attributes:
        fills: the fill-mask facts the reasons explain.
        contributions: one row per input token per explained mask (mask, fill, position, token,
            kind, contribution).
        completeness: one row per explained mask (mask, fill, logit, baseline logit, attributions sum,
            gap, relative gap, steps).
        skipped: masks past the explained limit, not explained.
        explained_limit: the most masks one command explains.
        baseline: what the integrated gradients start from, in words of the attribution code.
    """

    fills: Fills
    contributions: pd.DataFrame
    completeness: pd.DataFrame
    skipped: int
    explained_limit: int
    baseline: str


class Padding(str, Enum):
    """How ``tokenize`` pads an encoding."""

    LONGEST = "longest"
    MAX_LENGTH = "max_length"


@dataclass(frozen=True)
class Tokens:
    """How a model's tokenizer splits one text, or a pair of texts.

    Attributes:
        model: the model's name.
        texts: the one or two texts as typed.
        frame: one row per token (position, token, id, word piece, special, attention mask, token type,
            segment, kind); ``kind`` is word, word piece, special or padding.
        decoded: the ids decoded with special tokens skipped.
        with_specials: the ids other than padding decoded with special tokens.
        full_tokens: the input's length without truncation.
        limit: where truncation cuts (``max_length`` or the model's limit).
        max_tokens: the most tokens the model reads.
        max_length: the ``max_length`` asked for, if any.
        padding: the padding asked for, if any.
        truncation: whether truncation was asked for.
        unseen: its tokens the vocabulary lacks (unknown tokens and the characters they stand for).
    """

    model: str
    texts: tuple[str, ...]
    frame: pd.DataFrame
    decoded: str
    with_specials: str
    full_tokens: int
    limit: int
    max_tokens: int
    max_length: int | None
    padding: str | None
    truncation: bool
    unseen: Unseen | None = None


@dataclass(frozen=True)
class ModelFacts:
    """A loaded model's sizes, parameter counts and origin.

    Attributes:
        name: the model's name.
        architecture: the encoder's class name.
        num_layers: encoder layers.
        num_heads: attention heads per layer.
        hidden_size: the hidden size.
        intermediate_size: the feed-forward size ("" when the config has none).
        vocabulary: tokens in the tokenizer's vocabulary.
        parameters: every weight counted, int8 layers' packed weights included.
        embedding_shape: the input-embedding matrix's (rows, columns).
        max_tokens: the most positions the model reads.
        dtype: the embedding weights' dtype, like ``float32``.
        device: where the model runs.
        sentence_recipe: the sentence-transformers pooling recipe (mode, normalize, max_seq_length), if any.
        source_kind: where it was loaded from (embedded, local, hub...).
        source_location: the folder or hub name it was loaded from.
        source_description: the source's own description ("" when none).
        groups: parameters per top-level block (block, parameters).
        paths: which backend computes each kind of pass: ``chat`` (a few texts), ``bulk`` (batches of
            ``bulk_rows`` inputs or more), ``attention`` (passes that return attention weights).
        bulk_rows: the batch size from which bulk passes take the bulk path (0: never).
        cpu: the CPU it runs on (None off the CPU).
        measured: what the paths measured on a CPU of this kind (None: not measured).
        kernel: a fast path's kernels on this CPU and why (None: not a fast path).
    """

    name: str
    architecture: str
    num_layers: int
    num_heads: int
    hidden_size: int
    intermediate_size: int | str
    vocabulary: int
    parameters: int
    embedding_shape: tuple[int, int]
    max_tokens: int
    dtype: str
    device: str
    sentence_recipe: dict[str, Any] | None
    source_kind: str
    source_location: str
    source_description: str
    groups: pd.DataFrame
    paths: dict[str, str] = field(default_factory=dict)
    bulk_rows: int = 0
    cpu: Cpu | None = None
    measured: Measured | None = None
    kernel: KernelChoice | None = None
