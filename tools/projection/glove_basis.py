"""``project ... --basis glove``: where the texts' words sit in GloVe's own space.

GloVe vectors (50 wide) cannot share a basis with a transformer's vectors (384 or 768 wide),
so this map holds GloVe only: the basis is fitted on GloVe's most frequent words and each
word of the texts is placed by its GloVe vector. GloVe is static, so a word lands on the
same point in every sentence; that is the contrast with ``--basis vocab``, where the model
moves each token away from its dictionary row.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from tools import charts
from tools.core.errors import UserError
from tools.core.results import Result, Table
from tools.core.text import code, text_label
from tools.projection.fit import (
    METHOD_NAMES,
    Method,
    axis_titles,
    coordinate_columns,
    explained_sentence,
    fit,
    map_result,
)
from tools.similarity.static import GLOVE, glove, oov_message, words_of

#: The basis is fitted on GloVe's most frequent words (its rows are in frequency order).
BASIS_WORDS = 20_000
#: Grey words drawn behind the texts' words, for orientation.
BACKGROUND_WORDS = 1_500
SEED = 42


def on_glove_basis(texts: Sequence[str], method: Method, dims: int, settings: dict,
                   report: Callable[[float, str], None], chart_limit: int) -> Result:
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
    chart = charts.projection_views(
        shown.assign(listing=shown["word"] + " · " + shown["text"]), dims=dims,
        axis_titles=axis_titles(fitted, dims), color="text", label="word" if len(shown) <= 400 else None,
        tooltip=["word", "text", "position"], background=background,
        title=f"The texts' words in {GLOVE} ({METHOD_NAMES[method]} fitted on its {BASIS_WORDS:,} most frequent words)",
    )
    same_note = (f" {', '.join(code(w, 30) for w in shared[:5])} appear{'s' if len(shared) == 1 else ''} in "
                 "more than one text and land on one point: GloVe has one vector per word, whatever the "
                 "sentence." if shared else
                 " GloVe has one vector per word, whatever the sentence: a word repeated in another text "
                 "would land on the same point.")
    text = (f"{len(table)} words of {len(texts)} text{'s' if len(texts) != 1 else ''} placed in {GLOVE} "
            f"(50 wide), in a {METHOD_NAMES[method]} map fitted on its {BASIS_WORDS:,} most frequent words; grey dots "
            f"are {len(background):,} of those words for orientation.{same_note} No transformer is involved: "
            "use `--basis vocab` to see the model move tokens away from their dictionary rows."
            f"{explained_sentence(fitted)}")
    warnings = []
    if unknown:
        warnings.append(oov_message(sorted(set(unknown))) + " Those words are left out of the map.")
    if len(shown) < len(table):
        warnings.append(f"The chart shows the first {len(shown):,} of {len(table):,} words; the table has them all.")
    return map_result("project", text, Table("words in GloVe", table), fitted, chart, warnings, GLOVE, settings)
