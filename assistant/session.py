"""One visitor's conversation: small by design, and freed when the visitor leaves.

A :class:`Turn` keeps the command line, the model, the settings, the time and the
answer's text: a few hundred bytes. The full results of the latest replies live in the
app's :class:`~assistant.store.ResultStore` under one byte cap (given to the conversation by
:func:`assistant.dispatch.execute`); ``export`` recomputes anything
older (:func:`assistant.sharing.links.full_turns`). Downloads are written into the
conversation's own temporary folder (:meth:`Session.downloads_dir`), which
:meth:`Session.close` deletes with the conversation's stored results.
"""

from __future__ import annotations

import secrets
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assistant.store import ResultStore
from tools.core.results import Result, json_value

#: How many answered commands a conversation lists for `history` and `export` (older ones are dropped).
MAX_TURNS = 50
#: The folder every conversation's downloads folder is made in.
DOWNLOADS_ROOT = "assistant-downloads-"


@dataclass(frozen=True)
class Turn:
    """One answered command, kept small: what ran and what it said, not its tables or charts.

    Attributes:
        line: the command line that ran (`again` records the line it re-ran).
        model: the conversation's model then ("" = the server's default).
        command: the verb that answered.
        text: the answer's text.
        settings: the choices that shaped it, as plain JSON values.
        elapsed_ms: how long it took.
        number: its place in the conversation (1 = first answered command).
    """

    line: str
    model: str
    command: str
    text: str = ""
    settings: dict[str, Any] = field(default_factory=dict)
    elapsed_ms: float = 0.0
    number: int = 0


@dataclass(frozen=True)
class FullTurn:
    """A turn with its full result (stored or recomputed), for exports."""

    line: str
    model: str
    result: Result
    number: int = 0


@dataclass
class Session:
    """One conversation's own state; never shared between users.

    Gradio deep-copies the page's initial Session for each visitor, so the id is made on
    first use (:attr:`key`), never shared by the copies.
    """

    model: str = ""
    mlm_model: str = ""  # the page's masked-LM pick for `mask` ("" = ASSISTANT_MLM_MODEL)
    uploads: tuple[str, ...] = ()  # files this visitor uploaded (benchmark data, corpora)
    corpus: str = ""  # the corpus `corpus use` chose ("" = the only one, or ask)
    turns: list[Turn] = field(default_factory=list)  # the answered commands, for `history`, `again` and `export`
    tried: str = ""  # a typed command that ran after the last answered one and failed: what a follow-up changes
    base_url: str = ""  # the address the page was opened at, for permalinks ("" = relative links)
    id: str = ""  # the conversation's id, made on first use (see `key`) or given back by a reloaded page
    page: str = ""  # this page's own id, made on first use (see `page_key`)
    answered: int = 0  # commands answered so far (the number of the latest turn)
    store: ResultStore | None = field(default=None, compare=False, repr=False)  # the app's, shared by visitors
    maps: Any = field(default=None, compare=False, repr=False)  # the app's servable maps (assistant.maps.Maps)
    # the server's own bookkeeping: not copied into a command's private copy, never merged back
    downloads: str = field(default="", init=False)  # this conversation's downloads folder, once made
    closed: bool = field(default=False, init=False)

    def __getstate__(self) -> dict[str, Any]:
        """Pickled and deep-copied without the app's store (a copy is given the store again when it runs)."""
        return {**self.__dict__, "store": None, "maps": None}

    @property
    def history(self) -> list[str]:
        """The answered command lines, oldest first."""
        return [t.line for t in self.turns]

    @property
    def key(self) -> str:
        """This conversation's id (made on first use): its corpora and what is kept of it on disk."""
        if not self.id:
            self.id = secrets.token_hex(16)
        return self.id

    @property
    def page_key(self) -> str:
        """This page's own id (made on first use): what it holds in memory, its stored results and its maps.

        A reloaded page carries on the same conversation (:attr:`key`) under a new page key, so freeing the
        page it replaced frees only that page's memory.
        """
        if not self.page:
            self.page = secrets.token_hex(16)
        return self.page

    def remember(self, line: str, result: Result) -> Turn:
        """Record an answered command line (for `again`, the line it re-ran); returns its turn."""
        self.answered += 1
        turn = Turn(line, self.model, result.command, result.text,
                    {k: json_value(v) for k, v in result.settings.items()}, result.elapsed_ms, self.answered)
        self.turns.append(turn)
        del self.turns[:-MAX_TURNS]
        if not self.closed and self.store is not None:
            self.store.put(self.page_key, self.answered, result)
        return turn

    def stored(self, turn: Turn) -> Result | None:
        """The full result of ``turn`` when it is still stored (the latest replies), else None."""
        return self.store.get(self.page_key, turn.number) if turn.number and self.store is not None else None

    def downloads_dir(self, fresh: bool = False) -> Path:
        """This conversation's downloads folder (made on first use); ``fresh`` empties it first."""
        folder = Path(self.downloads) if self.downloads else None
        if folder is not None and fresh:
            shutil.rmtree(folder, ignore_errors=True)
        if folder is None or not folder.is_dir():
            folder = Path(tempfile.mkdtemp(prefix=DOWNLOADS_ROOT))
            self.downloads = str(folder)
        return folder

    def close(self) -> None:
        """Free what the conversation holds on the server: its stored results and its downloads folder.

        Safe to call more than once; the conversation's lines stay readable until it is dropped.
        """
        self.closed = True
        if self.page and self.store is not None:
            self.store.drop(self.page, self.answered)
        if self.page and self.maps is not None:  # its maps' tokens and its selection die with it
            self.maps.forget(self.page)
        if self.downloads:
            shutil.rmtree(self.downloads, ignore_errors=True)
            self.downloads = ""
