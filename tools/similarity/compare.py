"""Compare texts by the cosine of their sentence vectors."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from tools import charts
from tools.core.errors import UserError
from tools.core.results import Chart, Result, Table
from tools.core.text import md
from tools.core.timing import timed
from tools.encoding.encode import check_layer, layer_note, truncation_warnings
from tools.encoding.pooling import (
    Pooling,
    available_poolings,
    cosine_matrix,
    sbert_layer_warnings,
    sentence_vectors,
    usable_pooling,
)
from tools.models.hub import LoadedModel, as_model


def label(index: int, text: str, width: int = 40) -> str:
    """A short, unique label for a text in tables and charts."""
    short = " ".join(text.split())
    short = short if len(short) <= width else short[: width - 1] + "…"
    return f"{index + 1}: {short}"


def parse_poolings(lm: LoadedModel, pool: str) -> list[Pooling]:
    """``all`` means every pooling the model supports; otherwise exactly one."""
    if pool.lower() == "all":
        return available_poolings(lm)
    return [usable_pooling(lm, pool)]


@timed("compare")
def compare(
    model: LoadedModel | str | None,
    texts: Sequence[str],
    pool: str = "mean",
    layer: int | None = None,
) -> Result:
    """Cosine similarity between sentence vectors.

    Args:
        model: a loaded model or its name.
        texts: two or more texts.
        pool: ``cls``, ``mean``, ``max``, ``sbert`` (the model's own
            sentence-transformers recipe) or ``all``.
        layer: the hidden state to pool (0 = embeddings; default: the last layer).
            ``sbert`` always uses the last layer, as sentence-transformers does.

    Returns:
        Two texts: one row per pooling. More: a similarity matrix per pooling and a heatmap.
    """
    lm = as_model(model)
    if len(texts) < 2:
        raise UserError("`compare` needs at least two texts separated by `|`, like `compare A cat. | A kitten.`")
    layer_index = check_layer(lm, layer)
    poolings = parse_poolings(lm, pool)
    warnings: list[str] = []
    matrices = {}
    for p in poolings:
        vectors, encs = sentence_vectors(lm, texts, p, layer_index)
        matrices[p] = cosine_matrix(vectors)
    warnings += truncation_warnings(lm, encs)
    warnings += sbert_layer_warnings(lm, poolings, layer_index)
    where = layer_note(lm, layer_index)
    settings = {"pool": pool.lower(), "layer": layer_index}
    if len(texts) == 2:
        frame = pd.DataFrame({
            "pooling": [p.value for p in poolings],
            "a": texts[0],
            "b": texts[1],
            "cosine": [float(matrices[p][0, 1]) for p in poolings],
        })
        if len(poolings) == 1:
            text = f"Cosine similarity **{frame['cosine'][0]:.4f}** ({poolings[0].value} pooling, {where}, {lm.name})."
        else:
            parts = ", ".join(f"{r.pooling} {r.cosine:.4f}" for r in frame.itertuples())
            text = f"Cosine similarity by pooling ({where}, {lm.name}): {parts}."
        chart = charts.bars(frame, "pooling", "cosine", title="Cosine similarity by pooling",
                            domain=(min(0.0, float(frame["cosine"].min())), 1.0), sort=None)
        return Result("compare", text, [Table("similarity", frame)], [Chart("similarity", chart)],
                      warnings, lm.name, settings=settings)
    labels = [label(i, t) for i, t in enumerate(texts)]
    tables, tidy = [], []
    for p in poolings:
        m = pd.DataFrame(matrices[p], index=labels, columns=labels).round(6)
        tables.append(Table(f"similarity ({p.value})", m.reset_index(names="text")))
        long = m.stack().rename("cosine").reset_index()
        long.columns = ["a", "b", "cosine"]
        tidy.append(long.assign(pooling=p.value))
    frame = pd.concat(tidy, ignore_index=True)
    best = frame[frame["a"] < frame["b"]].sort_values("cosine", ascending=False).iloc[0]
    heat = charts.heatmap(frame[frame["pooling"] == poolings[0].value], "b", "a", "cosine",
                          title=f"Cosine similarity ({poolings[0].value} pooling)",
                          x_order=labels, y_order=labels, domain=(min(0.0, float(frame["cosine"].min())), 1.0))
    text = (f"Similarity matrix of {len(texts)} texts ({', '.join(p.value for p in poolings)} pooling, "
            f"{where}, {lm.name}). Most similar pair: **{md(best['a'])}** and **{md(best['b'])}** "
            f"({best['cosine']:.4f}, {best['pooling']}).")
    return Result("compare", text, tables, [Chart("similarity", heat)], warnings, lm.name, settings=settings)
