"""``project ... --basis glove``: where the texts' words sit in GloVe's own space.

GloVe vectors (50 wide) cannot share a basis with a transformer's vectors (384 or 768 wide),
so this map holds GloVe only: the basis is fitted on GloVe's most frequent words and each
word of the texts is placed by its GloVe vector. GloVe is static, so a word lands on the
same point in every sentence; that is the contrast with ``--basis vocab``, where the model
moves each token away from its dictionary row. This computes the facts; the words are in
:mod:`~tools.projection.replies`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from tools.core.errors import UserError
from tools.core.text import code, text_label
from tools.projection.facts import GloveMap, summary
from tools.projection.fit import Method, Progress, coordinate_columns, fit
from tools.similarity.static import GLOVE, glove, oov_message, words_of

#: The basis is fitted on GloVe's most frequent words (its rows are in frequency order).
BASIS_WORDS = 20_000
#: Grey words drawn behind the texts' words, for orientation.
BACKGROUND_WORDS = 1_500
SEED = 42


def on_glove_basis(texts: Sequence[str], method: Method, dims: int, report: Progress, chart_limit: int) -> GloveMap:
    """The words of ``texts`` placed in a ``method`` map fitted on GloVe's most frequent words."""
    if method is Method.TSNE:
        raise UserError("t-SNE cannot place new points in a map fitted on the vocabulary; "
                        "use --basis glove with --method pca or umap.")
    report(0.05, f"reading {GLOVE}")
    g = glove()
    rows, vectors, unknown = [], [], []
    for i, text in enumerate(texts):
        for position, word in enumerate(words_of(text)):
            where = g.words.get_indexer([word])[0]
            if where < 0:
                unknown.append(word)
                continue
            rows.append({"text": text_label(i, text), "position": position, "word": word})
            vectors.append(np.asarray(g.vectors[where], dtype=np.float32))
    if not rows:
        raise UserError(oov_message(sorted(set(unknown))) if unknown else
                        f"None of the texts has a word {GLOVE} can place; give words, like "
                        f"{code('project The river bank. | The bank loan. --basis glove', 80)}.")
    report(0.2, f"fitting {method.value} on {BASIS_WORDS:,} GloVe words")
    basis = np.asarray(g.vectors[:BASIS_WORDS], dtype=np.float32)
    fitted = fit(basis, method, dims)
    assert fitted.place is not None, "t-SNE, the one method that cannot place new points, is refused above"
    cols = coordinate_columns(dims)
    table = pd.DataFrame(rows)
    table[cols] = np.round(fitted.place(np.asarray(vectors)), 6)
    same = table.groupby("word")["text"].nunique()
    shared = sorted(same[same > 1].index)
    report(0.8, "drawing the chart")
    shown = table.head(max(1, chart_limit // 2))
    room = max(0, chart_limit - len(shown))
    pick = np.random.default_rng(SEED).choice(BASIS_WORDS, min(BACKGROUND_WORDS, room), replace=False)
    background = pd.DataFrame(np.round(fitted.coords[pick], 6), columns=cols)
    background["token"] = g.words[pick].astype(str)
    warnings = []
    if unknown:  # GloVe's own sentence for the words it does not know
        warnings.append(oov_message(sorted(set(unknown))) + " Those words are left out of the map.")
    return GloveMap(GLOVE, tuple(texts), summary(fitted, dims), BASIS_WORDS, table, shown, background,
                    tuple(shared), warnings)
