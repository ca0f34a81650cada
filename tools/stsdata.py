"""Sentence-pair data for the STS benchmark: safe loading from the data folders, and sampling.

Every loader returns a :class:`Pairs` whose frame has the columns ``sentence1``,
``sentence2``, ``score`` (float) and ``genre`` (str). On the web faces files are only
read from inside the configured data folders (``ASSISTANT_DATA_DIR``), or exactly the
files the caller allows (this conversation's uploads), never from anywhere else on the
server; on the command line the user's own paths are read too (:mod:`tools.access`).
The named STS-B splits come from a data folder, else from the ``datasets`` library
(``sentence-transformers/stsb``) where the hub is reachable.
"""

from __future__ import annotations

import csv
import io
import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tools.access import WEB, DataAccess
from tools.config import Settings
from tools.errors import UserError
from tools.text import code

log = logging.getLogger(__name__)

COLUMNS = ["sentence1", "sentence2", "score", "genre"]
#: The tabular layouts need these columns; ``genre`` is optional.
REQUIRED = ("sentence1", "sentence2", "score")
#: Gold-score bins for stratified sampling: [0,1), [1,2), [2,3), [3,4), [4,5].
BIN_EDGES = (0.0, 1.0, 2.0, 3.0, 4.0)
HOW_TO_PASS = (
    "pass a file with `--data FILE` (STS-B's own .tsv, or a .csv / .jsonl with sentence1, sentence2 and score): "
    "upload it on the page, give its path on the command line, or put it in a data folder (ASSISTANT_DATA_DIR)"
)


@dataclass(frozen=True)
class Pairs:
    """Scored sentence pairs and where they came from (a name fit to show, never a server path)."""

    frame: pd.DataFrame
    source: str


class Split(str, Enum):
    """The STS-B splits the command knows by name."""

    DEV = "stsb-dev"
    TEST = "stsb-test"
    TRAIN = "stsb-train"

    @property
    def filename(self) -> str:
        return {"stsb-dev": "sts-dev.tsv", "stsb-test": "sts-test.tsv", "stsb-train": "sts-train.tsv"}[self.value]

    @property
    def hf_split(self) -> str:
        return {"stsb-dev": "validation", "stsb-test": "test", "stsb-train": "train"}[self.value]


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
            raise UserError(f"Line {number} of {code(name, 40)} is not a JSON object with sentence1, sentence2 and score.")
        records.append({**record, "_line": number})
    return pd.DataFrame.from_records(records) if records else pd.DataFrame(columns=[*REQUIRED, "_line"])


class Layout(Enum):
    """File layouts, picked by the file's extension."""

    STSB = (".tsv", ".txt")
    CSV = (".csv",)
    JSONL = (".jsonl", ".ndjson")

    @classmethod
    def of(cls, path: Path) -> "Layout":
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
        raise UserError(f"{code(path.name, 40)} could not be read on the server; check that the file is readable.") from None
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


# --- the named splits ----------------------------------------------------------------------------

def load_split(split: Split, settings: Settings) -> Pairs:
    """STS-B's ``split`` from a data folder; else the Hugging Face dataset when reachable; else a sentence."""
    for root in settings.data_dir_paths:
        path = root / split.filename
        if path.is_file():
            pairs = read_file(path, settings)
            return Pairs(pairs.frame, split.value)
    try:
        import datasets  # a Space has it; looked for first so that the reply can say it is missing
    except ImportError:
        reason = "the `datasets` library is not installed"
    else:
        del datasets  # from_datasets imports it where it is used
        if hub_offline():
            reason = "the Hugging Face hub is switched off (HF_HUB_OFFLINE)"
        elif not hub_reachable():  # `datasets` itself would retry for about 20 s before giving up
            reason = "the Hugging Face hub cannot be reached from here"
        else:
            try:
                return from_datasets(split)
            except Exception:  # the hub went away meanwhile, or the dataset moved
                log.info("loading %s from %s failed", split.value, HF_DATASET, exc_info=True)
                reason = f"{HF_DATASET} could not be loaded from the Hugging Face hub"
    raise UserError(
        f"No {split.filename} in the data folders and {reason}, so there is no {split.value} here; "
        f"{HOW_TO_PASS}."
    )


#: The STS-B copy on the Hugging Face hub (scores scaled to 0-1; splits train / validation / test).
HF_DATASET = "sentence-transformers/stsb"
#: Seconds to wait for the hub's address and a connection before saying it cannot be reached.
PROBE_TIMEOUT_S = 3.0


def hub_offline() -> bool:
    """True when the user switched the hub off (``HF_HUB_OFFLINE=1``), as huggingface_hub reads it."""
    from huggingface_hub import constants

    return bool(constants.HF_HUB_OFFLINE)


def hub_reachable(timeout: float = PROBE_TIMEOUT_S) -> bool:
    """Whether a TCP connection to the hub's endpoint opens within ``timeout`` seconds.

    ``datasets`` retries a failed request for about 20 s; this probe answers "no" at once
    where there is no network (the name does not resolve) and within ``timeout`` where
    packets are dropped. The name lookup runs in a worker thread, since it has no timeout.
    """
    import socket
    from concurrent.futures import ThreadPoolExecutor
    from concurrent.futures import TimeoutError as FutureTimeout
    from urllib.parse import urlsplit

    from huggingface_hub import constants

    url = urlsplit(constants.ENDPOINT)
    host, port = url.hostname or "huggingface.co", url.port or (443 if url.scheme == "https" else 80)

    def connect() -> bool:
        with socket.create_connection((host, port), timeout=timeout):
            return True

    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="hub-probe")
    try:
        return pool.submit(connect).result(timeout=timeout)
    except (OSError, FutureTimeout):
        return False
    finally:
        pool.shutdown(wait=False)


def from_datasets(split: Split, data_files: str | Path | None = None) -> Pairs:
    """STS-B's ``split`` through the ``datasets`` library: the hub's copy, or a local file of the same shape.

    Args:
        split: the split to load.
        data_files: a local ``.parquet`` / ``.csv`` / ``.jsonl`` with the hub copy's columns
            (``sentence1``, ``sentence2``, ``score`` in 0-1), loaded with ``load_dataset``'s
            ``data_files=`` (no network); None loads :data:`HF_DATASET` from the hub.
    """
    import datasets

    if data_files is None:
        ds = datasets.load_dataset(HF_DATASET, split=split.hf_split)
        source = f"{split.value} (Hugging Face {HF_DATASET})"
    else:
        path = Path(data_files)
        builder = {".parquet": "parquet", ".csv": "csv", ".jsonl": "json", ".json": "json"}[path.suffix.lower()]
        ds = datasets.load_dataset(builder, data_files={split.hf_split: str(path)}, split=split.hf_split)
        source = f"{split.value} ({path.name})"
    frame = ds.to_pandas()
    return Pairs(pd.DataFrame({
        "sentence1": frame["sentence1"].astype(str),
        "sentence2": frame["sentence2"].astype(str),
        "score": frame["score"].astype(float) * 5.0,  # that copy is scaled to 0-1; STS-B's gold runs 0-5
        "genre": "unknown",
    }), source)


def load(data: str, settings: Settings, uploads: Sequence[Path | str] = (), access: DataAccess = WEB) -> Pairs:
    """Pairs named by ``--data``: ``stsb-dev`` / ``stsb-test`` / ``stsb-train``, or a file.

    Args:
        data: a split name or a path (relative to a data folder, or absolute inside one; on the
            command line also any path of the user's, relative to the folder the command started in).
        settings: supplies the data folders and the size limits.
        uploads: files this conversation uploaded; each may be named by its full path or its file name.
        access: which files this face may read (:data:`tools.access.WEB` unless the caller says otherwise).
    """
    name = (data or "").strip()
    if not name:
        raise UserError(f"--data needs a value: stsb-dev, stsb-test, or {HOW_TO_PASS}.")
    try:
        split = Split(name.lower())
    except ValueError:
        split = None
    if split is not None:
        return load_split(split, settings)
    own = access.local_file(name)
    if own is not None:
        return read_file(own, settings)
    if access.local_files and not settings.data_dir_paths:
        raise access.missing(name)
    try:
        path = resolve_path(name, settings.data_dir_paths, uploads)
    except UserError:
        if access.local_files:
            raise access.missing(name) from None
        raise
    return read_file(path, settings)


# --- sampling ------------------------------------------------------------------------------------

def score_bins(scores: pd.Series) -> pd.Series:
    """The gold-score bin of each pair: 0 for [0,1) ... 4 for [4,5] (scores above 5 go to the top bin)."""
    return pd.Series(np.clip(np.searchsorted(BIN_EDGES, scores.to_numpy(), side="right") - 1, 0,
                             len(BIN_EDGES) - 1), index=scores.index, name="bin")


def stratified_sample(frame: pd.DataFrame, n: int, seed: int) -> pd.DataFrame:
    """``n`` pairs whose gold-score bins keep the data's proportions, the same for the same ``seed``.

    Each bin gets its share of ``n`` rounded by largest remainder (so the counts add
    up to ``n`` and no bin is off by more than one), then pandas draws that many
    rows of the bin with the seed.
    """
    if n >= len(frame):
        return frame.reset_index(drop=True)
    bins = score_bins(frame["score"])
    counts = bins.value_counts().sort_index()
    exact = counts / counts.sum() * n
    take = np.floor(exact).astype(int)
    short = n - int(take.sum())
    order = (exact - take).sort_values(ascending=False, kind="stable").index[:short]
    take[order] += 1
    parts = [frame[bins == b].sample(n=int(k), random_state=seed) for b, k in take.items() if k > 0]
    return pd.concat(parts).sort_index().reset_index(drop=True)
