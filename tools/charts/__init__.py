"""Charts: Altair builders, a tidy DataFrame in and an ``alt.Chart`` out.

Lives here, one module per chart family: ``matrix`` (heatmaps, attention grids, heads' patterns),
``bars`` (bars, token strips, grouped bars), ``layers`` (curves across hidden states,
heatmaps side by side), ``scatter`` (projection panels and the
brushed 2-D/3-D views), ``why`` (the attribution charts of ``why`` and ``mask --why``)
``pairs`` (two models' charts side by side, for `--vs`) and ``rows`` (the one chart-row limit
every builder keeps, ``MAX_ROWS``, from
``tools.core.config``). Charts are never displayed here; the assistant's renderers
decide. The builders are re-exported here, so ``from tools import charts`` then
``charts.heatmap(...)`` reads as it should.

May import: ``tools.core``, altair, pandas; nothing that computes.
"""

from tools.charts.bars import bars, grouped_bars, token_strip
from tools.charts.layers import layer_curves, paired_heatmaps
from tools.charts.matrix import attention_grid, head_patterns, heatmap
from tools.charts.rows import MAX_ROWS
from tools.charts.scatter import PROJECTION_PAIRS, projection_views, scatter_panels

__all__ = ["MAX_ROWS", "PROJECTION_PAIRS", "attention_grid", "bars", "grouped_bars", "head_patterns", "heatmap",
           "layer_curves", "paired_heatmaps", "projection_views", "scatter_panels", "token_strip"]
