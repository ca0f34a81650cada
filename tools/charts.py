"""Altair chart builders. Each takes a tidy DataFrame and returns an ``alt.Chart``.

Charts are never displayed here; renderers decide. Every builder keeps the data
it embeds under :data:`MAX_ROWS` (Altair's own default limit), so specs stay small.
"""

from __future__ import annotations

import altair as alt
import pandas as pd

from tools.config import CHART_ROWS_LIMIT as MAX_ROWS  # one limit, kept with the settings


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
    _check_rows(frame)
    x_scale = alt.Scale(domain=list(domain)) if domain else alt.Undefined
    return alt.Chart(frame, title=title).mark_bar().encode(
        x=alt.X(f"{value}:Q", scale=x_scale, title=value),
        y=alt.Y(f"{category}:N", sort=order, title=None, axis=alt.Axis(labelLimit=220)),
        yOffset=alt.YOffset(f"{group}:N"),
        color=alt.Color(f"{group}:N", title=None, legend=alt.Legend(orient="bottom", columns=1, labelLimit=400)),
        tooltip=[category, group, alt.Tooltip(f"{value}:Q", format=".4f")],
    ).properties(width=360)


def attention_grid(
    frame: pd.DataFrame,
    *,
    order: list[str],
    title: str = "",
    cell: int = 70,
    row: str | None = "layer",
    column: str | None = "head",
) -> alt.Chart:
    """Attention heatmaps as small multiples (issue 4): one panel per ``row`` x ``column`` value.

    ``frame`` has columns ``query``, ``key``, ``weight`` and the facet columns; queries
    are rows and keys columns of every panel, in ``order``. Axis labels are shown only
    when panels are big enough to read them.
    """
    _check_rows(frame)
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


def scatter_panels(
    frame: pd.DataFrame,
    x: str,
    y: str,
    *,
    color: str,
    panel: str,
    tooltip: list[str] | None = None,
    title: str = "",
    columns: int = 3,
    size: int = 220,
) -> alt.FacetChart:
    """Points of ``y`` against ``x`` coloured by ``color``, one panel per ``panel`` value (issue 7).

    Panels keep the order in which their values first appear in ``frame``.
    """
    _check_rows(frame)
    order = list(dict.fromkeys(frame[panel]))
    base = alt.Chart(frame).mark_circle(size=18, opacity=0.6).encode(
        x=alt.X(f"{x}:Q", title=x),
        y=alt.Y(f"{y}:Q", title=y),
        color=alt.Color(f"{color}:N", title=color),
        tooltip=tooltip or [x, y, color],
    ).properties(width=size, height=size)
    return base.facet(facet=alt.Facet(f"{panel}:N", sort=order, title=None),
                      columns=min(columns, len(order))).properties(title=title)


# --- projection (issue 6) ----------------------------------------------------------------

import warnings  # noqa: E402  (kept with the builder that needs it: others append to this file)

#: The pairs of components drawn side by side: Altair has no 3-D, so 3-D becomes three views.
PROJECTION_PAIRS: dict[int, tuple[tuple[int, int], ...]] = {2: ((0, 1),), 3: ((0, 1), (0, 2), (1, 2))}


def projection_views(
    frame: pd.DataFrame,
    *,
    dims: int = 2,
    axis_titles: list[str] | None = None,
    color: str = "text",
    color_type: str = "nominal",
    color_title: str | None = None,
    shape: str | None = None,
    shape_domain: list[str] | None = None,
    shape_range: list[str] | None = None,
    size_range: list[int] | None = None,
    label: str | None = None,
    tooltip: list[str] | None = None,
    listing: str = "listing",
    list_rows: int = 30,
    lines: str | None = None,
    background: pd.DataFrame | None = None,
    title: str = "",
    size: int = 300,
) -> alt.HConcatChart:
    """A projection scatter (columns ``dim1``, ``dim2`` [, ``dim3``]): one view for 2-D, three pairwise
    views (1-2, 1-3, 2-3) for 3-D, all linked by one brush, and beside them the list of brushed points.

    ``lines`` names a column that pairs rows (drawn as a line from ``order`` 0 to 1);
    ``background`` is drawn in grey behind the points (columns ``dim*`` and ``token``).
    """
    total = len(frame) + (0 if background is None else len(background))
    if total > MAX_ROWS:
        raise ValueError(f"chart data has {total} rows; aggregate or sample below {MAX_ROWS}")
    fields = [f"dim{i + 1}" for i in range(dims)]
    titles = axis_titles or fields
    brush = alt.selection_interval(name="brush", resolve="global", empty=True)
    kind = {"nominal": "N", "quantitative": "Q", "ordinal": "O"}[color_type]
    scheme = alt.Scale(scheme="viridis") if kind == "Q" else alt.Scale(scheme="tableau10")
    legend = alt.Legend(labelLimit=220, orient="bottom", columns=2) if kind == "N" else alt.Legend(orient="bottom")
    color_enc = alt.Color(f"{color}:{kind}", scale=scheme, legend=legend, title=color_title or color)
    tips = tooltip or [label or color]
    views = []
    for i, (a, b) in enumerate(PROJECTION_PAIRS[dims]):
        x = alt.X(f"{fields[a]}:Q", title=titles[a], scale=alt.Scale(zero=False))
        y = alt.Y(f"{fields[b]}:Q", title=titles[b], scale=alt.Scale(zero=False))
        layers = []
        if background is not None and len(background):
            layers.append(alt.Chart(background).mark_circle(size=10, color="#cfcfcf", opacity=0.5)
                          .encode(x=x, y=y, tooltip=["token"]))
        if lines:
            layers.append(alt.Chart(frame).mark_line(opacity=0.45, strokeWidth=1)
                          .encode(x=x, y=y, detail=f"{lines}:N", order="order:Q", color=color_enc))
        point_enc = {"x": x, "y": y, "tooltip": tips,
                     "color": alt.condition(brush, color_enc, alt.value("#d9d9d9")),
                     "opacity": alt.condition(brush, alt.value(0.9), alt.value(0.3))}
        if shape:
            point_enc["shape"] = alt.Shape(f"{shape}:N", scale=alt.Scale(
                domain=shape_domain or alt.Undefined,
                range=shape_range or ["circle", "square", "diamond", "triangle-up"]), title=shape,
                legend=alt.Legend(orient="bottom", columns=1))
            point_enc["size"] = alt.Size(f"{shape}:N", scale=alt.Scale(  # same field and title: one legend
                domain=shape_domain or alt.Undefined, range=size_range or [50, 70, 260, 90]), title=shape)
        # named "<base>_<position>" as Altair renames layered concat views: the brush's view list stays exact
        layers.append(alt.Chart(frame, name=f"points_{i}").mark_point(filled=True)
                      .encode(**point_enc).add_params(brush))
        if label:
            layers.append(alt.Chart(frame).mark_text(align="left", dx=6, dy=-4, fontSize=10)
                          .encode(x=x, y=y, text=f"{label}:N", color=color_enc))
        views.append(alt.layer(*layers).properties(width=size, height=size))
    chosen = (alt.Chart(frame).mark_text(align="left", baseline="middle", fontSize=11)
              .encode(x=alt.value(4), y=alt.Y("row:O", axis=None), text=f"{listing}:N")
              .transform_filter(brush)
              .transform_window(row="row_number()")
              .transform_filter(f"datum.row <= {list_rows}")
              .properties(width=260, height=size, title=f"Brushed points (first {list_rows}; all when none)"))
    with warnings.catch_warnings():  # one brush shared by the views is what is meant here
        warnings.filterwarnings("ignore", message="Automatically deduplicated selection parameter")
        return alt.hconcat(*views, chosen).properties(title=title)
