"""Result -> terminal text and download files (the page's replies are written by ``assistant.render.html``)."""

from __future__ import annotations

import html
import json
import re
import shutil
import textwrap
from pathlib import Path

import pandas as pd

from assistant.dispatch import Reply
from tools.core.results import Result, csv_text

#: What a reply's markdown marks: an escaped character, an inline code span (its fence one backtick more than the
#: longest run it holds, its text literal), bold.
_MARKED = re.compile(r"\\([\\`*_{}\[\]()#+!|~>-])|(`+).+?\2|\*\*", re.S)


def terminal_text(reply: Reply, max_rows: int = 40, width: int | None = None) -> str:
    """Readable text for a terminal of ``width`` columns (None: this terminal's, or 120 when piped): summary,
    warnings, tables."""
    width = width or shutil.get_terminal_size((120, 24)).columns
    because = f" ({reply.read_because})" if reply.read_because else ""
    read_as = [f"read as: {reply.interpreted_as}{because}"] if reply.routed and reply.interpreted_as else []
    offered = [f"  try: {line}" for line in reply.suggestions]
    if reply.result is None:
        return "\n".join([*read_as, f"error: {plain(reply.error)}", *offered])
    r = reply.result
    lines = [*read_as, plain(r.text)]
    lines += [f"warning: {plain(w)}" for w in r.warnings]
    for t in r.tables:
        lines += ["", f"[{t.name}]", table_text(t.frame.head(max_rows), width)]
        if len(t.frame) > max_rows:
            lines.append(f"... {len(t.frame) - max_rows:,} more rows (use --json for all)")
    for c in r.charts:
        lines.append(f"[chart: {c.name}] (use --json for its Vega-Lite spec)")
    lines.append(f"({r.command} · {r.model or 'no model'} · {r.elapsed_ms:,.0f} ms)")
    return "\n".join(lines)


def plain(markdown: str) -> str:
    """A reply's markdown as a terminal shows it: no bold stars, no escapes, no HTML entities (``my\\-notes`` is
    ``my-notes``); code spans stay as they are, backticks and all, since their text is literal already."""
    out, at = [], 0
    for m in _MARKED.finditer(markdown):
        out.append(html.unescape(markdown[at:m.start()]))
        out.append(m.group(1) or (m.group(0) if m.group(2) else ""))
        at = m.end()
    out.append(html.unescape(markdown[at:]))
    return "".join(out)


def table_text(frame: pd.DataFrame, width: int) -> str:
    """``frame`` as aligned columns when they fit in ``width``; columns of numbers too many for it continue below
    (pandas' own wrapping); a table with long texts is written a row at a time instead, one ``column: value``
    line each, long values wrapped (a `help` table's usages, a corpus's texts)."""
    text = frame.to_string(index=False)
    if max((len(line) for line in text.splitlines()), default=0) <= width:
        return text
    texts = [c for c in frame.columns if frame[c].dtype == object or pd.api.types.is_string_dtype(frame[c])]
    if not any(frame[c].astype(str).str.len().max() > width // 3 for c in texts):
        return frame.to_string(index=False, line_width=width)
    names = [str(c) for c in frame.columns]
    indent = max(len(n) for n in names) + 2
    blocks = []
    for row in frame.itertuples(index=False):
        lines = []
        for name, value in zip(names, row, strict=True):
            shown = f"{value:.6g}" if isinstance(value, float) else str(value)
            wrapped = textwrap.wrap(shown, max(20, width - indent)) or [""]
            lines += [f"{name:>{indent - 2}}: {wrapped[0]}", *(" " * indent + w for w in wrapped[1:])]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def write_downloads(result: Result, folder: Path | str) -> list[str]:
    """Write the result's tables (CSV, safe to open in a spreadsheet), its JSON and its artifacts into ``folder``.

    ``folder`` is the conversation's own (``Session.downloads_dir``), deleted with it.
    File names come from the command and table names in the code, never from user text.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    paths: list[str] = []
    for index, table in enumerate(result.tables):
        safe = "".join(ch if ch.isalnum() else "-" for ch in table.name).strip("-") or f"table{index}"
        path = folder / f"{result.command}-{index + 1}-{safe}.csv"
        path.write_text(csv_text(table.frame), encoding="utf-8")
        paths.append(str(path))
    path = folder / f"{result.command}.json"
    path.write_text(json.dumps(result.to_json(), indent=1))
    paths.append(str(path))
    for artifact in result.artifacts:
        path = _free(folder / Path(artifact.filename).name, paths)
        path.write_bytes(artifact.data)
        paths.append(str(path))
    return paths


def _free(path: Path, taken: list[str]) -> Path:
    """``path``, or ``name-2.ext``, ``name-3.ext``... when a file of this reply has that name already (an artifact
    called as the reply's JSON would have overwritten it, and been listed twice)."""
    free, n = path, 1
    while str(free) in taken:
        n += 1
        free = path.with_name(f"{path.stem}-{n}{path.suffix}")
    return free
