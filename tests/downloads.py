"""What a reply offers as downloads, written as every face writes them (the page, the CLI, an export)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from assistant.render.terminal import write_downloads
from tools.core.results import Result


def csv_names(result: Result) -> list[str]:
    """The CSV files among a reply's downloads, in order: each of its tables, then any CSV among its artifacts (a
    table offered twice would show here twice, under two names)."""
    with tempfile.TemporaryDirectory() as folder:
        return [Path(p).name for p in write_downloads(result, folder) if p.endswith(".csv")]
