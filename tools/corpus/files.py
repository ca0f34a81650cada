"""Files written so that a crash never leaves half of one under its final name."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import numpy as np


def atomic_write(path: Path, write: Callable[[Any], None], binary: bool = True) -> None:
    """Write ``path`` through ``write(handle)`` to a temporary file beside it, then move it into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        handle: IO[Any]
        with (os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8")) as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def save_npy(path: Path, array: np.ndarray) -> None:
    """``array`` as a .npy file, atomically."""
    atomic_write(path, lambda h: np.save(h, np.ascontiguousarray(array), allow_pickle=False))


def folder_bytes(folder: Path) -> int:
    """Bytes of every file under ``folder``."""
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) if folder.is_dir() else 0
