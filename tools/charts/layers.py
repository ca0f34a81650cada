"""Measures across a model's layers: curves by hidden state, and pairs of heatmaps side by side."""

from __future__ import annotations

import altair as alt
import pandas as pd

from tools.charts.rows import check_rows


def layer_curves(
    frame: pd.DataFrame,
    value: str,
    series: str,
    *,
    layer: str = "layer",
    dash: str | None = None,
    title: str = "",
    y_title: str | None = None,
    domain: tuple[float, float] | None = None,
    log: bool = False,
    reverse: bool = False,
) -> alt.Chart:
    """One line per ``series`` over the hidden states in ``layer`` (whole numbers), points on each.

    ``dash`` names a column whose values draw solid and dashed lines (measured vs baseline);
    ``log`` puts the values on a log scale; ``reverse`` puts the smallest value at the top (ranks).
    """
    check_rows(frame)
    scale = alt.Scale(type="log" if log else "linear", reverse=reverse, zero=False,
                      **({"domain": list(domain)} if domain else {}))
    enc = {
        "x": alt.X(f"{layer}:Q", title="hidden state (0 = embeddings)",
                   axis=alt.Axis(tickMinStep=1, format="d"), scale=alt.Scale(zero=True, nice=False)),
        "y": alt.Y(f"{value}:Q", title=y_title or value, scale=scale),
        "color": alt.Color(f"{series}:N", title=None, legend=alt.Legend(orient="bottom", columns=2, labelLimit=320)),
        "tooltip": [alt.Tooltip(f"{layer}:Q", title="hidden state"), f"{series}:N",
                    *([f"{dash}:N"] if dash else []), alt.Tooltip(f"{value}:Q", format=".4f")],
    }
    if dash:
        enc["strokeDash"] = alt.StrokeDash(f"{dash}:N", title=None, legend=alt.Legend(orient="bottom"))
    return alt.Chart(frame, title=title).mark_line(point=True).encode(**enc).properties(width=420, height=260)


def paired_heatmaps(
    frame: pd.DataFrame,
    *,
    x: str,
    y: str,
    value: str,
    panel: str,
    order: list[str],
    title: str = "",
    cell: int = 300,
) -> alt.Chart:
    """Square heatmaps side by side, one per ``panel`` value, each with its own colour scale.

    ``frame`` holds ``x``, ``y``, ``value`` and ``panel``; both axes follow ``order``.
    """
    check_rows(frame)
    show = len(order) <= 48
    axis = alt.Axis(labelLimit=90, labelFontSize=9, labelAngle=-45) if show else None
    base = alt.Chart(frame).mark_rect().encode(
        x=alt.X(f"{x}:N", sort=order, axis=axis, title=x),
        y=alt.Y(f"{y}:N", sort=order, axis=alt.Axis(labelLimit=90, labelFontSize=9) if show else None, title=y),
        color=alt.Color(f"{value}:Q", scale=alt.Scale(scheme="viridis"), title=value),
        tooltip=[f"{panel}:N", f"{y}:N", f"{x}:N", alt.Tooltip(f"{value}:Q", format=".4f")],
    ).properties(width=cell, height=cell)
    panels = list(dict.fromkeys(frame[panel].tolist()))
    return (base.facet(column=alt.Column(f"{panel}:N", sort=panels, title=None), spacing=24)
            .resolve_scale(color="independent").properties(title=title))
