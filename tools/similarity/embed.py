"""Embed texts: every hidden state's shape, each token's norm, the pooled sentence vector, downloads.

The source notebooks save embeddings with ``torch.save`` (pickle); the downloads
here are ``.npy``, ``.safetensors`` and CSV, built in memory.
"""

from __future__ import annotations

import io
from collections.abc import Sequence

import numpy as np
import pandas as pd
import torch

from tools import charts
from tools.core.errors import UserError
from tools.core.results import Artifact, Chart, Result, Table, csv_text
from tools.core.text import text_label as label
from tools.core.timing import timed
from tools.encoding.encode import Encoded, check_layer, truncation_warnings
from tools.encoding.pooling import Pooling, sbert_layer_warnings, sentence_vectors, usable_pooling
from tools.models.hub import LoadedModel, as_model


def _hidden_state_name(index: int) -> str:
    return "embeddings" if index == 0 else f"layer {index}"


@timed("embed")
def embed(
    model: LoadedModel | str | None,
    texts: Sequence[str],
    layer: int | None = None,
    pool: str = "mean",
) -> Result:
    """Token and sentence vectors of one or more texts, ready to download.

    Args:
        model: a loaded model or its name.
        texts: one or more texts.
        layer: the hidden state the token vectors and the sentence vector come from
            (0 = embedding output; default: the last layer).
        pool: ``cls``, ``mean``, ``max`` or ``sbert`` (the model's own recipe, last layer).

    Returns:
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
    sentences, encs = sentence_vectors(lm, texts, pooling, layer_index)
    sentences = sentences.float()
    warnings = truncation_warnings(lm, encs)
    warnings += sbert_layer_warnings(lm, [pooling], layer_index)
    labels = [label(i, t) for i, t in enumerate(texts)]
    shapes = _shapes(lm, encs, labels)
    tokens = _token_norms(encs, labels, layer_index)
    vector_table = pd.DataFrame(sentences.numpy().T, columns=labels).rename_axis("dimension").reset_index()
    sentence_norms = pd.DataFrame({"text": labels, "tokens": [len(e.tokens) for e in encs],
                                   "pooling": pooling.value, "hidden state": _hidden_state_name(layer_index),
                                   "dims": sentences.shape[1], "norm": sentences.norm(dim=1).numpy()})
    chart, note = _norm_chart(encs[0], labels[0], layer_index)
    pool_note = "the model's sentence-transformers recipe, last layer" if pooling is Pooling.SBERT else (
        f"{pooling.value} pooling of {_hidden_state_name(layer_index)}")
    text = (
        f"Embedded {len(texts)} text{'s' if len(texts) > 1 else ''} with {lm.name}: {lm.num_layers + 1} hidden "
        f"states (the embedding output and {lm.num_layers} layers) of shape tokens x {lm.hidden_size}. "
        f"Token vectors come from **{_hidden_state_name(layer_index)}**; the sentence vector is {pool_note} "
        f"({sentences.shape[1]} dims, norm {float(sentences[0].norm()):.4f} for text 1). "
        "Downloads: `sentence_vectors.npy`, `embeddings.safetensors` (sentence and token vectors), and CSV. "
        + note
    ).strip()
    return Result(
        "embed", text,
        [Table("sentence vectors", sentence_norms), Table("hidden states", shapes),
         Table("token norms", tokens), Table("vector", vector_table)],
        [Chart("token norms", chart)], warnings, lm.name,
        settings={"layer": layer_index, "pool": pooling.value},
        artifacts=_artifacts(lm, encs, texts, sentences, layer_index, pooling),
    )


def _shapes(lm: LoadedModel, encs: list[Encoded], labels: list[str]) -> pd.DataFrame:
    rows = []
    for label_, enc in zip(labels, encs):
        norms = enc.hidden_states.norm(dim=-1).mean(dim=1)  # (L+1,)
        for index in range(enc.hidden_states.shape[0]):
            rows.append({"text": label_, "hidden state": index, "name": _hidden_state_name(index),
                         "shape": f"{enc.hidden_states.shape[1]} x {enc.hidden_states.shape[2]}",
                         "mean token norm": float(norms[index])})
    return pd.DataFrame(rows)


def _token_norms(encs: list[Encoded], labels: list[str], layer: int) -> pd.DataFrame:
    rows = []
    for label_, enc in zip(labels, encs):
        norms = enc.layer(layer).norm(dim=-1)
        for pos, token in enumerate(enc.tokens):
            rows.append({"text": label_, "position": pos, "token": token,
                         "special": enc.sequence_ids[pos] is None, "norm": float(norms[pos])})
    return pd.DataFrame(rows)


def _norm_chart(enc: Encoded, label_: str, layer: int) -> tuple[object, str]:
    """Token x hidden-state norms of the first text, capped below the chart row limit."""
    n_states = enc.hidden_states.shape[0]
    keep = min(len(enc.tokens), charts.MAX_ROWS // n_states)
    norms = enc.hidden_states[:, :keep].norm(dim=-1).numpy()  # (L+1, keep)
    names = [f"{p}: {t}" for p, t in enumerate(enc.tokens[:keep])]
    frame = pd.DataFrame([{"token": names[p], "hidden state": _hidden_state_name(i), "norm": float(norms[i, p])}
                          for i in range(n_states) for p in range(keep)])
    order = [_hidden_state_name(i) for i in range(n_states)]
    note = ""
    title = f"Token vector norms by hidden state ({label_})"
    if keep < len(enc.tokens):
        note = f"The chart shows the first {keep} of {len(enc.tokens)} tokens of text 1; the tables have all."
        title += f", first {keep} tokens"
    chart = charts.heatmap(frame, "token", "hidden state", "norm", title=title, x_order=names, y_order=order,
                           size=min(640, 24 * keep + 80))
    return chart, note


def _artifacts(lm: LoadedModel, encs: list[Encoded], texts: Sequence[str], sentences: torch.Tensor,
               layer: int, pooling: Pooling) -> list[Artifact]:
    from safetensors.numpy import save as save_safetensors

    matrix = np.ascontiguousarray(sentences.numpy().astype(np.float32))
    npy = io.BytesIO()
    np.save(npy, matrix, allow_pickle=False)
    tensors = {"sentence_vectors": matrix}
    for i, enc in enumerate(encs):
        tensors[f"token_vectors_{i + 1}"] = np.ascontiguousarray(enc.layer(layer).numpy().astype(np.float32))
    metadata = {"model": lm.name, "hidden_state": str(layer), "pooling": pooling.value, "texts": str(len(texts)),
                "token_vectors": "token_vectors_N is text N's (tokens x hidden) matrix"}
    dims = [f"d{k}" for k in range(matrix.shape[1])]
    sent_csv = pd.DataFrame(matrix, columns=dims).assign(text=list(texts))[["text", *dims]]
    token_frames = []
    for i, enc in enumerate(encs):
        vecs = enc.layer(layer).numpy()
        frame = pd.DataFrame(vecs, columns=[f"d{k}" for k in range(vecs.shape[1])])
        frame.insert(0, "token", enc.tokens)
        frame.insert(0, "position", range(len(enc.tokens)))
        frame.insert(0, "text", i + 1)
        token_frames.append(frame)
    return [
        Artifact("sentence_vectors.npy", npy.getvalue()),
        Artifact("embeddings.safetensors", save_safetensors(tensors, metadata=metadata)),
        Artifact("sentence_vectors.csv", csv_text(sent_csv).encode(), "text/csv"),
        Artifact("token_vectors.csv", csv_text(pd.concat(token_frames, ignore_index=True)).encode(),
                 "text/csv"),
    ]
