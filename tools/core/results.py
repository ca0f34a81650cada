"""Result, Table, Chart, Drawing and Artifact: the one value every tool returns."""

from __future__ import annotations

import base64
import math
import zlib
from dataclasses import dataclass, field
from typing import Any

import altair as alt
import numpy as np
import pandas as pd


@dataclass(frozen=True)
class Table:
    """A named table; ``frame`` holds every row (renderers decide how many to show).

    Attributes:
        name: what the table is.
        frame: every row.
        row_lines: a command line per row that follows it up (the page shows a button per row that runs it;
            empty: none).
        row_action: the button's word (``"why"``).
    """

    name: str
    frame: pd.DataFrame
    row_lines: tuple[str, ...] = ()
    row_action: str = ""

    def to_json(self) -> dict[str, Any]:
        """Columns and rows as plain JSON values (NaN becomes null)."""
        return {
            "name": self.name,
            "columns": [str(c) for c in self.frame.columns],
            "rows": [[json_value(v) for v in row] for row in self.frame.itertuples(index=False)],
        }


@dataclass(frozen=True)
class Chart:
    """A named Altair chart, built from a tidy DataFrame and never displayed here."""

    name: str
    chart: alt.TopLevelMixin

    def to_json(self) -> dict[str, Any]:
        """The Vega-Lite spec with the chart's data inlined."""
        return {"name": self.name, "vega_lite": self.chart.to_dict()}


@dataclass(frozen=True)
class Drawing:
    """A picture too large for a Vega-Lite chart, sent as compact bytes that the page draws itself.

    Attributes:
        name: what it shows.
        kind: which drawing code reads it (``attention-heads``: the page's heads.js).
        meta: what the bytes mean (shape, order, labels, scale), plain JSON values.
        data: the raw bytes (for ``attention-heads``: uint8 weights, C order).
    """

    name: str
    kind: str
    meta: dict[str, Any]
    data: bytes

    def to_json(self) -> dict[str, Any]:
        """Name, kind, meta and the bytes deflated (zlib) and base64-encoded."""
        return {"name": self.name, "kind": self.kind, "meta": self.meta, "encoding": "zlib+base64",
                "data": base64.b64encode(zlib.compress(self.data, 9)).decode("ascii")}


@dataclass(frozen=True)
class Artifact:
    """A downloadable file held in memory; the renderer decides where it is written.

    Tools never write files: they hand bytes over, and the app writes them into a
    fresh temporary folder under a name chosen here, never from user text.
    """

    filename: str
    data: bytes
    media_type: str = "application/octet-stream"


@dataclass(frozen=True)
class Result:
    """What a command produced.

    Attributes:
        command: the verb that ran (``compare``, ``tokenize``...).
        text: a short markdown summary.
        tables: every number a person may want to copy.
        charts: pictures, as Altair charts.
        warnings: things that changed the answer (truncation, fallbacks).
        model: the model name that produced it ("" when none was used).
        elapsed_ms: wall time of the command.
        settings: the choices that shaped the answer (layer, pooling...), so a
            pasted answer can be reproduced.
        artifacts: extra downloads (``.npy``, ``.safetensors``...).
        drawings: pictures the page draws from compact bytes (every attention head as a raster).
    """

    command: str
    text: str
    tables: list[Table] = field(default_factory=list)
    charts: list[Chart] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    model: str = ""
    elapsed_ms: float = 0.0
    settings: dict[str, Any] = field(default_factory=dict)
    artifacts: list[Artifact] = field(default_factory=list)
    drawings: list[Drawing] = field(default_factory=list)

    def table(self, name: str) -> pd.DataFrame:
        """The frame of the table called ``name``."""
        for t in self.tables:
            if t.name == name:
                return t.frame
        raise KeyError(f"no table {name!r}; tables: {[t.name for t in self.tables]}")

    def to_json(self) -> dict[str, Any]:
        """The stable machine-readable shape documented in DESIGN.md."""
        return {
            "ok": True,
            "command": self.command,
            "model": self.model,
            "elapsed_ms": round(self.elapsed_ms, 2),
            "text": self.text,
            "warnings": list(self.warnings),
            "settings": {k: json_value(v) for k, v in self.settings.items()},
            "tables": [t.to_json() for t in self.tables],
            "charts": [c.to_json() for c in self.charts],
            "drawings": [d.to_json() for d in self.drawings],
            "error": None,
        }


def error_json(message: str, command: str = "") -> dict[str, Any]:
    """The JSON shape of a refused command."""
    return {
        "ok": False,
        "command": command,
        "model": "",
        "elapsed_ms": 0.0,
        "text": "",
        "warnings": [],
        "settings": {},
        "tables": [],
        "charts": [],
        "drawings": [],
        "error": message,
    }


def json_value(value: Any) -> Any:
    """Turn numpy and pandas scalars into plain JSON values."""
    if isinstance(value, (np.generic,)):
        value = value.item()
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return None
    if isinstance(value, (list, tuple)):
        return [json_value(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


#: First characters that make a spreadsheet read a cell as a formula (OWASP, CSV injection).
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_safe(value: Any) -> Any:
    """A text cell that a spreadsheet would run as a formula, prefixed with ``'`` so it shows as text.

    Numbers stay numbers (``-0.5`` is a value, not a formula); only strings are touched.
    """
    if isinstance(value, str) and value.startswith(FORMULA_START):
        return "'" + value
    return value


def csv_text(frame: pd.DataFrame) -> str:
    """``frame`` as CSV with every text cell neutralised for spreadsheets (see :func:`csv_safe`).

    Column names are user-visible too (a `weights` table is labelled by tokens), so they are
    neutralised the same way; JSON downloads stay exact.
    """
    safe = frame.copy()
    for column in safe.columns:
        if safe[column].dtype == object or pd.api.types.is_string_dtype(safe[column]):
            safe[column] = safe[column].map(csv_safe)
    safe.columns = [csv_safe(str(c)) for c in safe.columns]
    # CRLF rows (RFC 4180): a lone CR inside a cell is then quoted like a line break
    return safe.to_csv(index=False, lineterminator="\r\n")
