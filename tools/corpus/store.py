"""The corpus store: one folder per corpus (:mod:`tools.corpus.folder`) under a root, within its limits."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import re
import shutil
import tempfile
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tools.core.config import Settings
from tools.core.errors import UserError
from tools.core.text import code
from tools.corpus.facts import CorpusInfo, CorpusList, ReadCorpus
from tools.corpus.files import atomic_write, folder_bytes
from tools.corpus.folder import CHUNK_ROWS, MANIFEST, ROWS, Corpus, Manifest

_NAME = re.compile(r"[^A-Za-z0-9._-]+")


def corpus_key(sha256: str, text_column: str, model: str, pooling: str) -> str:
    """The folder name of a corpus: a digest of what makes its vectors."""
    return hashlib.sha256(f"{sha256}\0{text_column}\0{model}\0{pooling}".encode()).hexdigest()[:20]


@dataclass(frozen=True)
class Limits:
    """What one store may hold, and the settings that say so (named in refusals).

    Attributes:
        disk_bytes: bytes on disk for every corpus in the store together (None: no limit).
        rows: rows in every corpus in the store together (None: no limit).
        disk_setting: the setting a disk refusal names.
        rows_setting: the setting a rows refusal names.
    """

    disk_bytes: int | None = None
    rows: int | None = None
    disk_setting: str = "ASSISTANT_CORPUS_DISK_MB"
    rows_setting: str = ""


class CorpusStore:
    """Every corpus under one root folder (ASSISTANT_CORPUS_DIR, or a conversation's own), within its limits."""

    def __init__(self, root: Path | str, disk_limit_bytes: int | None = None, limits: Limits | None = None) -> None:
        self.root = Path(root)
        self.limits = limits or Limits(disk_limit_bytes)
        self.disk_limit_bytes = self.limits.disk_bytes

    @classmethod
    def from_settings(cls, settings: Settings) -> CorpusStore:
        return cls(settings.corpus_path, settings.corpus_disk_mb * 1024 * 1024)

    def _folders(self) -> list[Path]:
        if not self.root.is_dir():
            return []
        return sorted(p for p in self.root.iterdir() if p.is_dir() and (p / MANIFEST).is_file())

    def _load(self, folder: Path) -> Corpus:
        data = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        known = {f for f in Manifest.__dataclass_fields__}
        return Corpus(folder, Manifest(**{k: v for k, v in data.items() if k in known}))

    def corpora(self) -> list[Corpus]:
        """Every corpus, oldest first."""
        return sorted((self._load(f) for f in self._folders()), key=lambda c: c.manifest.created)

    def usage(self) -> int:
        """Bytes on disk under the root."""
        return folder_bytes(self.root)

    def list(self) -> CorpusList:
        infos = tuple(c.info() for c in self.corpora())
        return CorpusList(infos, sum(i.bytes_on_disk for i in infos), self.disk_limit_bytes or 0)

    def open(self, name: str) -> Corpus:
        """The corpus called ``name`` (or with that key), with any chunks finished before a crash counted."""
        found = [c for c in self.corpora() if name in (c.name, c.key)]
        if not found:
            names = [c.name for c in self.corpora()]
            have = f"the corpora here are {', '.join(code(n, 30) for n in names)}" if names else "there is none yet"
            raise UserError(f"There is no corpus {code(name, 40)}; {have}. Load one with `corpus load FILE`.")
        found[0].reconcile()
        return found[0]

    def drop(self, name: str) -> CorpusInfo:
        """Delete a corpus folder; returns what it was."""
        corpus = self.open(name)
        info = corpus.info()
        trash = corpus.folder.with_name(f".drop-{corpus.key}-{os.getpid()}")
        os.replace(corpus.folder, trash)  # gone from listings at once, even if the delete is slow
        shutil.rmtree(trash, ignore_errors=True)
        return info

    def create(self, read: ReadCorpus, model: str, pooling: str, dims: int, name: str | None = None,
               chunk_rows: int = CHUNK_ROWS) -> Corpus:
        """The corpus for these rows, model and pooling: the existing one (its finished chunks kept) or a new folder.

        Raises:
            UserError: when ``name`` belongs to another corpus, or the new corpus would pass the disk limit.
        """
        report = read.report
        key = corpus_key(report.sha256, report.text_column, model, pooling)
        folder = self.root / key
        existing = {c.name: c for c in self.corpora()}
        if (folder / MANIFEST).is_file():
            corpus = self._load(folder)
            corpus.reconcile()
            kept, now = corpus.rows()["text"], read.frame["text"]
            corpus.read_otherwise = int((kept.to_numpy() != now.to_numpy()).sum()) if len(kept) == len(now) else 0
            if name and name != corpus.name:
                if name in existing:
                    raise UserError(f"The name {code(name, 40)} is taken by another corpus; pick another --name.")
                corpus.manifest.name = name
                corpus.write_manifest()
            return corpus
        displaced = ""
        if name and name in existing:
            old = existing[name]
            if old.manifest.sha256 != report.sha256:
                raise UserError(f"The name {code(name, 40)} is taken by another corpus; pick another --name or "
                                f"`corpus drop {name}` first.")
            # the same file read another way ("load it again but take the title column"): the new reading takes
            # the name and the earlier one keeps its vectors under a name of its own
            displaced = self._free_name(f"{name}-{old.manifest.text_column}", set(existing))
            old.manifest.name = displaced
            old.write_manifest()
        shown = name or self._free_name(Path(report.source).stem, set(existing))
        rows = read.frame.copy()
        rows.insert(0, "id", np.arange(len(rows), dtype=np.int64))
        self._check_space(rows, dims)
        self._check_rows(len(rows))
        self.root.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=f".new-{key}-", dir=self.root))
        try:
            atomic_write(work / ROWS, lambda h: rows.to_parquet(h, index=False))
            manifest = Manifest(key=key, name=shown, model=model, pooling=pooling, source=report.source,
                                sha256=report.sha256, text_column=report.text_column, rows=len(rows), dims=0,
                                chunk_rows=chunk_rows, metadata_columns=list(report.metadata_columns),
                                created=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
                                read=_jsonable(asdict(report)))
            corpus = Corpus(work, manifest)
            corpus.write_manifest()
            os.replace(work, folder)
        except BaseException:
            shutil.rmtree(work, ignore_errors=True)
            if (folder / MANIFEST).is_file():  # another process made the same corpus meanwhile
                return self._load(folder)
            raise
        made = Corpus(folder, replace(manifest))
        made.displaced = displaced
        return made

    def _free_name(self, stem: str, taken: set[str]) -> str:
        base = _NAME.sub("-", stem).strip("-._")[:40] or "corpus"
        name, n = base, 2
        while name in taken:
            name, n = f"{base}-{n}", n + 1
        return name

    def _check_space(self, rows: pd.DataFrame, dims: int) -> None:
        """Refuse a corpus whose rows and vectors (counted twice: chunks, then the joined file) pass the limit."""
        if self.disk_limit_bytes is None:
            return
        need = int(rows.memory_usage(deep=True).sum()) + 2 * len(rows) * dims * 4
        used = self.usage()
        if used + need > self.disk_limit_bytes:
            mb = 1024 * 1024
            raise UserError(f"This corpus needs about {need / mb:.0f} MB and {used / mb:.0f} MB of the "
                            f"{self.disk_limit_bytes / mb:.0f} MB corpus space ({self.limits.disk_setting}) is in "
                            "use; drop a corpus with `corpus drop NAME` or load fewer rows.")

    def _check_rows(self, new: int) -> None:
        """Refuse a corpus that would take the store past its rows."""
        if self.limits.rows is None:
            return
        used = sum(c.manifest.rows for c in self.corpora())
        if used + new > self.limits.rows:
            raise UserError(f"This corpus has {new:,} rows and this conversation's corpora already hold {used:,}; "
                            f"a conversation may hold {self.limits.rows:,} rows ({self.limits.rows_setting}). "
                            "Drop a corpus with `corpus drop NAME` or load fewer rows.")


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value
