"""The model's input-embedding matrix, projected and labelled, with a TensorBoard Projector export.

This computes the facts (:class:`~tools.projection.facts.Vocabulary`); the words, the chart and the
Projector zip are written by :func:`tools.projection.replies.vocab`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

import tools.projection.replies as replies  # `from tools.projection import …` would import the package: a cycle
from tools import charts
from tools.core import cancel
from tools.core.errors import UserError
from tools.core.timing import answer
from tools.models.hub import LoadedModel, as_model
from tools.projection.facts import Color, Vocabulary, summary
from tools.projection.fit import (
    MAX_TSNE_POINTS,
    Method,
    chart_sample,
    check_dims,
    coordinate_columns,
    fit,
    min_points,
    parse_choice,
    umap_module,
)
from tools.projection.vocab_basis import embedding_matrix, vocab_size, vocabulary

#: The first rows of the matrix in id order; for BERT's vocabulary 994 of the first 4,000 are
#: [unused…] placeholders and about 1,000 are single characters.
DEFAULT_N = 4000
MIN_N = 10
VOWELS = "aeiou"
#: Columns of metadata.tsv after the token, in this order.
LABELS = ("length", "vowels", "number", "subword", "special")


def word_markers(lm: LoadedModel) -> tuple[str, str]:
    """(continuation prefix, word-start marker) of the tokenizer: ``("##", "")`` for WordPiece,
    ``("", "Ġ")`` for byte-level BPE, ``("", "▁")`` for SentencePiece."""
    model = getattr(getattr(lm.tokenizer, "backend_tokenizer", None), "model", None)
    prefix = getattr(model, "continuing_subword_prefix", None)
    if prefix:
        return str(prefix), ""
    vocab = lm.tokenizer.get_vocab()
    for marker in ("Ġ", "▁"):
        if sum(1 for t in vocab if t.startswith(marker)) > len(vocab) // 10:
            return "", marker
    return "", ""


def token_labels(tokens: Sequence[str], specials: set[str], prefix: str = "##", start: str = "") -> pd.DataFrame:
    """The source notebook's labels (length, vowels, is a number) plus is a word piece and is special.

    Length, vowels and number are read from the token's surface: without the word-piece
    prefix (``##ing`` has length 3) or word-start marker.
    """
    rows = []
    for token in tokens:
        cancel.check()
        special = token in specials
        if prefix:
            subword = token.startswith(prefix) and token != prefix and not special
            surface = token[len(prefix):] if subword else token
        else:
            subword = bool(start) and not token.startswith(start) and not special
            surface = token[len(start):] if start and token.startswith(start) else token
        rows.append({
            "token": token,
            "length": len(surface),
            "vowels": sum(ch in VOWELS for ch in surface.lower()),
            "number": surface.isdigit(),
            "subword": subword,
            "special": special,
        })
    return pd.DataFrame(rows, columns=["token", *LABELS])




def vocab_map(
    model: LoadedModel | str | None,
    n: int = DEFAULT_N,
    method: str = "pca",
    color: str = "length",
    dims: int = 2,
    progress: Callable[[float, str], None] | None = None,
    chart_rows: int = charts.MAX_ROWS,
) -> Vocabulary:
    """Project the first ``n`` rows of the input-embedding matrix, labelled, with a Projector export.

    Args:
        model: a loaded model or its name.
        n: how many rows of the matrix, in id order, to consider; ``[unused…]``
            placeholder rows among them are skipped.
        method: ``pca``, ``tsne`` (at most 3,000 points) or ``umap`` (optional extra).
        color: ``length``, ``vowels``, ``number``, ``subword`` or ``special``.
        dims: 2, or 3 for three linked pairwise views.
        progress: called with (fraction, message) as the work advances.
        chart_rows: the most points the chart shows (a seeded sample past it; the table keeps all).

    Returns:
        The facts; ``vocab`` (the same call) answers with a Result:
        A table of coordinates and labels, PCA's explained variance, a chart of at
        most 5,000 points, and downloads: the coordinates (CSV), the chart spec
        (JSON) and ``vocab-projector.zip``.
    """
    lm = as_model(model)
    report = progress or (lambda fraction, message: None)
    chosen = parse_choice(Method, method, "method")
    paint = parse_choice(Color, color, "color")
    check_dims(dims)
    size = vocab_size(lm)
    if not MIN_N <= n <= size:
        raise UserError(f"--n {n} is outside {lm.name}'s vocabulary: use --n from {MIN_N} to {size:,} "
                        f"(the rows of its input-embedding matrix).")
    if chosen is Method.UMAP:
        umap_module()
    report(0.05, "reading the input-embedding matrix")
    ids, tokens = vocabulary(lm, n)
    if len(ids) < min_points(dims):
        raise UserError(f"--n {n} leaves {len(ids)} token{'s' if len(ids) != 1 else ''} once the [unused…] rows "
                        f"are skipped and a {dims}-D projection needs {min_points(dims)}; use a larger --n.")
    if chosen is Method.TSNE and len(ids) > MAX_TSNE_POINTS:
        most = int(vocabulary(lm)[0][MAX_TSNE_POINTS - 1]) + 1
        raise UserError(f"t-SNE of {len(ids):,} vocabulary rows takes minutes on this machine (the limit is "
                        f"{MAX_TSNE_POINTS:,} points); use --n {most} or fewer, or --method pca.")
    prefix, start = word_markers(lm)
    labels = token_labels(tokens, set(lm.tokenizer.all_special_tokens), prefix, start)
    vectors = embedding_matrix(lm)[ids]
    report(0.15, f"fitting {chosen.value} on {len(ids):,} rows")
    fitted = fit(vectors, chosen, dims)
    frame = pd.concat([pd.DataFrame({"id": ids}), labels], axis=1)
    frame[coordinate_columns(dims)] = np.round(fitted.coords, 6)
    report(0.7, "drawing the chart and writing the TensorBoard Projector export")
    shown, sampled = chart_sample(frame, max(1, min(chart_rows, charts.MAX_ROWS)), keep=frame["special"])
    return Vocabulary(lm.name, lm.hidden_size, n, n - len(ids), paint, summary(fitted, dims), frame, shown, sampled,
                      vectors, labels)


#: The one-call tool: :func:`vocab_map` answered as a Result by the family's formatter.
vocab = answer(vocab_map, replies.vocab, "vocab")
