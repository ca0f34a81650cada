"""Two models' charts of the same kind, side by side when both fit a reply's width, else one above the other."""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt

from tools.core.results import Chart


def titled(chart: alt.TopLevelMixin, name: str) -> alt.TopLevelMixin:
    """``chart`` with ``name`` in front of its title (once)."""
    title = chart.title if isinstance(chart.title, str) else ""
    return chart.properties(title=title if name in title else (f"{name} — {title}" if title else name))


#: The pixels two charts' plots may take side by side (a reply at the page's default width, less axes and titles).
SIDE_BY_SIDE_PX = 560


def _width(chart: alt.TopLevelMixin) -> int | None:
    """A plain chart's plot width in pixels, when it is a number."""
    width = getattr(chart, "width", None)
    return width if isinstance(width, int) else None


def side_by_side(mine: Sequence[Chart], theirs: Sequence[Chart], names: tuple[str, str]) -> list[Chart]:
    """Each of ``mine`` beside the chart of the same name in ``theirs``, stacked when either is faceted,
    concatenated or too wide for the two to fit a reply (:data:`SIDE_BY_SIDE_PX`)."""
    other_by_name = {c.name: c.chart for c in theirs}
    out: list[Chart] = []
    for c in mine:
        other = other_by_name.get(c.name)
        if other is None:
            out.append(Chart(c.name, titled(c.chart, names[0])))
            continue
        widths = [_width(x) for x in (c.chart, other)]
        wide = (not all(isinstance(x, (alt.Chart, alt.LayerChart)) for x in (c.chart, other))
                or any(w is None for w in widths) or sum(w or 0 for w in widths) > SIDE_BY_SIDE_PX)
        pair = (titled(c.chart, names[0]), titled(other, names[1]))
        out.append(Chart(c.name, alt.vconcat(*pair) if wide else alt.hconcat(*pair)))
    return out
