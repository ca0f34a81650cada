"""Charts of `why`: tidy DataFrame in, ``alt.Chart`` out."""

from __future__ import annotations

import altair as alt
import pandas as pd

from tools.charts.rows import MAX_ROWS

#: Token kinds and their colours in the bars.
KINDS = ["word", "word piece", "punctuation", "special"]
_KIND_COLOURS = ["#4c78a8", "#72b7b2", "#f58518", "#54a24b"]


def _diverging(values: pd.Series) -> alt.Scale:
    """A blue-white-red scale centred on zero and symmetric, so the sign of a cell reads at a glance."""
    top = float(values.abs().max()) or 1.0
    return alt.Scale(scheme="redblue", domain=[top, -top], domainMid=0)


def pair_heatmap(frame: pd.DataFrame, *, a_order: list[str], b_order: list[str], title: str = "") -> alt.Chart:
    """Token pairs of two texts as a heatmap: rows text a's tokens, columns text b's, colour the contribution.

    Args:
        frame: columns ``a token``, ``b token`` (unique labels), ``contribution``, ``share``.
        a_order, b_order: the labels in sentence order.
        title: the chart's title.
    """
    if len(frame) > MAX_ROWS:
        raise ValueError(f"heatmap data has {len(frame)} rows; keep it under {MAX_ROWS}")
    size = min(640, max(260, 18 * max(len(a_order), len(b_order))))
    return alt.Chart(frame, title=title).mark_rect().encode(
        x=alt.X("b token:N", sort=b_order, title="text 2", axis=alt.Axis(labelAngle=-45, labelLimit=120)),
        y=alt.Y("a token:N", sort=a_order, title="text 1", axis=alt.Axis(labelLimit=120)),
        color=alt.Color("contribution:Q", scale=_diverging(frame["contribution"]), title="contribution"),
        tooltip=["a token", "b token", alt.Tooltip("contribution:Q", format=".5f"),
                 alt.Tooltip("share:Q", format=".1%", title="share of the cosine")],
    ).properties(width=size, height=size)


def token_bars(frame: pd.DataFrame, *, title: str = "", value: str = "contribution") -> alt.Chart:
    """Each token's contribution as a bar, in sentence order, one panel per text, coloured by kind.

    Args:
        frame: columns ``text``, ``label`` (unique within a text, in order), ``token``,
            ``kind`` and ``value``.
        title: the chart's title.
        value: the column drawn.
    """
    if len(frame) > MAX_ROWS:
        raise ValueError(f"bar data has {len(frame)} rows; keep it under {MAX_ROWS}")
    return alt.Chart(frame).mark_bar().encode(
        x=alt.X(f"{value}:Q", title=value),
        y=alt.Y("label:N", sort=None, title=None, axis=alt.Axis(labelLimit=160)),
        color=alt.Color("kind:N", scale=alt.Scale(domain=KINDS, range=_KIND_COLOURS), title="token"),
        tooltip=["text", "token", "kind", alt.Tooltip(f"{value}:Q", format=".5f")],
    ).properties(width=320, height=alt.Step(14)).facet(
        row=alt.Row("text:N", title=None, header=alt.Header(labelAngle=0, labelAlign="left", labelLimit=300)),
        title=title,
    ).resolve_scale(y="independent")


def pattern_heatmaps(frame: pd.DataFrame, *, title: str = "") -> alt.Chart:
    """Per-head attention pattern scores of several models: one layer x head heatmap per pattern and model.

    Args:
        frame: columns ``model``, ``pattern``, ``layer``, ``head`` and ``score`` (0 to 1).
        title: the chart's title.
    """
    if len(frame) > MAX_ROWS:
        raise ValueError(f"pattern data has {len(frame)} rows; keep it under {MAX_ROWS}")
    return alt.Chart(frame).mark_rect().encode(
        x=alt.X("head:O", title="head"),
        y=alt.Y("layer:O", title="layer"),
        color=alt.Color("score:Q", scale=alt.Scale(scheme="viridis", domain=[0, 1]), title="score"),
        tooltip=["model", "pattern", "layer", "head", alt.Tooltip("score:Q", format=".4f")],
    ).properties(width=alt.Step(12), height=alt.Step(12)).facet(
        row=alt.Row("pattern:N", title=None, sort=list(dict.fromkeys(frame["pattern"]))),
        column=alt.Column("model:N", title=None, sort=list(dict.fromkeys(frame["model"]))),
        title=title,
    )  # independent scales here make Vega-Lite 6.4 fail with "datum is not defined"
