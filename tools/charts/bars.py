"""Bars: one value per token or per category, single or grouped."""

from __future__ import annotations

import altair as alt
import pandas as pd

from tools.charts.rows import check_rows


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
    check_rows(frame)
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
    check_rows(frame)
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


def grouped_bars(
    frame: pd.DataFrame,
    category: str,
    value: str,
    group: str,
    *,
    title: str = "",
    domain: tuple[float, float] | None = None,
    order: list[str] | None = None,
) -> alt.Chart:
    """Horizontal bars side by side: one band per ``category``, one coloured bar per ``group`` in it."""
    check_rows(frame)
    x_scale = alt.Scale(domain=list(domain)) if domain else alt.Undefined
    return alt.Chart(frame, title=title).mark_bar().encode(
        x=alt.X(f"{value}:Q", scale=x_scale, title=value),
        y=alt.Y(f"{category}:N", sort=order, title=None, axis=alt.Axis(labelLimit=220)),
        yOffset=alt.YOffset(f"{group}:N"),
        color=alt.Color(f"{group}:N", title=None, legend=alt.Legend(orient="bottom", columns=1, labelLimit=400)),
        tooltip=[category, group, alt.Tooltip(f"{value}:Q", format=".4f")],
    ).properties(width=360)
