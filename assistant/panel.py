"""The side panel: the latest reply's full table (sortable) and its downloads.

Both come back with a reloaded conversation: the downloads are kept in the conversation's folder
(:meth:`~assistant.conversations.Conversations.keep_downloads`) and the table is read back from the
reply's JSON download, where every table is kept exactly. The page (``app``) shows a :class:`Panel`.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from assistant.conversations import Conversations
from assistant.dispatch import Reply
from assistant.render.tables import shown
from assistant.render.terminal import write_downloads
from assistant.session import Session

#: What the table shows before any reply, and its label.
EMPTY = pd.DataFrame({"the latest reply's table shows here": []})
TABLE_LABEL = "Full table of the latest reply (click a header to sort)"


@dataclass(frozen=True)
class Panel:
    """What the side panel shows: a table under its label (floats rounded as the replies show them) and files."""

    label: str
    table: pd.DataFrame
    files: list[str]


def side_panel(reply: Reply, session: Session, conversations: Conversations) -> Panel | None:
    """The panel for ``reply`` (None: a reply without a result leaves it as it was). Its downloads are written into
    the conversation's downloads folder (which holds only the latest reply's files: Gradio has served copies of older
    ones) and kept with the conversation."""
    if reply.result is None:
        return None
    r = reply.result
    paths = write_downloads(r, session.downloads_dir(fresh=True))
    # write_downloads writes the tables' CSVs first, then the reply's JSON
    conversations.keep_downloads(session, paths, {"json": len(r.tables)})
    first = r.tables[0] if r.tables else None
    return _panel(first.name if first is not None else None, first.frame if first is not None else None, paths)


def restored_panel(session: Session, conversations: Conversations) -> Panel:
    """The panel as the conversation's latest reply with a result left it, for a page that opens that conversation
    again; the empty panel when nothing was kept."""
    kept = conversations.kept_downloads(session.key)
    if kept is None:
        return Panel(TABLE_LABEL, EMPTY, [])
    if "too_large" in kept.meta:
        return Panel(f"The latest reply's table and downloads ({kept.meta['too_large'] / 2**20:.0f} MB) were too large "
                     "to keep for a reload", pd.DataFrame({"run the command again to see its table": []}), [])
    folder = session.downloads_dir(fresh=True)
    paths = [str(shutil.copyfile(p, folder / p.name)) for p in kept.paths]  # where Gradio may serve them from
    index = kept.meta.get("json")
    json_path = kept.paths[index] if isinstance(index, int) and 0 <= index < len(kept.paths) else None
    return _panel(*_first_table(json_path), paths)


def _panel(name: str | None, frame: pd.DataFrame | None, files: list[str]) -> Panel:
    if frame is None:  # an empty frame, not a blank grid with columns 1 2 3
        return Panel("The latest reply has no table", pd.DataFrame({"this reply has no table": []}), files)
    return Panel(f"Full table: {name} (click a header to sort)", shown(frame), files)


def _first_table(path: Path | None) -> tuple[str | None, pd.DataFrame | None]:
    """The first table of a reply's JSON download (its exact values), or (None, None) when it has none."""
    if path is None:
        return None, None
    try:
        tables = json.loads(path.read_text(encoding="utf-8")).get("tables") or []
    except (OSError, ValueError):
        return None, None
    if not tables:
        return None, None
    first = tables[0]
    return str(first.get("name", "")), pd.DataFrame(first.get("rows", []), columns=first.get("columns", []))
