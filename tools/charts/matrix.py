"""Matrices as heatmaps: cosines, token pairs, and attention grids faceted by layer and head."""

from __future__ import annotations

import altair as alt
import pandas as pd

from tools.charts.rows import check_rows


def heatmap(
    frame: pd.DataFrame,
    x: str,
    y: str,
    value: str,
    *,
    title: str = "",
    tooltip: list[str] | None = None,
    x_order: list[str] | list[int] | None = None,
    y_order: list[str] | list[int] | None = None,
    domain: tuple[float, float] | None = None,
    size: int = 320,
) -> alt.Chart:
    """A labelled heatmap; ``value`` is shown in each cell's tooltip to 4 decimals."""
    check_rows(frame)
    scale = alt.Scale(scheme="viridis", domain=list(domain)) if domain else alt.Scale(scheme="viridis")
    tips = tooltip or [x, y]
    base = alt.Chart(frame, title=title).encode(
        x=alt.X(f"{x}:N", sort=x_order, title=None, axis=alt.Axis(labelAngle=-45, labelLimit=160)),
        y=alt.Y(f"{y}:N", sort=y_order, title=None, axis=alt.Axis(labelLimit=160)),
    )
    cells = base.mark_rect().encode(
        color=alt.Color(f"{value}:Q", scale=scale, title=value),
        tooltip=[*tips, alt.Tooltip(f"{value}:Q", format=".4f")],
    )
    labels = None
    if len(frame) <= 100:
        labels = base.mark_text(baseline="middle", fontSize=11).encode(
            text=alt.Text(f"{value}:Q", format=".2f"),
            color=alt.condition(f"datum['{value}'] > {_midpoint(frame[value], domain)}",
                                alt.value("black"), alt.value("white")),
        )
    chart = cells + labels if labels is not None else cells
    return chart.properties(width=size, height=size)


def _midpoint(values: pd.Series, domain: tuple[float, float] | None) -> float:
    lo, hi = domain if domain else (float(values.min()), float(values.max()))
    return (lo + hi) / 2




def attention_grid(
    frame: pd.DataFrame,
    *,
    order: list[str],
    title: str = "",
    cell: int = 70,
    row: str | None = "layer",
    column: str | None = "head",
) -> alt.Chart:
    """Attention heatmaps as small multiples: one panel per ``row`` x ``column`` value.

    ``frame`` has columns ``query``, ``key``, ``weight`` and the facet columns; queries
    are rows and keys columns of every panel, in ``order``. Axis labels are shown only
    when panels are big enough to read them.
    """
    check_rows(frame)
    show = cell >= 120 and len(order) <= 40
    axis = alt.Axis(labelLimit=90, labelFontSize=9, title=None) if show else None
    facet_keys = [c for c in (row, column) if c]
    base = alt.Chart(frame).mark_rect().encode(
        x=alt.X("key:N", sort=order, axis=axis, title=None),
        y=alt.Y("query:N", sort=order, axis=axis, title=None),
        color=alt.Color("weight:Q", scale=alt.Scale(scheme="viridis", domain=[0, 1]), title="weight"),
        tooltip=[*(f"{c}:O" for c in facet_keys), "query:N", "key:N", alt.Tooltip("weight:Q", format=".4f")],
    ).properties(width=cell, height=cell)
    facet = {}
    if row:
        facet["row"] = alt.Row(f"{row}:O", header=alt.Header(labelFontSize=10),
                               sort=list(dict.fromkeys(frame[row].tolist())))
    if column:
        facet["column"] = alt.Column(f"{column}:O", header=alt.Header(labelFontSize=10),
                                     sort=list(dict.fromkeys(frame[column].tolist())))
    return base.facet(**facet, spacing=4).properties(title=title)


def head_patterns(frame: pd.DataFrame, *, title: str = "", columns: int = 3) -> alt.Chart:
    """What each head does: one layer x head heatmap per pattern, wrapped ``columns`` to a row.

    Args:
        frame: columns ``layer``, ``head`` (1-based), ``pattern`` and ``score`` (0 to 1).
        title: the chart's title.
        columns: panels per row (three keep six patterns of twelve heads within a reply's width).
    """
    check_rows(frame)
    return alt.Chart(frame).mark_rect().encode(
        x=alt.X("head:O", title="head", axis=alt.Axis(labelAngle=0, labelFontSize=9)),
        y=alt.Y("layer:O", title="layer", axis=alt.Axis(labelFontSize=9)),
        color=alt.Color("score:Q", scale=alt.Scale(scheme="viridis", domain=[0, 1]), title="share"),
        tooltip=["pattern", "layer", "head", alt.Tooltip("score:Q", format=".4f")],
    ).properties(width=alt.Step(13), height=alt.Step(13)).facet(
        facet=alt.Facet("pattern:N", title=None, sort=list(dict.fromkeys(frame["pattern"]))),
        columns=columns, spacing=10, title=title,
    )
