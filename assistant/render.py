"""Result -> chat messages, terminal text, download files. User text is always escaped."""

from __future__ import annotations

import html
import json
import re
import tempfile
from pathlib import Path
from typing import Any

import pandas as pd

from assistant.dispatch import Reply
from tools.results import Result
from tools.text import md

CHAT_ROWS = 20


def table_html(frame: pd.DataFrame, max_rows: int = CHAT_ROWS) -> str:
    """An escaped HTML table of at most ``max_rows`` rows, saying how many were left out."""
    shown = frame.head(max_rows)
    body = shown.to_html(index=False, escape=True, border=0, classes="reply-table",
                         float_format=lambda v: f"{v:.4f}")
    note = ""
    if len(frame) > max_rows:
        note = (f"<p class='reply-note'>Showing {max_rows} of {len(frame):,} rows; "
                "the full table is in the side panel and the downloads.</p>")
    return f"<div class='reply-table-wrap'>{body}{note}</div>"


def reply_markdown(reply: Reply) -> str:
    """The reply's text part: the summary, its warnings and the footer that reproduces it."""
    if reply.result is None:
        return f"⚠️ {md_error(reply.error or '')}"
    r = reply.result
    parts = [r.text]
    parts += [f"⚠️ {md_error(w)}" for w in r.warnings]
    choices = ", ".join(f"{k}={v}" for k, v in r.settings.items() if v not in (None, False, ""))
    footer = f"<sub>{r.command} · {md(r.model) if r.model else 'no model'}"
    footer += f" · {md(choices)}" if choices else ""
    footer += f" · {r.elapsed_ms:,.0f} ms</sub>"
    parts.append(footer)
    return "\n\n".join(parts)


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


def chat_content(reply: Reply) -> list[Any]:
    """The parts of an assistant message: markdown, then each chart, then each table."""
    import gradio as gr

    parts: list[Any] = [reply_markdown(reply)]
    if reply.result is None:
        return parts
    for chart in reply.result.charts:
        parts.append(gr.Plot(chart.chart, label=chart.name, show_label=False))
    for table in reply.result.tables:
        caption = f"<p class='reply-caption'><b>{html.escape(table.name)}</b></p>"
        parts.append(gr.HTML(caption + table_html(table.frame)))
    return parts


def terminal_text(reply: Reply, max_rows: int = 40) -> str:
    """Readable text for a terminal: summary, warnings, tables."""
    if reply.result is None:
        return f"error: {reply.error}"
    r = reply.result
    lines = [r.text]
    lines += [f"warning: {w}" for w in r.warnings]
    with pd.option_context("display.width", 160, "display.max_columns", 20, "display.max_colwidth", 48):
        for t in r.tables:
            lines += ["", f"[{t.name}]", t.frame.head(max_rows).to_string(index=False)]
            if len(t.frame) > max_rows:
                lines.append(f"... {len(t.frame) - max_rows:,} more rows (use --json for all)")
    for c in r.charts:
        lines.append(f"[chart: {c.name}] (use --json for its Vega-Lite spec)")
    lines.append(f"({r.command} · {r.model or 'no model'} · {r.elapsed_ms:,.0f} ms)")
    return "\n".join(lines)


def write_downloads(result: Result) -> list[str]:
    """Write the result's tables (CSV), its JSON and its artifacts into a fresh temporary folder.

    File names come from the command and table names in the code, never from user text.
    """
    folder = Path(tempfile.mkdtemp(prefix="assistant-"))
    paths: list[str] = []
    for index, table in enumerate(result.tables):
        safe = "".join(ch if ch.isalnum() else "-" for ch in table.name).strip("-") or f"table{index}"
        path = folder / f"{result.command}-{index + 1}-{safe}.csv"
        table.frame.to_csv(path, index=False)
        paths.append(str(path))
    path = folder / f"{result.command}.json"
    path.write_text(json.dumps(result.to_json(), indent=1))
    paths.append(str(path))
    for artifact in result.artifacts:
        path = folder / Path(artifact.filename).name
        path.write_bytes(artifact.data)
        paths.append(str(path))
    return paths
