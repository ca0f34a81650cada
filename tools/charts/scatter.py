"""Points: projections of vectors, in panels or as brushed 2-D/3-D views."""

from __future__ import annotations

import math
import warnings

import altair as alt
import numpy as np
import pandas as pd

from tools.charts.rows import MAX_ROWS, check_rows


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
    """Points of ``y`` against ``x`` coloured by ``color``, one panel per ``panel`` value, at most ``columns`` to a
    row and the rows filled evenly.

    Panels keep the order in which their values first appear in ``frame``.
    """
    check_rows(frame)
    order = list(dict.fromkeys(frame[panel]))
    base = alt.Chart(frame).mark_circle(size=18, opacity=0.6).encode(
        x=alt.X(f"{x}:Q", title=x),
        y=alt.Y(f"{y}:Q", title=y),
        color=alt.Color(f"{color}:N", title=color, legend=alt.Legend(orient="bottom", labelLimit=240)),
        tooltip=tooltip or [x, y, color],
    ).properties(width=size, height=size)  # the legend below the panels: three panels fill a reply's width
    # as few rows as ``columns`` allow, then as few columns as fill them: four panels 2 x 2, not 3 then 1 beside two
    # empty cells that Vega-Lite draws as bare axes
    rows = max(1, math.ceil(len(order) / columns))
    return base.facet(facet=alt.Facet(f"{panel}:N", sort=order, title=None),
                      columns=max(1, math.ceil(len(order) / rows))).properties(title=title)


# --- projection ----------------------------------------------------------------


#: The pairs of components drawn side by side: Altair has no 3-D, so 3-D becomes three views.
PROJECTION_PAIRS: dict[int, tuple[tuple[int, int], ...]] = {2: ((0, 1),), 3: ((0, 1), (0, 2), (1, 2))}


def thinned(frame: pd.DataFrame, x: str, y: str, label: str, size: int, char_px: float = 6.0,
            line_px: float = 12.0, extent: pd.DataFrame | None = None) -> pd.DataFrame:
    """The rows whose labels, drawn at 10 px beside their points in a ``size``-pixel view, overlap no label
    kept before them (first come, first kept): a crowded map shows readable words, not a smear.

    ``extent``: more points the view's axes span (a grey background), so positions are placed as drawn."""
    if frame.empty:
        return frame
    xs, ys = frame[x].to_numpy(dtype=float), frame[y].to_numpy(dtype=float)
    every = frame if extent is None or extent.empty else pd.concat([frame[[x, y]], extent[[x, y]]])
    all_x, all_y = every[x].to_numpy(dtype=float), every[y].to_numpy(dtype=float)
    span_x, span_y = max(float(np.ptp(all_x)), 1e-12), max(float(np.ptp(all_y)), 1e-12)
    px, py = (xs - all_x.min()) / span_x * size, (all_y.max() - ys) / span_y * size
    kept: list[int] = []
    boxes: list[tuple[float, float, float, float]] = []
    for i, text in enumerate(frame[label].astype(str)):
        box = (px[i] + 6, py[i] - 4 - line_px, px[i] + 6 + char_px * len(text), py[i] - 4)
        if all(box[2] <= b[0] or b[2] <= box[0] or box[3] <= b[1] or b[3] <= box[1] for b in boxes):
            kept.append(i)
            boxes.append(box)
    return frame.iloc[kept]


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
    if label:  # which labels each view draws: a column per view in the one dataset (no extra rows of data)
        frame = frame.reset_index(drop=True)
        frame = frame.assign(**{f"label_in_view_{i}": frame.index.isin(
            thinned(frame, fields[a], fields[b], label, size, extent=background).index)
            for i, (a, b) in enumerate(PROJECTION_PAIRS[dims])})
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
        if label:  # only labels that do not overlap another in this view (the tooltips and the list keep all)
            layers.append(alt.Chart(frame).transform_filter(f"datum.label_in_view_{i}")
                          .mark_text(align="left", dx=6, dy=-4, fontSize=10)
                          .encode(x=x, y=y, text=f"{label}:N", color=color_enc))
        views.append(alt.layer(*layers).properties(width=size, height=size))
    chosen = (alt.Chart(frame).mark_text(align="left", baseline="middle", fontSize=11, limit=250)
              .encode(x=alt.value(4), y=alt.Y("row:O", axis=None), text=f"{listing}:N")
              .transform_filter(brush)
              .transform_window(row="row_number()")
              .transform_filter(f"datum.row <= {list_rows}")
              .properties(width=260, height=size, title=alt.TitleParams(
                  f"Brushed points (first {list_rows}; all when none)", limit=260)))
    with warnings.catch_warnings():  # one brush shared by the views is what is meant here
        warnings.filterwarnings("ignore", message="Automatically deduplicated selection parameter")
        return alt.hconcat(*views, chosen).properties(title=title)
