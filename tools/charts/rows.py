"""The one chart-row limit every builder keeps (Altair's own default, kept with the settings)."""

from __future__ import annotations

import pandas as pd

from tools.core.config import CHART_ROWS_LIMIT as MAX_ROWS  # one limit, kept with the settings


def check_rows(frame: pd.DataFrame) -> None:
    """Refuse a frame over the limit: the tool should have sampled or aggregated it (and said so)."""
    if len(frame) > MAX_ROWS:
        raise ValueError(f"chart data has {len(frame)} rows; aggregate or sample below {MAX_ROWS}")
