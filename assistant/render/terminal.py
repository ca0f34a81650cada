"""Result -> terminal text and download files (the page's replies are written by ``assistant.render.html``)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from assistant.dispatch import Reply
from tools.core.results import Result, csv_text


def terminal_text(reply: Reply, max_rows: int = 40) -> str:
    """Readable text for a terminal: summary, warnings, tables."""
    because = f" ({reply.read_because})" if reply.read_because else ""
    read_as = [f"read as: {reply.interpreted_as}{because}"] if reply.routed and reply.interpreted_as else []
    offered = [f"  try: {line}" for line in reply.suggestions]
    if reply.result is None:
        return "\n".join([*read_as, f"error: {reply.error}", *offered])
    r = reply.result
    lines = [*read_as, r.text]
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
        path = folder / Path(artifact.filename).name
        path.write_bytes(artifact.data)
        paths.append(str(path))
    return paths
