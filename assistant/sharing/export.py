"""Export a conversation: Markdown in a zip, or one self-contained HTML file.

- Markdown: ``conversation.md`` (each command, its summary, its tables as pipe
  tables), each chart as a Vega-Lite JSON file under ``charts/`` and each table in
  full as CSV under ``tables/``.
- HTML: one file that opens offline: no script, no CDN; charts are PNG images
  rendered by vl-convert and embedded as data URIs (drawings, such as every attention
  head, as PNG images too), tables are escaped HTML.

Everything is built in memory; the caller decides where the bytes go. File names
inside the exports come from the turn number and the code's own chart and table
names, never from user text.
"""

from __future__ import annotations

import base64
import html
import io
import json
import logging
import re
import zipfile
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import pandas as pd
from markdown_it import MarkdownIt

from assistant.render.raster import drawing_png
from assistant.render.tables import table_html
from assistant.session import FullTurn as Turn  # a turn with its full result (sharing.full_turns)
from assistant.sharing.links import permalink
from tools.core.results import Artifact, Chart, Drawing, Result, Table, csv_text, json_value
from tools.core.text import code, md

log = logging.getLogger("assistant.sharing.export")

#: Rows of one table written into conversation.md / the HTML page (the zip's CSV files hold every row).
MD_ROWS = 200
HTML_ROWS = 500
TITLE = "Embedding assistant conversation"

_MARKDOWN = MarkdownIt("commonmark", {"html": False}).enable("table")

CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; max-width: 1100px; margin: 2em auto;
       padding: 0 1em; color: #1f2328; line-height: 1.45; }
h1 { font-size: 1.5em; } h2 { font-size: 1.15em; margin-top: 2em; border-bottom: 1px solid #d0d7de; }
h2 code, .meta code { background: #f6f8fa; padding: 1px 4px; border-radius: 4px; }
.meta { color: #57606a; font-size: 0.85em; }
.warning { color: #9a6700; }
figure { margin: 1em 0; } figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption, .caption { font-size: 0.85em; font-weight: 600; margin: 0.8em 0 0.2em; }
.table-wrap { max-height: 480px; overflow: auto; }
table.data { border-collapse: collapse; font-size: 0.85em; }
table.data th, table.data td { padding: 2px 8px; border-bottom: 1px solid #ddd; text-align: left; }
"""


# --- Markdown zip -----------------------------------------------------------------------

def markdown_zip(turns: Sequence[Turn], base: str = "", when: datetime | None = None) -> bytes:
    """``conversation.md`` with every chart as Vega-Lite JSON and every table as CSV, zipped."""
    buffer = io.BytesIO()
    lines = [f"# {TITLE}", "", _header(turns, when), ""]
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for number, turn in enumerate(turns, start=1):
            r = turn.result
            lines += [f"## {number}. {code(turn.line, 500)}", "", _meta_markdown(turn, base), "", r.text, ""]
            lines += [f"> ⚠️ {md(w)}" for w in r.warnings]
            for index, table in enumerate(r.tables, start=1):
                name = f"tables/{_stem(number, index, table.name)}.csv"
                archive.writestr(name, csv_text(table.frame))
                lines += ["", f"**{md(table.name)}** ({len(table.frame):,} rows; all of them in [{name}]({name}))",
                          "", pipe_table(table.frame, MD_ROWS), ""]
            for index, chart in enumerate(r.charts, start=1):
                name = f"charts/{_stem(number, index, chart.name)}.vl.json"
                archive.writestr(name, json.dumps(chart.chart.to_dict(), indent=1, default=json_value))
                lines += ["", f"Chart **{md(chart.name)}**: Vega-Lite spec in [{name}]({name}) "
                          "(open it in the Vega editor, or `vl-convert vl2png`).", ""]
            for index, drawing in enumerate(r.drawings, start=len(r.charts) + 1):
                name = f"charts/{_stem(number, index, drawing.name)}.png"
                archive.writestr(name, drawing_png(drawing))
                lines += ["", f"![{md(drawing.name)}]({name})", "", md(drawing_caption(drawing)), ""]
        archive.writestr("conversation.md", "\n".join(lines).rstrip() + "\n")
    return buffer.getvalue()


def pipe_table(frame: pd.DataFrame, max_rows: int = MD_ROWS) -> str:
    """A Markdown pipe table: every cell escaped (user text is data), at most ``max_rows`` rows."""
    shown = frame.head(max_rows)
    head = "| " + " | ".join(md(str(c)) for c in shown.columns) + " |"
    rule = "|" + "|".join("---" for _ in shown.columns) + "|"
    body = ["| " + " | ".join(_cell(v) for v in row) + " |" for row in shown.itertuples(index=False)]
    note = ["", f"({max_rows:,} of {len(frame):,} rows shown; the CSV file holds every row.)"] \
        if len(frame) > max_rows else []
    return "\n".join([head, rule, *body, *note])


def _cell(value: Any) -> str:
    value = json_value(value)
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.6g}"
    return md(str(value))


# --- self-contained HTML ----------------------------------------------------------------

def html_page(turns: Sequence[Turn], base: str = "", when: datetime | None = None) -> str:
    """One HTML file that opens offline: summaries, tables as HTML, charts as embedded PNG images."""
    parts = ["<!doctype html><html lang='en'><head><meta charset='utf-8'>",
             "<meta name='viewport' content='width=device-width, initial-scale=1'>",
             f"<title>{TITLE}</title><style>{CSS}</style></head><body>",
             f"<h1>{TITLE}</h1>", f"<p class='meta'>{_MARKDOWN.renderInline(_header(turns, when))}</p>"]
    for number, turn in enumerate(turns, start=1):
        r = turn.result
        parts.append(f"<section class='turn' id='turn-{number}'>")
        parts.append(f"<h2>{number}. <code>{html.escape(turn.line)}</code></h2>")
        parts.append(f"<p class='meta'>{_MARKDOWN.renderInline(_meta_markdown(turn, base))}</p>")
        parts.append(_MARKDOWN.render(r.text))
        parts += [f"<p class='warning'>⚠️ {html.escape(w)}</p>" for w in r.warnings]
        for drawing in r.drawings:
            parts.append(drawing_figure(drawing))
        for chart in r.charts:
            parts.append(chart_figure(chart))
        for table in r.tables:
            parts.append(table_block(table))
        parts.append("</section>")
    parts.append("</body></html>")
    return "\n".join(parts)


def chart_png(chart: Chart, scale: float = 1.0) -> bytes:
    """The chart drawn as PNG by vl-convert (no browser, no network)."""
    import vl_convert

    return vl_convert.vegalite_to_png(chart.chart.to_dict(), scale=scale)


def chart_figure(chart: Chart) -> str:
    """A ``<figure>`` with the chart as a data-URI PNG, or a sentence when it cannot be drawn."""
    name = html.escape(chart.name)
    try:
        data = base64.b64encode(chart_png(chart)).decode("ascii")
    except Exception:  # a chart vl-convert cannot draw must not lose the rest of the export
        log.exception("could not draw chart %r", chart.name)
        return f"<p class='warning'>The chart {name} could not be drawn as an image; the tables hold its numbers.</p>"
    return (f"<figure class='chart'><figcaption>{name}</figcaption>"
            f"<img alt='chart: {name}' src='data:image/png;base64,{data}'></figure>")


def drawing_caption(drawing: Drawing) -> str:
    """What a drawing's image shows, from its meta (``attention-heads``: which layers and heads, in what order)."""
    meta = drawing.meta
    if drawing.kind != "attention-heads":
        return str(meta.get("title", drawing.name))
    layers, heads = meta["layers"], meta["heads"]
    span = "every token" if meta["block"] == 1 else f"blocks of {meta['block']} tokens"
    return (f"{meta['title']}: rows are layers {layers[0]}–{layers[-1]}, columns heads {heads[0]}–{heads[-1]}; "
            f"in each map queries are rows and keys columns, {span} ({len(meta['tokens'])} rows), weight 0 dark "
            "purple to 1 yellow.")


def drawing_figure(drawing: Drawing) -> str:
    """A ``<figure>`` with the drawing as a data-URI PNG, or a sentence when it cannot be drawn."""
    name = html.escape(drawing.name)
    try:
        data = base64.b64encode(drawing_png(drawing)).decode("ascii")
    except Exception:  # a drawing that cannot be an image must not lose the rest of the export
        log.exception("could not draw %r", drawing.name)
        return f"<p class='warning'>The drawing {name} could not be made an image; the tables hold its numbers.</p>"
    return (f"<figure class='chart'><figcaption>{html.escape(drawing_caption(drawing))}</figcaption>"
            f"<img alt='drawing: {name}' src='data:image/png;base64,{data}'></figure>")


def table_block(table: Table, max_rows: int = HTML_ROWS) -> str:
    """An escaped HTML table, at most ``max_rows`` rows, saying how many were left out."""
    frame = table.frame
    body = table_html(frame.head(max_rows), "data", exact=True)
    note = (f"<p class='meta'>{max_rows:,} of {len(frame):,} rows shown; the Markdown export's CSV holds "
            "every row.</p>") if len(frame) > max_rows else ""
    return f"<p class='caption'>{html.escape(table.name)}</p><div class='table-wrap'>{body}</div>{note}"


# --- the `export` command's reply --------------------------------------------------------

#: What `export --format` can produce: format -> (file name, media type, builder).
FORMATS = {
    "markdown": ("conversation-markdown.zip", "application/zip", markdown_zip),
    "html": ("conversation.html", "text/html", lambda turns, base: html_page(turns, base).encode("utf-8")),
}


def export_artifacts(turns: Sequence[Turn], formats: Sequence[str], base: str = "") -> list[Artifact]:
    """The export files, in memory."""
    out = []
    for fmt in formats:
        filename, media_type, build = FORMATS[fmt]
        out.append(Artifact(filename, build(turns, base), media_type))
    return out


def export_result(turns: Sequence[Turn], formats: Sequence[str], base: str = "") -> Result:
    """The `export` reply: the files as downloads, and a table naming them."""
    artifacts = export_artifacts(turns, formats, base)
    charts = sum(len(t.result.charts) for t in turns)
    tables = sum(len(t.result.tables) for t in turns)
    frame = pd.DataFrame([{"file": a.filename, "format": a.media_type, "bytes": len(a.data)} for a in artifacts])
    text = (f"Exported this conversation's {len(turns)} answered command{'s' if len(turns) != 1 else ''} "
            f"({tables} tables, {charts} charts) as {' and '.join(formats)}: the files are in the downloads. "
            "The HTML file opens offline (charts as images); the zip holds Markdown, Vega-Lite JSON and CSV.")
    return Result("export", text, [Table("exported files", frame)], settings={"format": ",".join(formats)},
                  artifacts=artifacts)


# --- shared pieces ----------------------------------------------------------------------

def _header(turns: Sequence[Turn], when: datetime | None) -> str:
    stamp = (when or datetime.now(UTC)).strftime("%Y-%m-%d %H:%M UTC")
    return f"Exported {stamp}; {len(turns)} answered command{'s' if len(turns) != 1 else ''}."


def _meta_markdown(turn: Turn, base: str) -> str:
    r = turn.result
    choices = ", ".join(f"{k}={v}" for k, v in r.settings.items() if v not in (None, False, ""))
    parts = [md(r.model) if r.model else "no model"]
    if choices:
        parts.append(md(choices))
    parts.append(f"{r.elapsed_ms:,.0f} ms")
    if base:  # a relative link means nothing in a file opened from disk
        parts.append(f"[link to this answer]({permalink(base, turn.line, turn.model)})")
    return " · ".join(parts)


def _stem(number: int, index: int, name: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:40] or "part"
    return f"{number:02d}-{index}-{slug}"
