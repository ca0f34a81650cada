"""Two models' charts of the same kind, side by side, each titled with its model."""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt

from tools.core.results import Chart


def titled(chart: alt.TopLevelMixin, name: str) -> alt.TopLevelMixin:
    """``chart`` with ``name`` in front of its title (once)."""
    title = chart.title if isinstance(chart.title, str) else ""
    return chart.properties(title=title if name in title else (f"{name} — {title}" if title else name))


def side_by_side(mine: Sequence[Chart], theirs: Sequence[Chart], names: tuple[str, str]) -> list[Chart]:
    """Each of ``mine`` beside the chart of the same name in ``theirs`` (stacked when either is wide)."""
    other_by_name = {c.name: c.chart for c in theirs}
    out: list[Chart] = []
    for c in mine:
        other = other_by_name.get(c.name)
        if other is None:
            out.append(Chart(c.name, titled(c.chart, names[0])))
            continue
        wide = not all(isinstance(x, (alt.Chart, alt.LayerChart)) for x in (c.chart, other))
        pair = (titled(c.chart, names[0]), titled(other, names[1]))
        out.append(Chart(c.name, alt.vconcat(*pair) if wide else alt.hconcat(*pair)))
    return out
