"""Compare texts by the cosine of their sentence vectors (the facts; the words are in ``replies``)."""

from __future__ import annotations

from collections.abc import Sequence

from tools.core.errors import UserError
from tools.core.timing import answer
from tools.encoding.encode import Encoded, check_layer, truncation_warnings
from tools.encoding.pooling import (
    Pooling,
    available_poolings,
    cosine_matrix,
    sbert_layer_warnings,
    sentence_vectors,
    usable_pooling,
)
from tools.models.hub import LoadedModel, as_model
from tools.similarity import replies_compare
from tools.similarity.facts import Comparison


def parse_poolings(lm: LoadedModel, pool: str) -> list[Pooling]:
    """``all`` means every pooling the model supports; otherwise exactly one."""
    if pool.lower() == "all":
        return available_poolings(lm)
    return [usable_pooling(lm, pool)]


def comparison(
    model: LoadedModel | str | None,
    texts: Sequence[str],
    pool: str = "mean",
    layer: int | None = None,
) -> Comparison:
    """Cosine similarity between sentence vectors.

    Args:
        model: a loaded model or its name.
        texts: two or more texts.
        pool: ``cls``, ``mean``, ``max``, ``sbert`` (the model's own
            sentence-transformers recipe) or ``all``.
        layer: the hidden state to pool (0 = embeddings; default: the last layer).
            ``sbert`` always uses the last layer, as sentence-transformers does.

    Returns:
        The facts; ``compare`` (the same call) answers with a Result:
        Two texts: one row per pooling. More: a similarity matrix per pooling and a heatmap.
    """
    lm = as_model(model)
    if len(texts) < 2:
        raise UserError("`compare` needs at least two texts separated by `|`, like `compare A cat. | A kitten.`")
    layer_index = check_layer(lm, layer)
    poolings = parse_poolings(lm, pool)
    cosines = {}
    encs: list[Encoded] = []
    for p in poolings:
        vectors, encs = sentence_vectors(lm, texts, p, layer_index)
        cosines[p] = cosine_matrix(vectors)
    warnings = truncation_warnings(lm, encs) + sbert_layer_warnings(lm, poolings, layer_index)
    return Comparison(lm.name, tuple(texts), tuple(poolings), cosines, layer_index, lm.num_layers,
                      pool.lower(), warnings)


#: The one-call tool: :func:`comparison` answered as a Result by the family's formatter.
compare = answer(comparison, replies_compare.compare, "compare")
