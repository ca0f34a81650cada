"""One file of scored sentence pairs, read safely.

A file is STS-B's own .tsv, or a .csv / .jsonl with ``sentence1``, ``sentence2`` and
``score`` (``genre`` optional); every reader returns a :class:`Pairs` with the columns
``sentence1``, ``sentence2``, ``score`` (float) and ``genre`` (str). A path is resolved only
inside the allowed roots or to exactly the allowed files (:mod:`tools.benchmark.access`
says which, per face).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tools.core.config import Settings
from tools.core.errors import UserError
from tools.core.text import code

COLUMNS = ["sentence1", "sentence2", "score", "genre"]
#: The tabular layouts need these columns; ``genre`` is optional.
REQUIRED = ("sentence1", "sentence2", "score")
#: Gold-score bins for stratified sampling: [0,1), [1,2), [2,3), [3,4), [4,5].
HOW_TO_PASS = (
    "pass a file with `--data FILE` (STS-B's own .tsv, or a .csv / .jsonl with sentence1, sentence2 and score): "
    "upload it on the page, give its path on the command line, or put it in a data folder (ASSISTANT_DATA_DIR)"
)


@dataclass(frozen=True)
class Pairs:
    """Scored sentence pairs and where they came from (a name fit to show, never a server path)."""

    frame: pd.DataFrame
    source: str

# --- reading one file, by layout ---------------------------------------------------------------

def _read_stsb_tsv(text: str, name: str) -> pd.DataFrame:
    """STS-B's layout: genre, file, years, id, score, sentence1, sentence2 [, source1, source2].

    Quoting is off: the sentences hold stray quote characters that a CSV reader would
    treat as field delimiters and so merge lines.
    """
    rows = []
    for number, fields in enumerate(csv.reader(io.StringIO(text), delimiter="\t", quoting=csv.QUOTE_NONE), 1):
        if not fields or all(not f.strip() for f in fields):
            continue
        if len(fields) < 7:
            raise UserError(
                f"Line {number} of {code(name, 40)} has {len(fields)} tab-separated columns; STS-B's layout has 7 "
                "(genre, file, years, id, score, sentence1, sentence2), or use a .csv / .jsonl with "
                "sentence1, sentence2 and score."
            )
        rows.append({"sentence1": fields[5], "sentence2": fields[6], "score": fields[4], "genre": fields[0],
                     "_line": number})
    return pd.DataFrame(rows, columns=[*COLUMNS, "_line"])


def _read_csv(text: str, name: str, **options: Any) -> pd.DataFrame:
    try:
        frame = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False, **options)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, csv.Error) as exc:
        if isinstance(exc, pd.errors.EmptyDataError):
            return pd.DataFrame(columns=[*REQUIRED, "_line"])
        raise UserError(f"{code(name, 40)} is not a readable CSV ({str(exc).splitlines()[0][:80]}); "
                        "write one row per pair under a header sentence1,sentence2,score.") from None
    frame["_line"] = np.arange(len(frame)) + 2  # line 1 is the header
    return frame


def _read_jsonl(text: str, name: str) -> pd.DataFrame:
    records = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            raise UserError(
                f"Line {number} of {code(name, 40)} is not JSON; a .jsonl file holds one object per line, "
                'like {"sentence1": "...", "sentence2": "...", "score": 4.2}.'
            ) from None
        if not isinstance(record, dict):
            raise UserError(f"Line {number} of {code(name, 40)} is not a JSON object with sentence1, sentence2 "
                            "and score.")
        records.append({**record, "_line": number})
    return pd.DataFrame.from_records(records) if records else pd.DataFrame(columns=[*REQUIRED, "_line"])


class Layout(Enum):
    """File layouts, picked by the file's extension."""

    STSB = (".tsv", ".txt")
    CSV = (".csv",)
    JSONL = (".jsonl", ".ndjson")

    @classmethod
    def of(cls, path: Path) -> Layout:
        suffix = path.suffix.lower()
        for layout in cls:
            if suffix in layout.value:
                return layout
        raise UserError(
            f"{code(path.name, 40)} has an unknown file type; use .tsv (STS-B's layout), .csv or .jsonl "
            "with sentence1, sentence2 and score."
        )


_READERS: dict[Layout, Callable[[str, str], pd.DataFrame]] = {
    Layout.STSB: _read_stsb_tsv,
    Layout.CSV: _read_csv,
    Layout.JSONL: _read_jsonl,
}


def _tidy(raw: pd.DataFrame, name: str, settings: Settings) -> pd.DataFrame:
    """Check columns, scores and sentences; return the frame with exactly :data:`COLUMNS`."""
    raw = raw.rename(columns={c: str(c).strip().lower() for c in raw.columns})
    if len(raw) == 0:
        raise UserError(f"{code(name, 40)} holds no sentence pairs; it needs one row per pair with "
                        "sentence1, sentence2 and score.")
    missing = [c for c in REQUIRED if c not in raw.columns]
    if missing:
        raise UserError(
            f"{code(name, 40)} has no column {', '.join(f'`{c}`' for c in missing)}; a CSV or JSONL file needs "
            "the columns sentence1, sentence2 and score."
        )
    scores = pd.to_numeric(raw["score"], errors="coerce")
    bad = scores.isna() | ~np.isfinite(scores.astype(float))
    if bad.any():
        first = int(np.flatnonzero(bad.to_numpy())[0])
        raise UserError(
            f"Line {int(raw['_line'].iloc[first])} of {code(name, 40)} has the score "
            f"{code(str(raw['score'].iloc[first]), 20)}, which is not a number; every score must be a number "
            "(STS-B uses 0 to 5)."
        )
    frame = pd.DataFrame({
        "sentence1": raw["sentence1"].map(_as_text),
        "sentence2": raw["sentence2"].map(_as_text),
        "score": scores.astype(float),
        "genre": raw["genre"].map(_as_text) if "genre" in raw.columns else "unknown",
    })
    frame["genre"] = frame["genre"].replace("", "unknown")
    for column in ("sentence1", "sentence2"):
        empty = frame[column].str.strip() == ""
        if empty.any():
            line = int(raw["_line"].iloc[int(np.flatnonzero(empty.to_numpy())[0])])
            raise UserError(f"Line {line} of {code(name, 40)} has an empty {column}; every pair needs two sentences.")
        long = frame[column].str.len() > settings.max_chars
        if long.any():
            line = int(raw["_line"].iloc[int(np.flatnonzero(long.to_numpy())[0])])
            raise UserError(f"Line {line} of {code(name, 40)} has a {column} over {settings.max_chars:,} characters "
                            "(ASSISTANT_MAX_CHARS); shorten it or remove the row.")
    return frame.reset_index(drop=True)


def _as_text(value: object) -> str:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return ""
    return str(value)


# --- finding a file safely -------------------------------------------------------------------

def resolve_path(raw: str, roots: Sequence[Path], allowed_files: Sequence[Path | str] = ()) -> Path:
    """The file ``raw`` names, if it lies inside one of ``roots`` (after following links) or is an allowed file.

    A relative name is looked up in each root in turn, then among ``allowed_files``
    (a conversation's own uploads) by file name; an absolute path must lie inside a
    root or be one of ``allowed_files``. Anything else is refused, so no one can
    make the server read its own files.
    """
    try:
        return _resolve_path(raw, roots, allowed_files)
    except UserError:
        raise
    except (OSError, ValueError, RuntimeError):  # a NUL byte, a name too long, an unknown ~user
        raise UserError(f"{code(raw, 60)} is not a usable file name; pass the name of a file in a data folder "
                        "(ASSISTANT_DATA_DIR).") from None


def _resolve_path(raw: str, roots: Sequence[Path], allowed_files: Sequence[Path | str]) -> Path:
    uploads = [Path(f).resolve() for f in allowed_files]
    given = Path(raw).expanduser()
    if given.is_absolute():
        target = given.resolve()
        if target in uploads and target.is_file():
            return target
        candidates = [target]
    else:
        candidates = [(root / given).resolve() for root in roots]
        named = [f for f in reversed(uploads) if f.name == raw and f.is_file()]
        if named and not any(c.is_file() and any(c.is_relative_to(r) for r in roots) for c in candidates):
            return named[0]
    if not roots:
        raise UserError(
            f"No data folder is configured, so {code(raw, 60)} cannot be read; set ASSISTANT_DATA_DIR to the "
            "folder that holds your files, or upload the file on the page."
        )
    inside = [c for c in candidates if any(c.is_relative_to(root) for root in roots)]
    if not inside:
        raise UserError(
            f"{code(raw, 60)} is outside the allowed data folders; put the file in a folder named by "
            "ASSISTANT_DATA_DIR (or upload it on the page) and pass its name."
        )
    for candidate in inside:
        if candidate.is_file():
            return candidate
    raise UserError(f"There is no file {code(raw, 60)} in the data folders (ASSISTANT_DATA_DIR); check the name.")


def read_file(path: Path, settings: Settings) -> Pairs:
    """Read a pairs file already known to be allowed, by its layout, within the size limit."""
    layout = Layout.of(path)
    limit = settings.max_upload_mb * 1024 * 1024
    data = b""
    try:
        size = path.stat().st_size
        if size <= limit:
            with path.open("rb") as handle:
                data = handle.read(limit + 1)  # never more than the limit, even if the file grows meanwhile
            size = max(size, len(data))
    except OSError:
        raise UserError(f"{code(path.name, 40)} could not be read on the server; check that the file is "
                        "readable.") from None
    if size > limit:
        raise UserError(
            f"{code(path.name, 40)} is {size / 1024 / 1024:.1f} MB; the limit is {settings.max_upload_mb} MB "
            "(ASSISTANT_MAX_UPLOAD_MB): use a smaller file or --sample from a split."
        )
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise UserError(f"{code(path.name, 40)} is not UTF-8 text; save it as UTF-8 and try again.") from None
    if layout is Layout.STSB and _has_header(text):
        raw = _read_csv(text, path.name, sep="\t", quoting=csv.QUOTE_NONE)
    else:
        raw = _READERS[layout](text, path.name)
    return Pairs(_tidy(raw, path.name, settings), path.name)


def _has_header(text: str) -> bool:
    """A .tsv whose first line names sentence1 / sentence2 / score is a plain table, not STS-B's layout."""
    first = text.split("\n", 1)[0].lower().split("\t")
    return all(c in [f.strip() for f in first] for c in REQUIRED)
