"""``project``: every token of every text, one point per text, or the texts in another basis.

The texts basis (tokens and sentences) lives here; ``--basis vocab`` and ``--basis glove``
are in :mod:`tools.projection.vocab_basis` and :mod:`tools.projection.glove_basis`. These compute
:mod:`~tools.projection.facts`; the words are in :mod:`~tools.projection.replies`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import torch

import tools.projection.replies as replies  # `from tools.projection import …` would import the package: a cycle
from tools import charts
from tools.core.errors import UserError
from tools.core.text import text_label
from tools.core.timing import answer
from tools.encoding.encode import check_layer, encode, truncation_warnings
from tools.encoding.pooling import Pooling, sbert_layer_warnings, sentence_vectors, usable_pooling
from tools.models.hub import LoadedModel, as_model
from tools.projection.facts import GloveMap, SentenceMap, TokenMap, VocabBasisMap, summary
from tools.projection.fit import (
    Basis,
    Level,
    Method,
    Progress,
    chart_sample,
    check_dims,
    coordinate_columns,
    fit,
    min_points,
    parse_choice,
    umap_module,
)
from tools.projection.glove_basis import on_glove_basis
from tools.projection.vocab_basis import on_vocab_basis


def projection_map(
    model: LoadedModel | str | None,
    texts: Sequence[str],
    level: str = "tokens",
    method: str = "pca",
    dims: int = 2,
    layer: int | None = None,
    pool: str = "mean",
    basis: str = "texts",
    progress: Progress | None = None,
    chart_rows: int = charts.MAX_ROWS,
) -> TokenMap | SentenceMap | VocabBasisMap | GloveMap:
    """A labelled 2-D (or three pairwise 2-D views for 3-D) map of token or sentence vectors.

    Args:
        model: a loaded model or its name.
        texts: one or more texts (at least ``dims + 1`` at sentence level).
        level: ``tokens`` (every token of every text, plus each text's sentence
            vector as a distinct mark) or ``sentences`` (one point per text).
        method: ``pca`` (with explained variance), ``tsne`` or ``umap`` (optional extra).
        dims: 2 or 3.
        layer: the hidden state to use (0 = embeddings; default: the last layer).
        pool: how a sentence vector is made (``cls``, ``mean``, ``max``, ``sbert``).
        basis: ``texts`` (fit on these vectors) or ``vocab`` (fit on the model's
            input-embedding matrix and show each token's static and contextual position).
        progress: called with (fraction, message) as the work advances.
        chart_rows: the most points the chart shows (a seeded sample past it; the table keeps all).

    Returns:
        The facts; ``project`` (the same call) answers with a Result:
        A coordinates table, PCA's explained variance, an interactive chart, and
        the coordinates (CSV) and chart spec (JSON) as downloads.
    """
    lm = as_model(model)
    report = progress or (lambda fraction, message: None)
    chosen_level = parse_choice(Level, level, "level")
    chosen_method = parse_choice(Method, method, "method")
    chosen_basis = parse_choice(Basis, basis, "basis")
    check_dims(dims)
    layer_index = check_layer(lm, layer)
    pooling = usable_pooling(lm, pool)
    if not texts:
        raise UserError("`project` needs at least one text, like `project The cat sat. | A dog ran.`")
    if chosen_method is Method.UMAP:
        umap_module()  # refuse before any model work
    chart_limit = max(1, min(chart_rows, charts.MAX_ROWS))
    if chosen_basis is Basis.GLOVE:
        if chosen_level is Level.SENTENCES:
            raise UserError("--basis glove places each word of the texts in GloVe's space; use it with --level tokens.")
        return on_glove_basis(texts, chosen_method, dims, report, chart_limit)
    if chosen_basis is Basis.VOCAB:
        if chosen_level is Level.SENTENCES:
            raise UserError("--basis vocab places tokens next to their vocabulary rows; use it with --level tokens.")
        return on_vocab_basis(lm, texts, chosen_method, dims, layer_index, pooling, report, chart_limit)
    sbert = sbert_layer_warnings(lm, [pooling], layer_index)
    if chosen_level is Level.SENTENCES:
        return _sentences(lm, texts, chosen_method, dims, layer_index, pooling, report, sbert)
    return _tokens(lm, texts, chosen_method, dims, layer_index, pooling, report, chart_limit, sbert)


#: The one-call tool: :func:`projection_map` answered as a Result by the family's formatter.
project = answer(projection_map, replies.project, "project")


def _tokens(lm, texts, method, dims, layer, pooling, report, chart_limit, sbert) -> TokenMap:
    """Every token at ``layer`` and each text's sentence vector, in one map."""
    report(0.1, "encoding the texts")
    encs = encode(lm, texts)
    sentences, _ = sentence_vectors(lm, texts, pooling, layer)
    rows, vectors = [], []
    labels = [text_label(i, t) for i, t in enumerate(texts)]
    for i, enc in enumerate(encs):
        states = enc.layer(layer)
        for pos, token in enumerate(enc.tokens):
            special = enc.sequence_ids[pos] is None
            rows.append({"text": labels[i], "position": pos, "token": token,
                         "kind": "special token" if special else "token"})
            vectors.append(states[pos])
    n_tokens = len(rows)
    if n_tokens < min_points(dims):
        raise UserError(
            f"A {dims}-D projection needs at least {min_points(dims)} points and these texts have "
            f"{n_tokens} tokens; add text or use --dims 2."
        )
    token_matrix = torch.stack(vectors).numpy()
    sentence_matrix = sentences.float().numpy()
    report(0.4, f"fitting {method.value}")
    kind_sentence = f"sentence vector ({pooling.value})"
    together = method is Method.TSNE  # t-SNE cannot place new points: fit tokens and sentence vectors together
    if together:
        fitted = fit(np.vstack([token_matrix, sentence_matrix]), method, dims)
        token_xy, sentence_xy = fitted.coords[:n_tokens], fitted.coords[n_tokens:]
    else:
        fitted = fit(token_matrix, method, dims)
        assert fitted.place is not None, "only t-SNE cannot place new points, and it is fitted together above"
        token_xy, sentence_xy = fitted.coords, fitted.place(sentence_matrix)
    cols = coordinate_columns(dims)
    frame = pd.DataFrame(rows)
    sent = pd.DataFrame({"text": labels, "position": pd.array([None] * len(texts), dtype="Int64"),
                         "token": [f"⟨{pooling.value} of text {i + 1}⟩" for i in range(len(texts))],
                         "kind": kind_sentence})
    frame = pd.concat([frame.astype({"position": "Int64"}), sent], ignore_index=True)
    frame[cols] = np.round(np.vstack([token_xy, sentence_xy]), 6)
    report(0.8, "drawing the chart")
    shown, sampled = chart_sample(frame, chart_limit, keep=frame["kind"] != "token")
    return TokenMap(lm.name, tuple(texts), layer, lm.num_layers, pooling, summary(fitted, dims), together, n_tokens,
                    ("token", "special token", kind_sentence), frame, shown, sampled, truncation_warnings(lm, encs),
                    sbert)


def _sentences(lm, texts, method, dims, asked_layer, pooling, report, sbert) -> SentenceMap:
    """One point per text; ``sbert`` pooling reads the last layer whatever was asked (``sbert`` says so)."""
    layer = lm.num_layers if pooling is Pooling.SBERT else asked_layer
    if len(texts) < min_points(dims):
        raise UserError(
            f"Sentence level puts one point per text, and a {dims}-D projection needs at least "
            f"{min_points(dims)} points; give {min_points(dims)} or more texts separated by `|`, or use --level tokens."
        )
    report(0.1, "encoding the texts")
    vectors, encs = sentence_vectors(lm, texts, pooling, layer)
    report(0.5, f"fitting {method.value}")
    fitted = fit(vectors.float().numpy(), method, dims)
    cols = coordinate_columns(dims)
    labels = [text_label(i, t) for i, t in enumerate(texts)]
    frame = pd.DataFrame({"text": labels, "token": [text_label(i, t, 24) for i, t in enumerate(texts)],
                          "position": pd.array([None] * len(texts), dtype="Int64"), "kind": "sentence"})
    frame[cols] = np.round(fitted.coords, 6)
    return SentenceMap(lm.name, tuple(texts), layer, asked_layer, lm.num_layers, pooling, summary(fitted, dims),
                       frame, [*truncation_warnings(lm, encs), *sbert])
