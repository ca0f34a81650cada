"""The input-embedding basis: ``project ... --basis vocab`` (its facts) and the vocabulary helpers ``vocab`` uses."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from tools.core.errors import UserError
from tools.core.text import text_label
from tools.encoding.encode import encode, truncation_warnings
from tools.encoding.pooling import Pooling
from tools.models.hub import LoadedModel
from tools.projection.facts import VocabBasisMap, summary
from tools.projection.fit import (
    BACKGROUND_POINTS,
    SEED,
    UMAP_FIT_ROWS,
    Method,
    Progress,
    chart_sample,
    coordinate_columns,
    fit,
)


def embedding_matrix(lm: LoadedModel) -> np.ndarray:
    """The model's input-embedding (static) matrix as float32, one row per vocabulary id."""
    weight = lm.encoder.get_input_embeddings().weight
    return weight.detach().float().cpu().numpy()


def vocabulary(lm: LoadedModel, n: int | None = None) -> tuple[np.ndarray, list[str]]:
    """Ids and tokens of the first ``n`` vocabulary rows, without the ``[unused…]`` placeholders."""
    size = vocab_size(lm)
    ids = np.arange(size if n is None else min(n, size))
    tokens = lm.tokenizer.convert_ids_to_tokens(ids.tolist())
    keep = [i for i, t in enumerate(tokens) if not is_unused(t)]
    return ids[keep], [tokens[i] for i in keep]


def vocab_size(lm: LoadedModel) -> int:
    """Rows of the input-embedding matrix that the tokenizer can produce."""
    return int(min(lm.encoder.get_input_embeddings().weight.shape[0], len(lm.tokenizer)))


def is_unused(token: str) -> bool:
    """BERT's reserved ``[unused0]``… rows: never trained, never produced by the tokenizer."""
    return token.startswith("[unused") and token.endswith("]")


def on_vocab_basis(lm: LoadedModel, texts: Sequence[str], method: Method, dims: int, layer: int, pooling: Pooling,
                   report: Progress, chart_limit: int) -> VocabBasisMap:
    """Each token's static row and contextual vector at ``layer``, in a ``method`` map fitted on the vocabulary."""
    if method is Method.TSNE:
        raise UserError("t-SNE cannot place new points in a map fitted on the vocabulary; "
                        "use --basis vocab with --method pca or umap.")
    report(0.05, "reading the input-embedding matrix")
    ids, _ = vocabulary(lm)
    matrix = embedding_matrix(lm)
    basis_rows = matrix[ids]
    basis_sampled = method is Method.UMAP and len(basis_rows) > UMAP_FIT_ROWS
    if basis_sampled:
        pick = np.random.default_rng(SEED).choice(len(basis_rows), UMAP_FIT_ROWS, replace=False)
        basis_rows, ids = basis_rows[np.sort(pick)], ids[np.sort(pick)]
    report(0.2, f"fitting {method.value} on {len(basis_rows):,} vocabulary rows")
    fitted = fit(basis_rows, method, dims)
    assert fitted.place is not None, "t-SNE, the one method that cannot place new points, is refused above"
    report(0.6, "encoding the texts")
    encs = encode(lm, texts)
    labels = [text_label(i, t) for i, t in enumerate(texts)]
    rows, static, contextual = [], [], []
    for i, enc in enumerate(encs):
        states = enc.layer(layer).numpy()
        for pos, (token, tid) in enumerate(zip(enc.tokens, enc.input_ids)):
            rows.append({"text": labels[i], "position": pos, "token": token, "id": int(tid),
                         "special": enc.sequence_ids[pos] is None})
            static.append(matrix[int(tid)])
            contextual.append(states[pos])
    static_m, ctx_m = np.asarray(static), np.asarray(contextual)
    static_xy, ctx_xy = fitted.place(static_m), fitted.place(ctx_m)
    cols = coordinate_columns(dims)
    table = pd.DataFrame(rows)
    for j, c in enumerate(cols):
        table[f"static {c}"] = np.round(static_xy[:, j], 6)
    for j, c in enumerate(cols):
        table[f"contextual {c}"] = np.round(ctx_xy[:, j], 6)
    table["moved (projected)"] = np.round(np.linalg.norm(ctx_xy - static_xy, axis=1), 6)
    def unit(m: np.ndarray) -> np.ndarray:
        return m / np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-12)

    table["cosine static vs contextual"] = np.round((unit(static_m) * unit(ctx_m)).sum(axis=1), 6)
    report(0.8, "drawing the chart")
    long = pd.concat([
        table[["text", "position", "token"]].assign(kind="static", order=0,
                                                    **{c: table[f"static {c}"] for c in cols}),
        table[["text", "position", "token"]].assign(kind="contextual", order=1,
                                                    **{c: table[f"contextual {c}"] for c in cols}),
    ], ignore_index=True)
    long["pair"] = long["text"].str.slice(0, 3) + "#" + long["position"].astype(str)
    long, sampled = chart_sample(long, max(1, chart_limit // 2))
    room = max(0, chart_limit - len(long))
    vocab_xy = fitted.coords
    pick = np.random.default_rng(SEED).choice(len(vocab_xy), min(BACKGROUND_POINTS, room, len(vocab_xy)),
                                              replace=False)
    background = pd.DataFrame(np.round(vocab_xy[pick], 6), columns=cols)
    background["token"] = lm.tokenizer.convert_ids_to_tokens(ids[pick].tolist())
    return VocabBasisMap(lm.name, tuple(texts), layer, lm.num_layers, pooling, summary(fitted, dims), len(basis_rows),
                         basis_sampled, table, long, sampled, background, truncation_warnings(lm, encs))
