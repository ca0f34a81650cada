"""Conversations kept on disk, so a reload, a reopened tab or a server restart loses nothing.

The browser holds its conversation's id (128 random bits, in ``localStorage``; never in a link). The
server keeps one folder per id under ``ASSISTANT_CONVERSATION_DIR``:

- ``state.json``: what the :class:`~assistant.session.Session` needs to go on (its model, masked-LM
  pick, corpus, uploads and turns: a few hundred bytes a turn);
- ``replies/NNNNNN.json.gz``: each exchange as the page showed it (the line and the reply's payload:
  its HTML and chart specs), gzip'd. The big results are not kept: they stay under the memory rules
  of :mod:`assistant.store` and are recomputed when ``export`` asks.
- ``downloads/``: the files of the latest reply that had any (its tables as CSV, its JSON), which the side
  panel shows again after a reload (:mod:`assistant.panel`), with ``order.json`` (their names, in order, and
  what the panel needs to know about them).

A conversation is deleted once nobody has used it for ``ASSISTANT_SESSION_IDLE_S`` (the visitors'
sweep calls :meth:`Conversations.sweep`), or when its page asks for a new one. Each keeps at most
``ASSISTANT_CONVERSATION_MB``: past it the oldest replies go first (their lines stay in ``history``,
and the restored page says how many went).
"""

from __future__ import annotations

import gzip
import json
import os
import re
import secrets
import shutil
import threading
import time
from dataclasses import asdict, dataclass
from html import escape
from pathlib import Path
from typing import Any

from assistant.corpora import forget
from assistant.session import MAX_TURNS, Session, Turn
from tools.core.config import Settings

#: What a conversation id looks like (``secrets.token_hex(16)``); anything else is never a path.
ID = re.compile(r"^[0-9a-f]{32}$")
STATE = "state.json"
REPLIES = "replies"
DOWNLOADS = "downloads"
ORDER = ".order.json"


@dataclass(frozen=True)
class Exchange:
    """One line the visitor sent and the reply the page showed for it."""

    line: str
    payload: dict[str, Any]


@dataclass(frozen=True)
class KeptFiles:
    """The latest reply's downloads kept with a conversation: the files, in order, and what was said of them."""

    paths: list[Path]
    meta: dict[str, Any]


@dataclass(frozen=True)
class Restored:
    """A conversation read back from disk: its exchanges (oldest first) and how many older ones were dropped."""

    id: str
    exchanges: list[Exchange]
    dropped: int

    def to_page(self) -> dict[str, Any]:
        """What the page's script restores: ``{"id", "dropped", "replies": [{"line", "payload"}]}``."""
        return {"id": self.id, "dropped": self.dropped,
                "replies": [{"line": e.line, "payload": e.payload} for e in self.exchanges]}


class Conversations:
    """Every conversation's folder on this server, freed by the idle rule and capped in size.

    Args:
        settings: ``conversation_dir`` ("" keeps nothing on disk), ``conversation_mb``, ``session_idle_s``.
    """

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.root = Path(settings.conversation_dir).expanduser().resolve() if settings.conversation_dir else None
        self.max_bytes = settings.conversation_mb * 2**20
        self.idle_s = settings.session_idle_s
        self._lock = threading.Lock()

    @property
    def kept(self) -> bool:
        """Whether conversations outlive their page on this server."""
        return self.root is not None

    @staticmethod
    def new_id() -> str:
        """A fresh conversation id nobody can guess."""
        return secrets.token_hex(16)

    def _folder(self, cid: str) -> Path | None:
        if self.root is None or not ID.match(cid or ""):
            return None
        return self.root / cid

    # --- reading ---------------------------------------------------------------------------------

    def restore(self, cid: str, session: Session) -> Restored | None:
        """Give ``session`` the kept conversation ``cid`` and return its exchanges; None when it is not kept
        (never was, expired, or ids are not kept here): the session then starts afresh."""
        folder = self._folder(cid)
        if folder is None or not (folder / STATE).is_file():
            return None
        try:
            state = json.loads((folder / STATE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        session.id = cid
        session.model = str(state.get("model", ""))
        session.mlm_model = str(state.get("mlm_model", ""))
        session.corpus = str(state.get("corpus", ""))
        session.uploads = tuple(p for p in state.get("uploads", []) if os.path.isfile(p))  # Gradio may have freed some
        session.turns = [Turn(**t) for t in state.get("turns", [])]
        session.answered = int(state.get("answered", len(session.turns)))
        exchanges = []
        for path in sorted((folder / REPLIES).glob("*.json.gz")):
            try:
                with gzip.open(path, "rt", encoding="utf-8") as f:
                    item = json.load(f)
            except (OSError, ValueError, EOFError):
                continue  # a reply cut short by a crash: the others still come back
            exchanges.append(Exchange(str(item.get("line", "")), item.get("payload") or {}))
        os.utime(folder)
        return Restored(cid, exchanges, int(state.get("dropped", 0)))

    def kept_downloads(self, cid: str) -> KeptFiles | None:
        """The downloads kept by :meth:`keep_downloads` for conversation ``cid``; None when none are."""
        folder = self._folder(cid)
        if folder is None:
            return None
        try:
            order = json.loads((folder / DOWNLOADS / ORDER).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        paths = [folder / DOWNLOADS / Path(str(name)).name for name in order.get("files", [])]
        return KeptFiles([p for p in paths if p.is_file()], dict(order.get("meta") or {}))

    # --- writing ---------------------------------------------------------------------------------

    def save(self, session: Session, line: str, payload: dict[str, Any], turn: Turn | None = None) -> None:
        """Keep one exchange, its answered command (``turn``, None when it answered none) and the session's
        state (atomically: a crash leaves the previous state). Turns are added to those kept, never written
        over them, so two tabs of one conversation both keep theirs."""
        folder = self._folder(session.key)
        if folder is None:
            return
        with self._lock:
            replies = folder / REPLIES
            replies.mkdir(parents=True, exist_ok=True)
            state = self._state(folder)
            number = int(state.get("exchanges", 0)) + 1
            data = gzip.compress(json.dumps({"line": line, "payload": payload}).encode("utf-8"), 6)
            if len(data) > self.max_bytes // 2:
                data = gzip.compress(json.dumps({"line": line, "payload": _too_large(line, payload, len(data),
                                                                                   self.max_bytes)}).encode("utf-8"))
            _write(replies / f"{number:06d}.json.gz", data)
            dropped = int(state.get("dropped", 0)) + self._cap(replies, _size(folder / DOWNLOADS))
            turns, answered = list(state.get("turns", [])), int(state.get("answered", 0))
            if turn is not None:
                answered += 1
                turns = [*turns, {**asdict(turn), "number": answered}][-MAX_TURNS:]
            self._write_state(folder, session, turns, answered, exchanges=number, dropped=dropped)

    def keep_downloads(self, session: Session, paths: list[str], meta: dict[str, Any]) -> None:
        """Keep copies of the latest reply's downloads (``paths``, in order) with the conversation, in place of
        the previous reply's, so a reload shows them again. Files larger together than half the conversation's
        size are not kept (``meta`` says so: ``{"too_large": bytes}``)."""
        folder = self._folder(session.key)
        if folder is None or not (folder / STATE).is_file():
            return
        with self._lock:
            fresh = folder / f".{DOWNLOADS}.tmp"
            shutil.rmtree(fresh, ignore_errors=True)
            fresh.mkdir()
            size = sum(os.path.getsize(p) for p in paths)
            if size > self.max_bytes // 2:
                paths, meta = [], {"too_large": size}
            paths = list(dict.fromkeys(paths))
            for path in paths:
                _link(Path(path), fresh / Path(path).name)
            _write(fresh / ORDER, json.dumps({"files": [Path(p).name for p in paths], "meta": meta}).encode("utf-8"))
            shutil.rmtree(folder / DOWNLOADS, ignore_errors=True)
            os.replace(fresh, folder / DOWNLOADS)

    def remember(self, session: Session) -> None:
        """Keep the session's state alone (a model or corpus picked, a file uploaded)."""
        folder = self._folder(session.key)
        if folder is None or not (folder / STATE).is_file():
            return
        with self._lock:
            state = self._state(folder)
            self._write_state(folder, session, list(state.get("turns", [])), int(state.get("answered", 0)),
                              exchanges=int(state.get("exchanges", 0)), dropped=int(state.get("dropped", 0)))

    def forget(self, cid: str) -> None:
        """Delete a conversation now (its page asked for a new one), with its corpora on a shared server."""
        folder = self._folder(cid)
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
        forget(self.settings, cid)

    def sweep(self, now: float | None = None) -> list[str]:
        """Delete the conversations nobody has used for the idle time; returns their ids."""
        if self.root is None or not self.root.is_dir():
            return []
        now = time.time() if now is None else now
        gone = []
        for folder in self.root.iterdir():
            if not ID.match(folder.name):
                continue
            try:
                idle = now - folder.stat().st_mtime
            except OSError:
                continue
            if idle > self.idle_s:
                self.forget(folder.name)
                gone.append(folder.name)
        return gone

    def disk_bytes(self) -> int:
        """Bytes every kept conversation takes on disk."""
        if self.root is None or not self.root.is_dir():
            return 0
        return sum(p.stat().st_size for p in self.root.rglob("*") if p.is_file())

    # --- inside --------------------------------------------------------------------------------

    @staticmethod
    def _state(folder: Path) -> dict[str, Any]:
        try:
            return json.loads((folder / STATE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}

    @staticmethod
    def _write_state(folder: Path, session: Session, turns: list[dict[str, Any]], answered: int, exchanges: int,
                     dropped: int) -> None:
        state = {"model": session.model, "mlm_model": session.mlm_model, "corpus": session.corpus,
                 "uploads": list(session.uploads), "answered": answered, "turns": turns, "exchanges": exchanges,
                 "dropped": dropped}
        _write(folder / STATE, json.dumps(state).encode("utf-8"))
        os.utime(folder)  # the idle clock is the folder's time

    def _cap(self, replies: Path, downloads: int) -> int:
        """Drop the oldest replies until the conversation (with its ``downloads`` bytes) is under its size;
        returns how many went."""
        files = sorted(replies.glob("*.json.gz"))
        sizes = [p.stat().st_size for p in files]
        total, dropped = sum(sizes) + downloads, 0
        while total > self.max_bytes and len(files) - dropped > 1:
            files[dropped].unlink(missing_ok=True)
            total -= sizes[dropped]
            dropped += 1
        return dropped


def _link(source: Path, target: Path) -> None:
    """``target`` as a second name of ``source``'s bytes where both lie on one file system (every reply keeps its
    downloads: no copy of a large map's files each time), else a copy."""
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)


def _size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.glob("*") if p.is_file()) if folder.is_dir() else 0


def _write(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _too_large(line: str, payload: dict[str, Any], size: int, limit: int) -> dict[str, Any]:
    """A reply too large to keep: its place in the log says so and offers to run the line again."""
    note = (f"<p class='reply-note'>This reply ({size / 2**20:.1f} MB compressed) was too large to keep for a "
            f"reload (each conversation keeps {limit / 2**20:.0f} MB, ASSISTANT_CONVERSATION_MB). "
            f"<button type='button' class='line' data-run='{escape(line, quote=True)}'>Run it again</button></p>")
    return {"id": payload.get("id", ""), "ok": payload.get("ok", True), "html": note, "charts": []}
