"""A table as HTML: the one place a frame becomes escaped table markup, on the page and in the offline export."""

from __future__ import annotations

import html
import uuid

import pandas as pd
from pandas.io.formats.style import Styler

from tools.core.text import shorten

#: A text cell longer than this shows its start, cut at a word with an ellipsis; the full text is its tooltip.
CELL_CHARS = 200


def number(value: float) -> str:
    """A table cell's float: 4 decimals, or 3 significant digits when that would show a small value as 0.0000
    (selfattn's 2.4e-07 differences, why's tiny contributions)."""
    return f"{value:.2e}" if value != 0 and abs(value) < 5e-4 else f"{value:.4f}"


def shown(frame: pd.DataFrame) -> Styler:
    """``frame`` for a sortable table on the page: its floats shown as :func:`number` writes them, its values (and so
    its sort order and its downloads) unchanged."""
    floats = [c for c in frame.columns if pd.api.types.is_float_dtype(frame[c])]
    return frame.style.format(number, subset=floats, na_rep="")


def table_html(frame: pd.DataFrame, css: str = "reply-table", exact: bool = False) -> str:
    """``frame`` as an escaped HTML table (user text is data, never markup), floats as :func:`number` writes them
    (``exact``: as pandas writes them, for an export that keeps the numbers). A text cell over
    :data:`CELL_CHARS` characters shows a shortened text, the whole of it in its ``title`` (hover to read it)."""
    long: dict[str, str] = {}
    nonce = uuid.uuid4().hex
    texts = [c for c in frame.columns if not pd.api.types.is_numeric_dtype(frame[c])
             and not pd.api.types.is_bool_dtype(frame[c])]
    shown = frame.copy() if texts else frame

    def mark(value: object) -> object:
        if isinstance(value, str) and len(value) > CELL_CHARS:
            key = f"@@{nonce}-{len(long)}@@"
            long[key] = value
            return key
        return value

    for column in texts:
        shown[column] = shown[column].map(mark).astype(object)
    out = shown.to_html(index=False, escape=True, border=0, classes=css, float_format=None if exact else number,
                        na_rep="")
    for key, value in long.items():
        out = out.replace(key, f'<span class="cut" title="{html.escape(value, quote=True)}">'
                               f"{html.escape(shorten(value, CELL_CHARS))}</span>")
    return out
