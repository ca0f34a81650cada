"""One corpus folder: its manifest, rows, chunks and (once complete) vectors and index, written so that a crash
never counts half a file.

A corpus folder holds::

    manifest.json      name, model, pooling, file sha256, rows, chunk size, chunks done, created, ...
    rows.parquet       id (0-based row number), text, then the file's other columns
    chunks/00000.npy   float32 vectors of one chunk, in encoding order (see below), one file per finished chunk
    vectors.npy        once complete: every row's unit-length vector, float32, memory-mapped on load
    norms.npy          once complete: each vector's length before normalising (vectors x norms = the pooled vectors)
    index.usearch      above ``tools.corpus.index.HNSW_MIN_ROWS`` rows: the HNSW graph, memory-mapped on load

A corpus is keyed by (file content hash, text column, model, pooling), so loading the same
file again for the same model reuses the folder, finished chunks included. Every file is
written to a temporary name and moved into place with :func:`os.replace`; a chunk counts as
done once its file exists under its final name, and the manifest is rewritten after each.

Chunks follow the encoding order (:meth:`Corpus.order`): rows sorted by text length, so a chunk's
texts pad alike when batched. It is a function of the rows alone, the same after a restart;
``vectors.npy`` puts every vector back at its row id.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tools.core.errors import UserError
from tools.core.text import code
from tools.corpus.facts import CorpusInfo
from tools.corpus.files import atomic_write, folder_bytes, save_npy

MANIFEST, ROWS, CHUNKS, VECTORS, NORMS = "manifest.json", "rows.parquet", "chunks", "vectors.npy", "norms.npy"
#: Each conversation's lasso on the corpus, kept so that a reload or a restart finds it.
SELECTIONS = "selections"
#: Rows encoded (and persisted) together: small enough that a crash loses little, large enough for full batches.
CHUNK_ROWS = 1024
#: Rows normalised at once when a corpus is finished (their float64 copy: 25 MB at 384 dims).
NORMALISE_ROWS = 8192
#: 2: chunks follow the rows sorted by text length; 1: chunks follow file order (still resumed that way).
FORMAT_VERSION = 2
_LOCK = threading.RLock()  # manifest updates of one process; chunks come back from engines one at a time

#: A text that names a corpus row by the id its tables show: ``#12``.
ROW = re.compile(r"^#(\d+)$")


@dataclass
class Manifest:
    """What ``manifest.json`` holds (see :class:`~tools.corpus.facts.CorpusInfo` for each field)."""

    key: str
    name: str
    model: str
    pooling: str
    source: str
    sha256: str
    text_column: str
    rows: int
    dims: int
    chunk_rows: int
    metadata_columns: list[str]
    created: str
    chunks_done: list[int] = field(default_factory=list)
    complete: bool = False
    index_kind: str = ""
    index_recall: float | None = None
    read: dict = field(default_factory=dict)
    version: int = FORMAT_VERSION

    @property
    def chunks_total(self) -> int:
        return -(-self.rows // self.chunk_rows)


class Corpus:
    """One corpus folder: its manifest, rows, chunks and (once complete) vectors and index."""

    def __init__(self, folder: Path, manifest: Manifest) -> None:
        self.folder = folder
        self.manifest = manifest
        self._rows: pd.DataFrame | None = None
        self._unit: np.ndarray | None = None
        self._order: np.ndarray | None = None
        self._index: Any = None
        #: The new name of the corpus this one took its name from (the same file read another way), when it did.
        self.displaced = ""
        #: How many of its texts the file, read again, gives otherwise (read by an earlier version): 0 when none.
        self.read_otherwise = 0

    @property
    def key(self) -> str:
        return self.manifest.key

    @property
    def name(self) -> str:
        return self.manifest.name

    def rows(self) -> pd.DataFrame:
        """id, text and the metadata columns (read once)."""
        if self._rows is None:
            self._rows = pd.read_parquet(self.folder / ROWS)
        return self._rows

    def texts(self) -> list[str]:
        return self.rows()["text"].tolist()

    def named_row(self, text: str) -> int | None:
        """The row ``text`` names as ``#N`` (None: a text of its own); a row past the corpus is refused."""
        match = ROW.match(text.strip())
        if match is None:
            return None
        number = int(match.group(1))
        if number >= self.manifest.rows:
            raise UserError(f"Corpus {code(self.name, 30)} has rows #0 to #{self.manifest.rows - 1}; there is no "
                            f"{code(text.strip(), 20)}.")
        return number

    def keep_selection(self, owner: str, ids: np.ndarray) -> None:
        """Keep ``owner``'s selection of rows on disk (an empty one forgets it): a reload or a restart finds it."""
        path = self._selection_path(owner)
        if len(ids):
            path.parent.mkdir(exist_ok=True)
            save_npy(path, np.asarray(ids, dtype=np.int64))
        else:
            path.unlink(missing_ok=True)

    def kept_selection(self, owner: str) -> np.ndarray | None:
        """The selection ``owner`` last kept on this corpus, or None."""
        path = self._selection_path(owner)
        return np.load(path, allow_pickle=False) if path.is_file() else None

    def _selection_path(self, owner: str) -> Path:
        return self.folder / SELECTIONS / f"{hashlib.sha256(owner.encode()).hexdigest()[:32]}.npy"

    def order(self) -> np.ndarray:
        """Row ids in encoding order: by text length in characters, ties in row order (file order before format 2).

        Texts of like length in one chunk pad little when batched; the order depends on the rows alone,
        so a restart finds the same chunks.
        """
        if self._order is None:
            if self.manifest.version < 2:
                self._order = np.arange(self.manifest.rows, dtype=np.int64)
            else:
                lengths = self.rows()["text"].str.len().to_numpy()
                self._order = np.argsort(lengths, kind="stable").astype(np.int64, copy=False)
        return self._order

    def chunk_span(self, chunk: int) -> tuple[int, int]:
        """Positions [start, stop) of chunk ``chunk`` in the encoding order (:meth:`order`)."""
        start = chunk * self.manifest.chunk_rows
        return start, min(start + self.manifest.chunk_rows, self.manifest.rows)

    def chunk_ids(self, chunk: int) -> np.ndarray:
        """Row ids of chunk ``chunk``, in the order its file holds their vectors."""
        return self.order()[slice(*self.chunk_span(chunk))]

    def chunk_path(self, chunk: int) -> Path:
        return self.folder / CHUNKS / f"{chunk:05d}.npy"

    def pending_chunks(self) -> list[int]:
        """Chunks not yet encoded, in order."""
        if self.manifest.complete:
            return []
        done = set(self.manifest.chunks_done)
        return [c for c in range(self.manifest.chunks_total) if c not in done]

    def save_chunk(self, chunk: int, vectors: np.ndarray) -> None:
        """Persist one finished chunk, then count it in the manifest."""
        start, stop = self.chunk_span(chunk)
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.shape[0] != stop - start or vectors.ndim != 2:
            raise ValueError(f"chunk {chunk} needs {stop - start} vectors, got shape {vectors.shape}")
        save_npy(self.chunk_path(chunk), vectors)
        with _LOCK:
            self.manifest.dims = int(vectors.shape[1])
            self.manifest.chunks_done = sorted(set(self.manifest.chunks_done) | {chunk})
            self.write_manifest()

    def refresh(self) -> None:
        """Read the manifest again (another run may have moved on) and count chunks a crash left uncounted."""
        path = self.folder / MANIFEST
        if path.is_file():
            data = json.loads(path.read_text(encoding="utf-8"))
            self.manifest = Manifest(**{k: v for k, v in data.items() if k in Manifest.__dataclass_fields__})
        self.reconcile()

    def write_manifest(self) -> None:
        atomic_write(self.folder / MANIFEST, lambda h: json.dump(asdict(self.manifest), h, indent=1), binary=False)

    def reconcile(self) -> None:
        """Count chunk files that were moved into place before a crash kept the manifest from saying so."""
        if self.manifest.complete:
            return
        found = []
        for c in range(self.manifest.chunks_total):
            path = self.chunk_path(c)
            if c not in self.manifest.chunks_done and path.is_file():
                start, stop = self.chunk_span(c)
                try:
                    shape = np.load(path, mmap_mode="r").shape
                except (OSError, ValueError):
                    continue
                if len(shape) == 2 and shape[0] == stop - start:
                    found.append(c)
                    self.manifest.dims = int(shape[1])
        if found:
            self.manifest.chunks_done = sorted(set(self.manifest.chunks_done) | set(found))
            self.write_manifest()

    def finish(self, build_index: Callable[[Path, np.ndarray], tuple[str, float | None]]) -> None:
        """Join the chunks into ``vectors.npy`` (unit length, row-id order) and ``norms.npy``, build the index,
        mark complete."""
        m = self.manifest
        if m.complete:
            return
        if self.pending_chunks():
            raise ValueError(f"{len(self.pending_chunks())} chunks are not encoded yet")
        raw = np.empty((m.rows, m.dims), dtype=np.float32)
        for c in range(m.chunks_total):
            raw[self.chunk_ids(c)] = np.load(self.chunk_path(c))
        norms = np.empty(m.rows, dtype=np.float32)
        for start in range(0, m.rows, NORMALISE_ROWS):  # in place, a block at a time: no full float64 copies
            block = raw[start:start + NORMALISE_ROWS].astype(np.float64)
            lengths = np.linalg.norm(block, axis=1)
            norms[start:start + len(block)] = lengths
            raw[start:start + len(block)] = block / np.where(lengths > 0, lengths, 1.0)[:, None]
        save_npy(self.folder / NORMS, norms)
        save_npy(self.folder / VECTORS, raw)
        kind, recall = build_index(self.folder, raw)
        with _LOCK:
            m.complete, m.index_kind, m.index_recall = True, kind, recall
            self.write_manifest()
        shutil.rmtree(self.folder / CHUNKS, ignore_errors=True)

    def unit_vectors(self) -> np.ndarray:
        """Every row's unit-length vector (N, dims) float32, memory-mapped read-only."""
        if not self.manifest.complete:
            done = len(self.manifest.chunks_done)
            raise UserError(f"Corpus {code(self.name, 40)} is not fully encoded yet ({done} of "
                            f"{self.manifest.chunks_total} chunks); run `corpus load` on its file again to resume.")
        if self._unit is None:
            self._unit = np.load(self.folder / VECTORS, mmap_mode="r")
        return self._unit

    def vectors(self) -> np.ndarray:
        """The pooled vectors as encoded (unit vectors times their norms), in memory."""
        norms = np.load(self.folder / NORMS)
        return np.asarray(self.unit_vectors()) * norms[:, None]

    def index(self) -> Any:
        """The corpus's :class:`~tools.corpus.index.VectorIndex` (opened once, memory-mapped)."""
        if self._index is None:
            from tools.corpus.index import VectorIndex

            self._index = VectorIndex.open(self.folder, self.unit_vectors(), self.manifest.index_kind)
        return self._index

    def info(self) -> CorpusInfo:
        m = self.manifest
        return CorpusInfo(key=m.key, name=m.name, model=m.model, pooling=m.pooling, source=m.source, sha256=m.sha256,
                          text_column=m.text_column, rows=m.rows, dims=m.dims, chunk_rows=m.chunk_rows,
                          chunks_total=m.chunks_total, chunks_done=m.chunks_total if m.complete else len(m.chunks_done),
                          complete=m.complete, index_kind=m.index_kind, index_recall=m.index_recall,
                          metadata_columns=tuple(m.metadata_columns), created=m.created,
                          bytes_on_disk=folder_bytes(self.folder), read=dict(m.read))
