"""Reply -> what the page shows: one HTML block and its charts' Vega-Lite specs.

The only code that turns a typed :class:`~assistant.dispatch.Reply` into the page's
conversation. A reply reads top-down: how the line was read (for questions), the
answer, warnings, each chart, the first table's first rows with the rest folded
away, further tables folded, the command lines offered, then the footer that
reproduces it. Every user text is escaped: the summary is Markdown rendered with
raw HTML turned off, tables are escaped by pandas, code spans stay code.
"""

from __future__ import annotations

import html
import re
import uuid
from typing import Any

import pandas as pd
from markdown_it import MarkdownIt

from assistant.dispatch import Reply
from assistant.render.tables import table_html
from tools.core.results import Table

#: Rows of the first table shown open; the rest of it (up to FOLDED_ROWS) is one click away.
OPEN_ROWS = 8
#: Rows of a table the conversation carries at most; the side panel and the downloads hold every row.
FOLDED_ROWS = 200

_MARKDOWN = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).enable("table")


_CODE_SPAN = re.compile(r"(`+)(.*?)\1", re.S)


def md_error(message: str) -> str:
    """Escape an error or warning sentence outside its code spans (which hold the user text)."""
    out, pos = [], 0
    for match in _CODE_SPAN.finditer(message):
        out.append(_escape_prose(message[pos:match.start()]))
        out.append(match.group(0))
        pos = match.end()
    out.append(_escape_prose(message[pos:]))
    return "".join(out)


def _escape_prose(text: str) -> str:
    return html.escape(text, quote=False).replace("[", "\\[").replace("]", "\\]").replace("!", "\\!")


def markdown_html(text: str) -> str:
    """Markdown as HTML, with any raw HTML in ``text`` shown as text (never as markup)."""
    return _MARKDOWN.render(text or "")


def table_block(table: Table, open_rows: int, first: bool) -> str:
    """One table: the first ``open_rows`` rows shown and the rest folded (first table), or all folded."""
    frame = table.frame
    name = html.escape(table.name)
    size = f"{len(frame):,} row{'s' if len(frame) != 1 else ''}"
    if not first:
        return (f"<details class='more-table'><summary>Table <b>{name}</b> ({size})</summary>"
                f"{_rows_html(table, 0, FOLDED_ROWS)}{_cut_note(frame)}</details>")
    head = _rows_html(table, 0, open_rows)
    folded = ""
    if len(frame) > open_rows:
        folded = (f"<details class='more-rows'><summary>{len(frame) - open_rows:,} more rows</summary>"
                  f"{_rows_html(table, open_rows, FOLDED_ROWS)}{_cut_note(frame)}</details>")
    return f"<div class='table-block'><p class='table-name'><b>{name}</b> ({size})</p>{head}{folded}</div>"


def _rows_html(table: Table, start: int, stop: int) -> str:
    """Rows ``start:stop`` of a table as HTML, each with its follow-up button when the table has row lines."""
    part = table.frame.iloc[start:stop]
    if not table.row_lines:
        return table_html(part)
    marks = [f"\x02{i}\x03" for i in range(start, start + len(part))]
    out = table_html(part.assign(**{table.row_action or "next": marks}))
    for i, mark in zip(range(start, start + len(part)), marks):
        line = table.row_lines[i] if i < len(table.row_lines) else ""
        button = (f"<button type='button' class='row-run' data-run='{html.escape(line, quote=True)}' "
                  f"title='{html.escape(line, quote=True)}'>{html.escape(table.row_action or 'run')}</button>"
                  if line else "")
        out = out.replace(mark, button, 1)
    return out


def _cut_note(frame: pd.DataFrame) -> str:
    if len(frame) <= FOLDED_ROWS:
        return ""
    return (f"<p class='reply-note'>The conversation shows {FOLDED_ROWS:,} of {len(frame):,} rows; the full "
            "table is in the side panel and the downloads.</p>")


def line_button(line: str, css: str = "line") -> str:
    """A command line shown as code; a click puts it in the input box to edit and run."""
    safe = html.escape(line, quote=True)
    return (f"<button type='button' class='{css}' data-fill='{safe}' title='put it in the box'>"
            f"<code>{html.escape(line)}</code></button>")


def footer(reply: Reply, link: str = "") -> str:
    """Command, model, the choices that shaped the answer, time; and the permalink line when given."""
    r = reply.result
    if r is None:
        return ""
    choices = ", ".join(f"{k}={v}" for k, v in r.settings.items() if v not in (None, False, "") and k != "map")
    bits = [html.escape(r.command), html.escape(r.model) if r.model else "no model"]
    if choices:
        bits.append(html.escape(choices))
    bits.append(f"{r.elapsed_ms:,.0f} ms")
    return f"<div class='reply-footer'>{' · '.join(bits)}</div>{link}"


def _walk(node: Any):
    """Every dict inside a Vega-Lite spec."""
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from _walk(value)


def chart_hint(spec: dict[str, Any]) -> str:
    """How to use a chart, read from its spec: hover for tooltips, drag a box where it has a brush.

    The toolkit's charts declare their interactions (tooltips, interval selections); the words
    a person reads about them belong to the page, so they are written here and nowhere else.
    """
    nodes = list(_walk(spec))
    brush = any(isinstance(n.get("select"), (str, dict)) and
                (n["select"] == "interval" or (isinstance(n["select"], dict) and n["select"].get("type") == "interval"))
                for n in nodes if "select" in n)
    tooltip = any("tooltip" in n for n in nodes)
    if brush and tooltip:
        return "Hover a point for its details; drag a box to list the points inside it."
    if brush:
        return "Drag a box to list the points inside it."
    if tooltip:
        return "Hover the chart for exact values."
    return ""


def reply_payload(reply: Reply, link: str = "", open_rows: int = OPEN_ROWS) -> dict[str, Any]:
    """The page's message for one reply: ``{"id", "ok", "html", "charts": [{"id", "spec"}], "drawings": [{"id",
    "kind", "meta", "encoding", "data"}]}`` (a drawing is drawn by the page's own script for its kind).

    ``link`` is the permalink line's HTML (built by the caller, which knows the page's address).
    """
    key = uuid.uuid4().hex[:12]
    parts: list[str] = []
    interpreted = getattr(reply, "interpreted_as", "") or ""
    if getattr(reply, "routed", False) and interpreted:
        because = getattr(reply, "read_because", "") or ""
        why = (f" <details class='read-why'><summary>why</summary>{markdown_html(because)}</details>"
               if because else "")
        parts.append(f"<div class='read-as'>Read as: {line_button(interpreted)}{why}</div>")
    charts: list[dict[str, Any]] = []
    drawings: list[dict[str, Any]] = []
    r = reply.result
    if r is None:
        parts.append(f"<div class='answer'>{markdown_html('⚠️ ' + md_error(reply.error or ''))}</div>")
    else:
        parts.append(f"<div class='answer'>{markdown_html(r.text)}</div>")
        if r.settings.get("map"):  # a corpus map: the page's map.js draws it from the map endpoints
            parts.append(f"<div class='corpus-map' data-map='{html.escape(str(r.settings['map']), quote=True)}'>"
                         "Drawing the map…</div>")
        parts += [f"<div class='warning'>{markdown_html('⚠️ ' + md_error(w))}</div>" for w in r.warnings]
        for index, drawing in enumerate(r.drawings):
            drawing_id = f"d{key}-{index}"
            parts.append(f"<div class='drawing' data-drawing='{drawing_id}' data-kind='{html.escape(drawing.kind)}' "
                         f"aria-label='{html.escape(drawing.name, quote=True)}'>Drawing…</div>")
            drawings.append({"id": drawing_id, **drawing.to_json()})
        for index, chart in enumerate(r.charts):
            chart_id = f"c{key}-{index}"
            spec = chart.chart.to_dict()
            parts.append(f"<div class='chart' data-chart='{chart_id}' title='{html.escape(chart.name, quote=True)}'>"
                         "</div>")
            if hint := chart_hint(spec):
                parts.append(f"<div class='chart-hint'>{hint}</div>")
            charts.append({"id": chart_id, "spec": spec})
        parts += [table_block(t, open_rows, first=i == 0) for i, t in enumerate(r.tables)]
    suggestions = tuple(getattr(reply, "suggestions", ()) or ())
    if suggestions:
        parts.append("<div class='suggestions'>Did you mean: "
                     + " ".join(line_button(s, "line suggestion") for s in suggestions) + "</div>")
    parts.append(footer(reply, link))
    return {"id": key, "ok": reply.ok, "html": "".join(parts), "charts": charts, "drawings": drawings}
