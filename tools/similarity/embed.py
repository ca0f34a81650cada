"""Embed texts: every hidden state's shape, each token's norm, the pooled sentence vector, downloads.

The source notebooks save embeddings with ``torch.save`` (pickle); the downloads
(``.npy``, ``.safetensors`` and CSV, built in memory by :mod:`~tools.similarity.replies`)
are not pickles.
"""

from __future__ import annotations

from collections.abc import Sequence

from tools.core.errors import UserError
from tools.core.timing import answer
from tools.encoding.encode import check_layer, truncation_warnings
from tools.encoding.pooling import sbert_layer_warnings, sentence_vectors, usable_pooling
from tools.models.hub import LoadedModel, as_model
from tools.similarity import replies
from tools.similarity.facts import Embedding


def embedding(
    model: LoadedModel | str | None,
    texts: Sequence[str],
    layer: int | None = None,
    pool: str = "mean",
) -> Embedding:
    """Token and sentence vectors of one or more texts, ready to download.

    Args:
        model: a loaded model or its name.
        texts: one or more texts.
        layer: the hidden state the token vectors and the sentence vector come from
            (0 = embedding output; default: the last layer).
        pool: ``cls``, ``mean``, ``max`` or ``sbert`` (the model's own recipe, last layer).

    Returns:
        The facts; ``embed`` (the same call) answers with a Result:
        Tables of hidden-state shapes (with mean token norms), token norms and the
        sentence vectors; a heatmap of token norms across hidden states; artifacts
        ``sentence_vectors.npy``, ``embeddings.safetensors``, ``sentence_vectors.csv``
        and ``token_vectors.csv``.
    """
    lm = as_model(model)
    if not texts:
        raise UserError("`embed` needs a text: `embed BERT provides contextual embeddings.`.")
    layer_index = check_layer(lm, layer)
    pooling = usable_pooling(lm, pool)
    sentences, encs = sentence_vectors(lm, texts, pooling, layer_index, all_layers=True)  # every norm
    sentences = sentences.float()
    warnings = truncation_warnings(lm, encs)
    warnings += sbert_layer_warnings(lm, [pooling], layer_index)
    state_norms = [enc.hidden_states.norm(dim=-1) for enc in encs]  # (L+1, tokens) each
    return Embedding(
        lm.name, tuple(texts), layer_index, lm.num_layers, lm.hidden_size, pooling,
        tokens=tuple(tuple(enc.tokens) for enc in encs),
        special=tuple(tuple(seq is None for seq in enc.sequence_ids) for enc in encs),
        sentences=sentences.numpy(),
        sentence_norms=sentences.norm(dim=1).numpy(),
        token_vectors=tuple(enc.layer(layer_index).numpy() for enc in encs),
        token_norms=tuple(enc.layer(layer_index).norm(dim=-1).numpy() for enc in encs),
        state_norms=tuple(norms.numpy() for norms in state_norms),
        mean_norms=tuple(norms.mean(dim=1).numpy() for norms in state_norms),
        warnings=warnings,
    )


#: The one-call tool: :func:`embedding` answered as a Result by the family's formatter.
embed = answer(embedding, replies.embed, "embed")
