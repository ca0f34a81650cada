"""What the similarity tools find, as typed facts: numbers, frames and the choices that shaped them.

The tools (``compare``, ``why``, ``words``, ...) compute these; :mod:`~tools.similarity.replies`
turns each into the words, tables and charts a person reads. Nothing here is prose, except
``warnings``: each comes from the code that knows the rule (pooling, truncation).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tools.encoding.pooling import Pooling


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
    """

    model: str
    texts: tuple[str, ...]
    poolings: tuple[Pooling, ...]
    cosines: dict[Pooling, np.ndarray]
    layer: int
    num_layers: int
    asked_pool: str
    warnings: list[str] = field(default_factory=list)
