"""A table as HTML: the one place a frame becomes escaped table markup, on the page and in the offline export."""

from __future__ import annotations

import html
import uuid

import numpy as np
import pandas as pd

from tools.core.text import shorten

#: A text cell longer than this shows its start, cut at a word with an ellipsis; the full text is its tooltip.
CELL_CHARS = 200


#: Below this, a float is shown with 3 significant digits instead of 4 decimals (it would read 0.0000).
SMALL = 5e-4


def number(value: float) -> str:
    """A table cell's float: 4 decimals, or 3 significant digits when that would show a small value as 0.0000
    (selfattn's 2.4e-07 differences, why's tiny contributions)."""
    return f"{value:.2e}" if value != 0 and abs(value) < SMALL else f"{value:.4f}"


def shown(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` for a sortable table on the page: a copy whose floats are rounded as :func:`number` writes them (the
    reply's downloads keep every digit). Rounded values, not a pandas Styler: a Styler cost Gradio 9x the time at
    30,000 rows and failed past pandas' 262,144 styled cells."""
    floats = [c for c in frame.columns if pd.api.types.is_float_dtype(frame[c])]
    if not floats:
        return frame
    out = frame.copy()
    for column in floats:
        values = out[column].to_numpy(dtype=float)
        rounded = np.round(values, 4)
        small = (values != 0) & (np.abs(values) < SMALL)
        rounded[small] = [float(number(v)) for v in values[small]]
        out[column] = rounded
    return out


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
