"""Sentence vectors from token vectors: cls, mean, max, and the model's own sentence-transformers recipe."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from enum import Enum

import numpy as np
import torch

from tools.core.errors import UserError
from tools.encoding.encode import Encoded, encode, pooled
from tools.encoding.forward import Pool, pool_rows
from tools.models.hub import LoadedModel
from tools.models.threads import threads_for


class Pooling(str, Enum):
    """How a sentence vector is made from token vectors (padding is never included)."""

    CLS = "cls"
    MEAN = "mean"
    MAX = "max"
    SBERT = "sbert"

    @classmethod
    def parse(cls, value: str) -> Pooling:
        try:
            return cls(value.lower())
        except ValueError:
            raise UserError(
                f"Unknown pooling `{value}`; use one of {', '.join(p.value for p in cls)}."
            ) from None


def no_recipe(lm: LoadedModel) -> str:
    """The one sentence for a model without a sentence-transformers recipe (without its advice)."""
    return f"{lm.name} has no sentence-transformers pooling recipe"


def usable_pooling(lm: LoadedModel, name: str) -> Pooling:
    """``name`` as a :class:`Pooling` this model has; ``sbert`` on a model without a recipe is refused."""
    pooling = Pooling.parse(name)
    if pooling not in available_poolings(lm):
        raise UserError(f"{no_recipe(lm)}; use --pool mean, cls or max.")
    return pooling


def sbert_layer_warnings(lm: LoadedModel, poolings: Sequence[Pooling], layer_index: int) -> list[str]:
    """The one sentence when ``sbert`` is asked for at a layer other than the last, which it never reads."""
    if Pooling.SBERT in poolings and layer_index != lm.num_layers:
        return [f"sbert pooling reads the last layer, as sentence-transformers does, not layer {layer_index}; "
                "the other poolings and the token vectors use layer " f"{layer_index}."]
    return []


def available_poolings(lm: LoadedModel) -> list[Pooling]:
    """Every pooling this model supports (``sbert`` only with a sentence-transformers recipe)."""
    pools = [Pooling.CLS, Pooling.MEAN, Pooling.MAX]
    if lm.sentence_config() is not None:
        pools.append(Pooling.SBERT)
    return pools


def pool(lm: LoadedModel, enc: Encoded, pooling: Pooling, layer: int | None = None) -> torch.Tensor:
    """One sentence vector from one encoded input.

    ``sbert`` follows the model's own sentence-transformers recipe (pooling mode and
    normalisation) on the last layer, exactly as ``SentenceTransformer.encode`` does.
    """
    return pooled_encodings(lm, [enc], pooling, layer)[0]


def _pool(lm: LoadedModel, pooling: Pooling) -> tuple[Pool, int | None]:
    """How ``pooling`` pools on this model, and the length it reads at most (``sbert``: the recipe's own)."""
    if pooling is not Pooling.SBERT:
        return Pool(pooling.value), None
    recipe = lm.sentence_config()
    if recipe is None:
        raise UserError(f"{no_recipe(lm)}; use --pool mean, cls or max.")
    return Pool(recipe["mode"], bool(recipe["normalize"])), recipe["max_seq_length"]


def bulk_vectors(lm: LoadedModel, texts: Sequence[str], pooling: Pooling,
                 progress: Callable[[int, int], None] | None = None) -> np.ndarray:
    """The vectors :func:`sentence_vectors` gives (last layer), (N, hidden) float32, for bulk work that keeps
    nothing else (a corpus's rows): pooled batch by batch where the passes ran, no per-text states or cache;
    ``progress`` is told how many distinct texts are done, of how many, as they are."""
    pool, cap = _pool(lm, pooling)
    return pooled(lm, texts, pool, cap, progress)


def sentence_vectors(
    lm: LoadedModel, texts: Sequence[str], pooling: Pooling, layer: int | None = None, all_layers: bool = False
) -> tuple[torch.Tensor, list[Encoded]]:
    """Pooled vectors (N, hidden) for ``texts`` and the encodings they came from.

    ``sbert`` pooling reads at most the model's sentence length (as
    sentence-transformers does), so texts longer than that are encoded again at
    that length; other poolings use the model's full limit. Vectors pooled from the
    last layer come from encodings that keep only that layer (a seventh of the copies
    and of the cache for a 6-layer model) unless ``all_layers`` asks for every hidden state.
    """
    last = not all_layers and (pooling is Pooling.SBERT or layer is None or layer == lm.num_layers)
    encs = encode(lm, texts, last_only=last)
    use, use_layer = encs, layer
    if pooling is Pooling.SBERT:
        recipe = lm.sentence_config()
        cap = recipe["max_seq_length"] if recipe else lm.max_tokens
        long = [e.text for e in encs if len(e.tokens) > cap]
        if long:
            short = dict(zip(long, encode(lm, long, max_length=cap, last_only=True)))
            use = [short.get(e.text, e) if len(e.tokens) > cap else e for e in encs]
        use_layer = None
    return pooled_encodings(lm, use, pooling, use_layer), encs


def pooled_encodings(lm: LoadedModel, encs: Sequence[Encoded], pooling: Pooling,
                     layer: int | None = None) -> torch.Tensor:
    """:func:`pool` of each encoding, (N, hidden): the encodings of one length are stacked and pooled together (a
    few dozen tensor operations for thousands of short texts, where one call each spent 0.27 s on STS-B test's
    2,758 distinct sentences on a 2-core AMD EPYC 25/1), the same numbers as one at a time."""
    how = _pool(lm, pooling)[0]
    by_length: dict[int, list[int]] = {}
    for i, enc in enumerate(encs):
        by_length.setdefault(len(enc.input_ids), []).append(i)
    with threads_for(0):  # many small tensor operations: one thread (two wait on each other on a busy machine)
        first = encs[0].layer(layer) if encs else torch.empty(0, lm.hidden_size)
        out = torch.empty(len(encs), first.shape[-1], dtype=first.dtype)
        for rows in by_length.values():
            states = torch.stack([encs[i].layer(layer) for i in rows])
            out[rows] = pool_rows(states, torch.ones(states.shape[:2]), how)
    return out


def cosine_matrix(vectors: torch.Tensor) -> np.ndarray:
    """Pairwise cosine similarities of the rows of ``vectors``."""
    unit = torch.nn.functional.normalize(vectors.double(), dim=1)
    return (unit @ unit.T).numpy()
