"""Read a user's file of texts: CSV, TSV, JSONL, Parquet or TXT (one text per line).

The text column is the string column with the longest mean length unless ``column=`` names
one; every other column is kept as metadata. Rows with an empty text are refused, texts over
the character limit are cut, lines that are not UTF-8 are read as Windows-1252 (what Excel saves a CSV
in on Western Windows); each is counted in the :class:`~tools.corpus.facts.ReadReport`. The caller decides
which files a face may read (:mod:`tools.benchmark.access`); this module reads what it is given.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import warnings
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from tools.core.config import Settings
from tools.core.errors import UserError
from tools.core.text import code
from tools.corpus.facts import ReadCorpus, ReadReport

FORMATS = {".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".jsonl": "jsonl", ".ndjson": "jsonl",
           ".parquet": "parquet", ".pq": "parquet", ".txt": "txt", ".text": "txt"}
#: Every reason a row may be refused, so a report lists them all (zeros included).
REASONS = ("empty text", "malformed line", "not JSON", "not a JSON object", "over the row limit")
#: A column counts as numbers (never the text column) when this share of its non-empty values parse as numbers.
NUMERIC_SHARE = 0.9
#: Names the stored rows use for themselves, and what `map --color` paints besides a column, each with what it is
#: (as the load's reply says it): a metadata column of one of these names gets a suffix (``length_1``), so a map can
#: still be coloured by it.
RESERVED = {"id": "numbers the corpus's rows", "text": "is the corpus's texts",
            "cluster": "is what `map --color cluster` paints, the groups of `clusters`",
            "length": "is what `map --color length` paints, the texts' length"}


#: How many characters of a file are looked at for a NUL, which no text file holds.
BINARY_PROBE = 8192


def file_format(path: Path) -> str:
    """The format ``path``'s extension names, or a sentence listing the ones read."""
    found = FORMATS.get(path.suffix.lower())
    if found is None:
        raise UserError(f"{code(path.name, 40)} has an unknown file type; use .csv, .tsv, .jsonl, .parquet or "
                        ".txt (one text per line).")
    return found


def read_bytes(path: Path, settings: Settings) -> bytes:
    """The file's bytes, never more than the corpus size limit (ASSISTANT_CORPUS_MAX_MB)."""
    limit = settings.corpus_max_mb * 1024 * 1024
    try:
        size = path.stat().st_size
        data = b""
        if size <= limit:
            with path.open("rb") as handle:
                data = handle.read(limit + 1)  # never more than the limit, even if the file grows meanwhile
            size = max(size, len(data))
    except OSError:
        raise UserError(f"{code(path.name, 40)} could not be read; check that the file exists and is "
                        "readable.") from None
    if size > limit:
        raise UserError(f"{code(path.name, 40)} is {size / 1024 / 1024:.1f} MB; the limit is "
                        f"{settings.corpus_max_mb} MB "
                        "(ASSISTANT_CORPUS_MAX_MB): split the file or keep fewer columns.")
    return data


#: How a line that is not UTF-8 is read: the encoding Excel saves "CSV" in on Western Windows (its five unused bytes
#: become U+FFFD). A line-by-line guess (charset-normalizer) named Central European cp1250 for "Café crème brûlée"
#: and Cyrillic cp1125 for "€5 for a café": a few words are too few to tell encodings apart.
NOT_UTF8 = "cp1252"


def decode_lines(data: bytes) -> tuple[str, int]:
    """``data`` as text (a UTF-8 BOM dropped; UTF-16 with its BOM, as spreadsheets save "Unicode text", read as
    such) and how many lines were not UTF-8 (read as :data:`NOT_UTF8`; in UTF-16, lines with bytes it cannot read).
    """
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    elif data.startswith((b"\xff\xfe", b"\xfe\xff")):
        text = data.decode("utf-16", errors="replace")
        return text, sum("\ufffd" in line for line in text.splitlines())
    try:
        return data.decode("utf-8"), 0
    except UnicodeDecodeError:
        pass
    lines, bad = [], 0
    for line in data.split(b"\n"):
        try:
            lines.append(line.decode("utf-8"))
        except UnicodeDecodeError:
            lines.append(line.decode(NOT_UTF8, errors="replace"))
            bad += 1
    return "\n".join(lines), bad


def _read_delimited(text: str, sep: str, refused: dict[str, int]) -> pd.DataFrame:
    """CSV (quoted fields allowed) or TSV (no quoting: stray quotes are text); lines with too many fields
    are skipped and counted."""
    quoting = csv.QUOTE_NONE if sep == "\t" else csv.QUOTE_MINIMAL
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            frame = pd.read_csv(io.StringIO(text), sep=sep, dtype=str, keep_default_na=False, quoting=quoting,
                                on_bad_lines="warn", skip_blank_lines=True)
        except pd.errors.EmptyDataError:
            return pd.DataFrame()
        except (pd.errors.ParserError, csv.Error) as exc:
            raise UserError(f"The file is not readable as {'TSV' if sep == chr(9) else 'CSV'} "
                            f"({str(exc).splitlines()[0][:80]}); check its quoting, or save it as JSONL.") from None
    for w in caught:
        refused["malformed line"] += str(w.message).count("Skipping line")
    return frame


def _read_jsonl(text: str, refused: dict[str, int]) -> pd.DataFrame:
    records = []
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            refused["not JSON"] += 1
            continue
        if isinstance(record, dict):
            records.append(record)
        elif isinstance(record, str):
            records.append({"text": record})
        else:
            refused["not a JSON object"] += 1
    frame = pd.DataFrame.from_records(records) if records else pd.DataFrame()
    for column in frame.columns:  # nested values stay readable (and storable) as JSON
        if frame[column].map(lambda v: isinstance(v, (dict, list))).any():
            frame[column] = frame[column].map(lambda v: json.dumps(v, ensure_ascii=False)
                                              if isinstance(v, (dict, list)) else v)
    return frame


def _read_parquet(data: bytes, name: str) -> pd.DataFrame:
    import pyarrow.parquet as pq

    try:
        return pq.read_table(io.BytesIO(data)).to_pandas()
    except Exception as exc:  # pyarrow raises many types for a damaged file
        raise UserError(f"{code(name, 40)} is not a readable Parquet file ({str(exc).splitlines()[0][:80]}).") from None


def _is_text_column(values: pd.Series) -> bool:
    """Strings, not mostly numbers (an id column of digits is not the text)."""
    present = values[values.map(lambda v: isinstance(v, str) and v.strip() != "")]
    if present.empty:
        return False
    numeric = pd.to_numeric(present, errors="coerce").notna().mean()
    return numeric < NUMERIC_SHARE


def _mean_length(values: pd.Series) -> float:
    return float(values.map(lambda v: len(v) if isinstance(v, str) else 0).mean()) if len(values) else 0.0


def pick_column(frame: pd.DataFrame, column: str | None, name: str) -> tuple[str, str, dict[str, float]]:
    """The text column, how it was chosen, and each string column's mean length."""
    columns = [str(c) for c in frame.columns]
    lengths = {str(c): _mean_length(frame[c]) for c in frame.columns if _is_text_column(frame[c])}
    if column is not None:
        if column not in columns:
            matches = [c for c in columns if c.lower() == column.lower()]
            if len(matches) != 1:
                listed = ", ".join(code(c, 30) for c in columns[:20]) + (" ..." if len(columns) > 20 else "")
                raise UserError(f"{code(name, 40)} has no column {code(column, 30)}; its columns are {listed}.")
            column = matches[0]
        return column, "given", lengths
    if not lengths:
        raise UserError(f"{code(name, 40)} has no column of text (every column is empty or numbers); name the "
                        "column with --column, or save one text per line as .txt.")
    best = max(lengths, key=lambda c: lengths[c])
    return best, "only" if len(columns) == 1 else "longest", lengths


def _as_text(value: object) -> str:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return ""
    return value if isinstance(value, str) else str(value)


def free_name(name: str, taken: set[str]) -> str:
    """``name``, or ``name_1`` (then ``name_1_``, ...) when it is taken; the name given is added to ``taken``."""
    new = name if name not in taken else f"{name}_1"
    while new in taken:
        new += "_"
    taken.add(new)
    return new


def clear_of(rows: pd.DataFrame, names: Iterable[str]) -> pd.DataFrame:
    """``rows`` (a corpus's id, text and metadata) with each metadata column named like one of ``names``, the columns
    a table puts beside them (``rank``, ``score``), renamed as a file's own ``id`` is at load (``score_1``)."""
    clashing = [c for c in rows.columns if c in set(names)]
    taken = set(names) | set(rows.columns)
    return rows.rename(columns={c: free_name(c, taken) for c in clashing}) if clashing else rows


def _metadata(frame: pd.DataFrame, text_column: str) -> pd.DataFrame:
    """The other columns, with names that cannot clash with ``id``/``text`` and values Parquet can store."""
    meta = frame.drop(columns=[text_column])
    taken = set(RESERVED)
    meta.columns = [free_name(str(c), taken) for c in meta.columns]
    for c in meta.columns:
        if meta[c].dtype == object:  # mixed types (JSON: 1 and "a") are stored as text
            kinds = {type(v) for v in meta[c] if v is not None and not (isinstance(v, float) and np.isnan(v))}
            if len(kinds) > 1 or (kinds and not kinds <= {str}):
                meta[c] = meta[c].map(lambda v: None if v is None else str(v))
    return meta


def read_texts(path: Path | str, settings: Settings, column: str | None = None, name: str | None = None) -> ReadCorpus:
    """Read one file of texts already known to be allowed (see :mod:`tools.benchmark.access`).

    Args:
        path: the file; its extension picks the format.
        settings: the size, row and character limits (ASSISTANT_CORPUS_MAX_MB / _MAX_ROWS / _MAX_CHARS).
        column: the text column; default: the string column with the longest mean length.
        name: the file's name to show (an upload's original name); default: ``path``'s name.
    """
    path = Path(path)
    shown = name or path.name
    fmt = file_format(path)
    data = read_bytes(path, settings)
    digest = hashlib.sha256(data).hexdigest()
    refused = dict.fromkeys(REASONS, 0)
    bad_lines = 0
    if fmt == "parquet":
        frame = _read_parquet(data, shown)
    else:
        text, bad_lines = decode_lines(data)
        if "\x00" in text[:BINARY_PROBE]:
            raise UserError(f"{code(shown, 40)} is not a text file (it holds binary bytes: a spreadsheet, an archive "
                            "or an image under another name?); save your texts as CSV, TSV, JSONL, Parquet or TXT.")
        if fmt == "txt":
            frame = pd.DataFrame({"text": text.splitlines()})
            if column not in (None, "text"):
                raise UserError(f"{code(shown, 40)} is a .txt file: one text per line, in the column `text`; "
                                "drop --column.")
        elif fmt == "jsonl":
            frame = _read_jsonl(text, refused)
        else:
            frame = _read_delimited(text, "\t" if fmt == "tsv" else ",", refused)
    frame.columns = [str(c) for c in frame.columns]
    if len(frame) == 0:
        raise UserError(f"{code(shown, 40)} holds no rows; it needs one text per row (or per line for .txt).")
    rows_read = len(frame)
    text_column, chosen_by, lengths = pick_column(frame, column, shown)
    if fmt == "txt":
        chosen_by = "only"
    texts = frame[text_column].map(_as_text)
    keep = texts.str.strip() != ""
    refused["empty text"] = int((~keep).sum())
    meta = _metadata(frame, text_column)[keep.to_numpy()].reset_index(drop=True)
    texts = texts[keep].reset_index(drop=True)
    if len(texts) > settings.corpus_max_rows:
        refused["over the row limit"] = len(texts) - settings.corpus_max_rows
        texts, meta = texts[: settings.corpus_max_rows], meta.iloc[: settings.corpus_max_rows]
    if texts.empty:
        raise UserError(f"Every row of {code(shown, 40)} has an empty {code(text_column, 30)}; pick the text column "
                        "with --column.")
    long = texts.str.len() > settings.corpus_max_chars
    texts = texts.where(~long, texts.str.slice(0, settings.corpus_max_chars))
    out = pd.concat([pd.DataFrame({"text": texts.astype(str)}), meta.reset_index(drop=True)], axis=1)
    report = ReadReport(source=shown, file_format=fmt, sha256=digest, size_bytes=len(data), rows_read=rows_read,
                        rows_kept=len(out), text_column=text_column, chosen_by=chosen_by, mean_lengths=lengths,
                        metadata_columns=tuple(meta.columns), refused=refused, truncated=int(long.sum()),
                        max_chars=settings.corpus_max_chars, undecodable_lines=bad_lines,
                        renamed=tuple((str(c), n) for c, n in zip(frame.columns.drop(text_column), meta.columns)
                                      if str(c) != n))
    return ReadCorpus(out, report)
