"""Project token, sentence and vocabulary vectors to 2 or 3 dimensions (PCA, t-SNE, UMAP).

- :mod:`~tools.projection.fit`: the method/level/basis choices, :func:`fit`, and what the maps share;
- :mod:`~tools.projection.maps`: ``project`` on the texts' own vectors (tokens or sentences);
- :mod:`~tools.projection.vocab_basis`: ``--basis vocab``, the model's input-embedding matrix;
- :mod:`~tools.projection.glove_basis`: ``--basis glove``, the texts' words in GloVe's space;
- :mod:`~tools.projection.vocab`: ``vocab``, the input-embedding matrix itself, labelled, with a Projector export;
- :mod:`~tools.projection.facts`: what the maps and ``vocab`` find, as typed facts;
- :mod:`~tools.projection.replies`: the family's one formatter: the words, tables, charts and downloads.

``vocab`` projects the input-embedding matrix itself with the same :func:`fit`.

May import: ``tools.core``, ``tools.models``, ``tools.encoding``, ``tools.charts``, ``tools.similarity.static``
(GloVe); never ``assistant`` or ``gradio``. scikit-learn and umap are imported when a fit needs them.
"""

from tools.projection.fit import (
    Basis,
    Fitted,
    Level,
    Method,
    check_dims,
    fit,
    min_points,
    parse_choice,
    tsne_perplexity,
    umap_module,
)
from tools.projection.maps import project
from tools.projection.vocab_basis import embedding_matrix, vocab_size, vocabulary

__all__ = ["Method", "Level", "Basis", "Fitted", "fit", "project", "tsne_perplexity", "min_points",
           "check_dims", "parse_choice", "vocabulary", "embedding_matrix", "vocab_size", "umap_module"]
