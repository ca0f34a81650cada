"""Folders of files kept for later processes (ONNX exports, routing indexes), bounded by use.

Each kept entry is named by a key of what it was made from, so a moved model, a new library or a new clone
makes a new one and the old one is never read again. :func:`used` dates an entry when a process takes it, and
:func:`prune` (called when a new one is made) removes the least recently used beyond a count, so such entries
do not fill a disk: a machine that served many clones held 198 exports (6.1 GB) and 101 indexes (1.3 GB).
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

#: An entry used more recently than this is never removed, whatever the count: a process beside this one may be
#: about to open it.
IDLE_S = 3600.0


def used(entry: Path) -> None:
    """Date ``entry`` (a file or a folder) now, so that :func:`prune` counts it as recently used."""
    try:
        os.utime(entry)
    except OSError:
        pass


def prune(folder: Path, keep: int, pattern: str = "*", idle_s: float = IDLE_S) -> list[Path]:
    """Remove the entries of ``folder`` matching ``pattern`` beyond the ``keep`` most recently used, sparing any
    used within ``idle_s`` seconds; the entries removed. Nothing is raised: a cache that cannot be pruned stays."""
    try:
        entries = sorted(folder.glob(pattern), key=lambda p: p.stat().st_mtime, reverse=True)
    except OSError:
        return []
    removed = []
    now = time.time()
    for entry in entries[keep:]:
        try:
            if now - entry.stat().st_mtime < idle_s:
                continue
            if entry.is_dir():
                shutil.rmtree(entry)
            else:
                entry.unlink()
        except OSError:
            continue
        removed.append(entry)
    return removed
