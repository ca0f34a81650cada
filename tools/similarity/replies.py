"""The words of the similarity family: each function turns one tool's facts into a Result.

This is the only place the family writes sentences, names tables and builds charts; the
tools in this package compute :mod:`~tools.similarity.facts` and call these.
"""

from __future__ import annotations

import pandas as pd

from tools import charts
from tools.core.results import Chart, Result, Table
from tools.core.text import layer_note, md, text_label
from tools.similarity.facts import Comparison


def compare(c: Comparison) -> Result:
    """Two texts: one row per pooling and bars. More: a matrix per pooling and a heatmap of the first."""
    where = layer_note(c.layer, c.num_layers)
    settings = {"pool": c.asked_pool, "layer": c.layer}
    if len(c.texts) == 2:
        frame = pd.DataFrame({
            "pooling": [p.value for p in c.poolings],
            "a": c.texts[0],
            "b": c.texts[1],
            "cosine": [float(c.cosines[p][0, 1]) for p in c.poolings],
        })
        if len(c.poolings) == 1:
            text = (f"Cosine similarity **{frame['cosine'][0]:.4f}** "
                    f"({c.poolings[0].value} pooling, {where}, {c.model}).")
        else:
            parts = ", ".join(f"{r.pooling} {r.cosine:.4f}" for r in frame.itertuples())
            text = f"Cosine similarity by pooling ({where}, {c.model}): {parts}."
        chart = charts.bars(frame, "pooling", "cosine", title="Cosine similarity by pooling",
                            domain=(min(0.0, float(frame["cosine"].min())), 1.0), sort=None)
        return Result("compare", text, [Table("similarity", frame)], [Chart("similarity", chart)],
                      c.warnings, c.model, settings=settings)
    labels = [text_label(i, t) for i, t in enumerate(c.texts)]
    tables, tidy = [], []
    for p in c.poolings:
        m = pd.DataFrame(c.cosines[p], index=labels, columns=labels).round(6)
        tables.append(Table(f"similarity ({p.value})", m.reset_index(names="text")))
        long = m.stack().rename("cosine").reset_index()
        long.columns = ["a", "b", "cosine"]
        tidy.append(long.assign(pooling=p.value))
    frame = pd.concat(tidy, ignore_index=True)
    best = frame[frame["a"] < frame["b"]].sort_values("cosine", ascending=False).iloc[0]
    first = c.poolings[0].value
    heat = charts.heatmap(frame[frame["pooling"] == first], "b", "a", "cosine",
                          title=f"Cosine similarity ({first} pooling)",
                          x_order=labels, y_order=labels, domain=(min(0.0, float(frame["cosine"].min())), 1.0))
    text = (f"Similarity matrix of {len(c.texts)} texts ({', '.join(p.value for p in c.poolings)} pooling, "
            f"{where}, {c.model}). Most similar pair: **{md(best['a'])}** and **{md(best['b'])}** "
            f"({best['cosine']:.4f}, {best['pooling']}).")
    return Result("compare", text, tables, [Chart("similarity", heat)], c.warnings, c.model, settings=settings)
