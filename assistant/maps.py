"""Corpus maps served to the page: who may fetch which map, and the HTTP endpoints that serve it.

``map`` issues a **grant**: an unguessable token (``secrets.token_urlsafe``, 192 bits) tied to the
conversation that asked and to the corpus folder that conversation was allowed to read (the corpus
was found through :func:`assistant.corpora.in_use`, so a shared server's visitor only ever gets a
token for their own or a published corpus). The endpoints answer a token, never a corpus name or a
path; a token dies with its conversation (:meth:`Maps.forget`, called when the conversation is freed),
when its corpus is dropped, and when newer maps push it out of the byte budget.

Endpoints (``/assistant/map/<token>/...``), mounted on the page's own server by :func:`lifespan`:

- ``points``: the binary map (:func:`tools.corpus.layout.points_bytes`), 9 bytes per row plus 16.
- ``meta``: JSON: rows, method, colour categories and counts, where cluster labels go.
- ``rows?ids=1,2,3``: JSON: those rows' texts and metadata (at most :data:`ROWS_PER_CALL`).
- ``selection`` (POST, JSON ``{"ids": [...]}``): the conversation's selection, read by ``--in selection``.
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tools.core.errors import UserError
from tools.core.text import code
from tools.corpus.facts import CorpusMap
from tools.corpus.folder import Corpus
from tools.corpus.layout import points_bytes

PREFIX = "/assistant/map"
ROWS_PER_CALL = 200
TEXT_CHARS = 2000
#: Bytes of coordinates and colours every grant together may keep in memory.
BUDGET_BYTES = 512 * 2**20
#: Maps one conversation keeps servable (the latest ones).
PER_CONVERSATION = 4
NO_STORE = {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"}


@dataclass
class Grant:
    """One servable map: whose it is, which corpus, and its points."""

    token: str
    conversation: str
    corpus: Corpus
    facts: CorpusMap
    owner: str = ""
    created: float = field(default_factory=time.monotonic)

    @property
    def nbytes(self) -> int:
        return int(self.facts.xy.nbytes + self.facts.codes.nbytes)

    def meta(self) -> dict[str, Any]:
        f = self.facts
        return {"rows": f.rows, "method": f.method, "color": f.color, "corpus": f.corpus.name,
                "categories": list(f.categories), "counts": list(f.counts),
                "anchors": [{"id": i, "label": label} for i, label in f.anchors],
                "bytes_per_point": round(f.bytes_per_point, 3), "code_bytes": int(f.codes.dtype.itemsize)}


@dataclass(frozen=True)
class Selection:
    """Rows a conversation selected on a map."""

    corpus_key: str
    corpus_name: str
    ids: np.ndarray


class Maps:
    """The app's grants and each conversation's selection, in memory, under one byte budget."""

    def __init__(self, budget_bytes: int = BUDGET_BYTES) -> None:
        self.budget = budget_bytes
        self._grants: OrderedDict[str, Grant] = OrderedDict()
        self._selections: dict[str, Selection] = {}
        self._lock = threading.Lock()

    def issue(self, conversation: str, corpus: Corpus, facts: CorpusMap, owner: str = "") -> str:
        """A new token for ``conversation`` (a page) to fetch this map with; ``owner`` (the conversation that
        outlives its pages) is whose selection on it is kept on disk."""
        token = secrets.token_urlsafe(24)
        with self._lock:
            self._grants[token] = Grant(token, conversation, corpus, facts, owner)
            own = [t for t, g in self._grants.items() if g.conversation == conversation]
            for old in own[:-PER_CONVERSATION]:
                del self._grants[old]
            while sum(g.nbytes for g in self._grants.values()) > self.budget and len(self._grants) > 1:
                self._grants.popitem(last=False)
        return token

    def get(self, token: str) -> Grant | None:
        """The live grant for ``token`` (None when unknown, expired, or its corpus was dropped)."""
        with self._lock:
            grant = self._grants.get(token)
        if grant is not None and not grant.corpus.folder.is_dir():
            self.revoke(token)
            return None
        return grant

    def revoke(self, token: str) -> None:
        with self._lock:
            self._grants.pop(token, None)

    def forget(self, conversation: str) -> None:
        """The conversation ended: its maps and its selection go."""
        with self._lock:
            for token in [t for t, g in self._grants.items() if g.conversation == conversation]:
                del self._grants[token]
            self._selections.pop(conversation, None)

    def select(self, grant: Grant, ids: list[int]) -> int:
        """Keep ``ids`` (valid rows of the grant's map) as its conversation's selection; how many were kept."""
        rows = np.unique(np.asarray([i for i in ids if isinstance(i, int) and 0 <= i < grant.facts.rows],
                                    dtype=np.int64))
        with self._lock:
            if len(rows):
                self._selections[grant.conversation] = Selection(grant.facts.corpus.key, grant.facts.corpus.name, rows)
            else:
                self._selections.pop(grant.conversation, None)
        if grant.owner:
            grant.corpus.keep_selection(grant.owner, rows)
        return len(rows)

    def selection(self, conversation: str) -> Selection | None:
        with self._lock:
            return self._selections.get(conversation)

    def count(self) -> int:
        """Maps servable now."""
        with self._lock:
            return len(self._grants)


def rows_among(maps: Maps, conversation: str, corpus: Corpus, raw: str | None,
               owner: str = "") -> np.ndarray | None:
    """The row ids ``--in`` names: ``selection`` (the map's lasso: this page's, else the one ``owner`` kept on
    the corpus before a reload or a restart), or ids and ranges (``3,8,10-20``)."""
    if raw is None or not raw.strip():
        return None
    raw = raw.strip()
    if raw.lower() == "selection":
        chosen = maps.selection(conversation)
        kept = corpus.kept_selection(owner) if chosen is None and owner else None
        if kept is not None:
            return kept
        if chosen is None:
            raise UserError("There is no selection yet: draw a lasso on a `map` (shift-drag), then use "
                            "`--in selection`; or name rows, like `--in 3,8,10-20`.")
        if chosen.corpus_key != corpus.key:
            raise UserError(f"The selection is on corpus {code(chosen.corpus_name, 30)}, not {code(corpus.name, 30)}; "
                            f"add `--corpus {chosen.corpus_name}`.")
        return chosen.ids
    ids: list[int] = []
    for part in raw.replace(" ", "").split(","):
        low, dash, high = part.partition("-")
        if not low.isdigit() or (dash and not high.isdigit()):
            raise UserError(f"--in takes `selection` or row ids and ranges like `3,8,10-20`; got {code(raw, 40)}.")
        ids.extend(range(int(low), int(high) + 1) if dash else [int(low)])
    rows = np.unique(np.asarray(ids, dtype=np.int64))
    if rows[-1] >= corpus.manifest.rows:
        raise UserError(f"Corpus {code(corpus.name, 30)} has rows 0 to {corpus.manifest.rows - 1}; --in names "
                        f"row {rows[-1]}.")
    return rows


# --- HTTP ------------------------------------------------------------------------------------------

def _rows_json(grant: Grant, raw: str) -> dict[str, Any]:
    try:
        ids = [int(x) for x in raw.split(",") if x.strip()][:ROWS_PER_CALL]
    except ValueError:
        ids = []
    frame = grant.corpus.rows()
    out = []
    for i in ids:
        if 0 <= i < len(frame):
            record = frame.iloc[i]
            meta = {str(k): (None if v is None or (isinstance(v, float) and v != v) else
                             v.item() if hasattr(v, "item") else str(v))
                    for k, v in record.items() if k not in ("id", "text")}
            out.append({"id": i, "text": str(record["text"])[:TEXT_CHARS], "meta": meta})
    return {"rows": out}


def endpoints(maps: Maps) -> list[Any]:
    """The map routes (Starlette), each answering only a live token."""
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route

    def granted(request: Request) -> Grant | None:
        return maps.get(request.path_params["token"])

    gone = {"error": "This map is no longer served (its conversation ended or the corpus was dropped); run `map` "
                     "again."}

    async def points(request: Request) -> Response:
        grant = granted(request)
        if grant is None:
            return JSONResponse(gone, status_code=404, headers=NO_STORE)
        body = points_bytes(grant.facts.xy, grant.facts.codes)
        return Response(body, media_type="application/octet-stream", headers=NO_STORE)

    async def meta(request: Request) -> Response:
        grant = granted(request)
        return JSONResponse(gone, 404, NO_STORE) if grant is None else JSONResponse(grant.meta(), headers=NO_STORE)

    async def rows(request: Request) -> Response:
        grant = granted(request)
        if grant is None:
            return JSONResponse(gone, status_code=404, headers=NO_STORE)
        return JSONResponse(_rows_json(grant, request.query_params.get("ids", "")), headers=NO_STORE)

    async def selection(request: Request) -> Response:
        grant = granted(request)
        if grant is None:
            return JSONResponse(gone, status_code=404, headers=NO_STORE)
        body = await request.body()
        if len(body) > 16 * grant.facts.rows + 1024:
            return JSONResponse({"error": "too many ids"}, status_code=413, headers=NO_STORE)
        try:
            ids = json.loads(body or b"{}").get("ids", [])
        except (ValueError, AttributeError):
            return JSONResponse({"error": "send JSON {\"ids\": [...]}"}, status_code=400, headers=NO_STORE)
        return JSONResponse({"selected": maps.select(grant, ids if isinstance(ids, list) else [])}, headers=NO_STORE)

    return [Route(f"{PREFIX}/{{token}}/points", points, methods=["GET"]),
            Route(f"{PREFIX}/{{token}}/meta", meta, methods=["GET"]),
            Route(f"{PREFIX}/{{token}}/rows", rows, methods=["GET"]),
            Route(f"{PREFIX}/{{token}}/selection", selection, methods=["POST"])]


@asynccontextmanager
async def lifespan(app: Any) -> AsyncIterator[None]:
    """Mount the map endpoints of the page's :class:`Maps` (``blocks.maps``) on Gradio's server as it starts."""
    blocks = app.get_blocks() if hasattr(app, "get_blocks") else None
    maps = getattr(blocks, "maps", None)
    if isinstance(maps, Maps) and not any(str(getattr(r, "path", "")).startswith(PREFIX) for r in app.router.routes):
        for route in reversed(endpoints(maps)):
            app.router.routes.insert(0, route)
    yield
