"""A table as HTML: the one place a frame becomes escaped table markup, on the page and in the offline export."""

from __future__ import annotations

import pandas as pd


def number(value: float) -> str:
    """A table cell's float: 4 decimals, or 3 significant digits when that would show a small value as 0.0000
    (selfattn's 2.4e-07 differences, why's tiny contributions)."""
    return f"{value:.2e}" if value != 0 and abs(value) < 5e-4 else f"{value:.4f}"


def table_html(frame: pd.DataFrame, css: str = "reply-table", exact: bool = False) -> str:
    """``frame`` as an escaped HTML table (user text is data, never markup), floats as :func:`number` writes them
    (``exact``: as pandas writes them, for an export that keeps the numbers)."""
    return frame.to_html(index=False, escape=True, border=0, classes=css, float_format=None if exact else number,
                         na_rep="")
