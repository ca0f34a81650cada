"""Altair chart builders. Each takes a tidy DataFrame and returns an ``alt.Chart``.

Charts are never displayed here; renderers decide. Every builder keeps the data
it embeds under :data:`MAX_ROWS` (Altair's own default limit), so specs stay small.
"""

from __future__ import annotations

import altair as alt
import pandas as pd

MAX_ROWS = 5000


def _check_rows(frame: pd.DataFrame) -> None:
    if len(frame) > MAX_ROWS:
        raise ValueError(f"chart data has {len(frame)} rows; aggregate or sample below {MAX_ROWS}")


def heatmap(
    frame: pd.DataFrame,
    x: str,
    y: str,
    value: str,
    *,
    title: str = "",
    tooltip: list[str] | None = None,
    x_order: list[str] | None = None,
    y_order: list[str] | None = None,
    domain: tuple[float, float] | None = None,
    size: int = 320,
) -> alt.Chart:
    """A labelled heatmap; ``value`` is shown in each cell's tooltip to 4 decimals."""
    _check_rows(frame)
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


def bars(
    frame: pd.DataFrame,
    category: str,
    value: str,
    *,
    title: str = "",
    color: str | None = None,
    tooltip: list[str] | None = None,
    domain: tuple[float, float] | None = None,
    sort: str | list[str] | None = "-x",
) -> alt.Chart:
    """Horizontal bars, one per ``category``, with exact values in the tooltip."""
    _check_rows(frame)
    x_scale = alt.Scale(domain=list(domain)) if domain else alt.Undefined
    enc = {
        "x": alt.X(f"{value}:Q", scale=x_scale, title=value),
        "y": alt.Y(f"{category}:N", sort=sort, title=None, axis=alt.Axis(labelLimit=220)),
        "tooltip": [*(tooltip or [category]), alt.Tooltip(f"{value}:Q", format=".4f")],
    }
    if color:
        enc["color"] = alt.Color(f"{color}:N")
    return alt.Chart(frame, title=title).mark_bar().encode(**enc).properties(width=360)


def token_strip(frame: pd.DataFrame, *, title: str = "") -> alt.Chart:
    """Tokens laid out left to right, one row per text, coloured by kind (word / piece / special)."""
    _check_rows(frame)
    base = alt.Chart(frame, title=title).encode(
        x=alt.X("position:O", title="position", axis=alt.Axis(labelAngle=0)),
        y=alt.Y("text:N", title=None),
        tooltip=["text", "position", "token", "id", "kind"],
    )
    boxes = base.mark_rect(stroke="white").encode(
        color=alt.Color("kind:N", scale=alt.Scale(domain=["word", "word piece", "special", "padding"],
                                                   range=["#4c78a8", "#f58518", "#54a24b", "#bab0ac"])))
    labels = base.mark_text(angle=270, fontSize=10, color="white").encode(text="token:N")
    return (boxes + labels).properties(width=alt.Step(22), height=alt.Step(60))
