"""parse -> run -> Reply. Nothing raises past :func:`execute`.

Each command's handler runs in a worker thread under the per-command time limit
(``ASSISTANT_TIME_LIMIT_S``). When the limit passes, the reply says the command gave
up and the app goes on serving. Python cannot stop a thread from outside, so the
worker's :class:`~tools.core.cancel.CancelToken` is set: the toolkit's long loops call
:func:`tools.core.cancel.check` between batches and stop at the next one, releasing the
model's lock (t-SNE and UMAP fits have no such hook and finish their fit first). The
worker's result is dropped and it cannot touch the conversation: handlers work on a
copy of the :class:`Session`, merged back only when they finish in time.
"""

from __future__ import annotations

import contextvars
import dataclasses
import logging
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from assistant.commands.base import Context
from assistant.commands.registry import TABLE
from assistant.corpora import Jobs, in_use, rows_as_texts
from assistant.maps import Maps
from assistant.parsing import parse
from assistant.reading import corrected, read_line
from assistant.session import Session
from assistant.store import ResultStore, chart_frames
from assistant.understanding import is_question
from tools.benchmark.access import WEB, DataAccess
from tools.core import cancel
from tools.core.config import Settings
from tools.core.errors import UserError
from tools.core.results import Chart, Result, error_json
from tools.core.timing import stamped
from tools.corpus.folder import ROW
from tools.models.hub import ModelHub

log = logging.getLogger("assistant")


@dataclass(frozen=True)
class Reply:
    """What one command line produced: a result, or one sentence saying what was wrong."""

    line: str
    result: Result | None = None
    error: str | None = None
    command: str = ""
    #: The command line that ran ("" when none did); for a question, the line it was read as.
    interpreted_as: str = ""
    #: Command lines offered when a question was not clear enough to act on.
    suggestions: tuple[str, ...] = ()
    #: Whether the line was read as a question in plain English.
    routed: bool = False
    #: For a question: why it was read as ``interpreted_as`` (the nearest example question, the deciding words).
    read_because: str = ""

    @property
    def ok(self) -> bool:
        return self.error is None

    def to_json(self) -> dict[str, Any]:
        """The JSON of DESIGN.md, for ``--json`` and the HTTP ``run`` endpoint."""
        body = self.result.to_json() if self.result is not None else error_json(self.error or "", self.command)
        return {**body, "interpreted_as": self.interpreted_as or None, "read_because": self.read_because or None,
                "suggestions": list(self.suggestions)}


def execute(
    line: str,
    session: Session,
    hub: ModelHub,
    settings: Settings | None = None,
    progress: Callable[[float, str], None] | None = None,
    access: DataAccess = WEB,
    store: ResultStore | None = None,
    jobs: Jobs | None = None,
    background: bool = True,
    maps: Maps | None = None,
) -> Reply:
    """Run one command line in a conversation.

    Predictable mistakes come back as ``Reply.error`` with their sentence; any
    other exception is logged with its traceback and a reference id, and the
    user gets one sentence naming that id. The session keeps its state either way.
    ``access`` says which files ``--data`` may read: :data:`tools.benchmark.access.WEB` (data folders
    and uploads) unless the caller is the command line (:meth:`DataAccess.local`). ``store`` keeps the
    latest full results for exports: the app's one store (a conversation of its own otherwise); ``jobs``
    the app's background encodings; ``background`` False makes a long job finish before the reply (the CLI);
    ``maps`` the app's servable corpus maps (given to the conversation once, like ``store``).
    """
    settings = settings or hub.settings
    if session.store is None:
        session.store = store or ResultStore(settings.results_mb * 2**20)
    if session.maps is None:
        session.maps = maps if maps is not None else Maps()
    verb = ""
    work = _private_copy(session)
    ran, routed = line.strip(), is_question(line, TABLE)
    offered: tuple[str, ...] = ()  # a close call's runner-up reading, offered beside the answer
    because = ""
    try:
        reading = read_line(line, work, hub, settings, progress)
        if reading.unclear is not None:  # not clear enough to act on: its sentence and the likeliest lines
            return Reply(line, error=reading.unclear.message, suggestions=reading.unclear.suggestions, routed=True)
        ran, routed, offered, because = reading.ran, reading.routed, reading.offered, reading.because
        inv = reading.inv or parse(ran, TABLE, settings)
        verb = inv.verb
        start = time.perf_counter()
        ctx = Context(work, hub, settings, progress or (lambda fraction, message: None), commands=TABLE,
                      access=access, jobs=jobs or Jobs(), background=background, maps=session.maps)
        inv = with_corpus_rows(ctx, inv)
        result = run_limited(TABLE[inv.verb].run, ctx, inv, settings.time_limit_s)
        result = stamped(limit_charts(result, settings.max_chart_rows), start)
    except UserError as exc:
        if verb and not routed:  # a typed line that ran and failed: "what about layer 2?" after a layer out of
            session.tried = ran  # range changes it (a failed reading of a question is dropped: it was a guess)
        read_as = ran if routed and ran != line.strip() else ""  # shown as "Read as", one click from editing
        return Reply(line, error=str(exc), command=verb, interpreted_as=read_as, routed=routed,
                     suggestions=corrected(ran, exc.fixes), read_because=because if read_as else "")
    except Exception:
        ref = uuid.uuid4().hex[:8]
        log.exception("command failed [ref %s]: %r", ref, line[:500])
        return Reply(
            line,
            error=f"Something went wrong inside `{verb or 'the command'}` (reference {ref}, logged on the "
                  "server); nothing you had is lost, and the next command will work.",
            command=verb, routed=routed,
        )
    for f in dataclasses.fields(session):  # the handler finished in time: keep what it changed
        if f.init:
            setattr(session, f.name, getattr(work, f.name))
    session.tried = ""
    session.remember(ctx.ran or ran, result)  # the turn for history, again and export (a question: its command)
    return Reply(line, result=result, command=verb, interpreted_as=ran, routed=routed, suggestions=offered,
                 read_because=because if routed else "")


def with_corpus_rows(ctx: Context, inv: Any) -> Any:
    """``#12`` in a command's texts is row 12 of the corpus in use (``compare #12 | #40``)."""
    if not TABLE[inv.verb].rows_as_texts or not any(ROW.match(t.strip()) for t in inv.texts):
        return inv
    corpus = in_use(ctx.settings, ctx.session.key, ctx.session.corpus, inv.options.get("corpus"))
    return dataclasses.replace(inv, texts=rows_as_texts(corpus, inv.texts))


def _private_copy(session: Session) -> Session:
    """The handler's own copy of the conversation (its lists copied too), merged back only if it finishes."""
    return dataclasses.replace(session, **{f.name: list(getattr(session, f.name)) for f in dataclasses.fields(session)
                                           if isinstance(getattr(session, f.name), list) and f.init})


def run_limited(handler: Callable[[Context, Any], Result], ctx: Context, inv: Any, limit_s: float) -> Result:
    """Run ``handler`` in a worker thread; give up with a :class:`UserError` after ``limit_s`` seconds.

    The worker runs in a copy of the caller's context variables (Gradio's progress bar
    lives in them) with its own :class:`~tools.core.cancel.CancelToken`. At the limit the token
    is set, so the work stops at its next :func:`tools.core.cancel.check` (within about a
    batch), and the caller gets the sentence at once; the stopped work's result is dropped.
    """
    if not limit_s or limit_s <= 0:
        return handler(ctx, inv)
    box: dict[str, Any] = {}
    token = cancel.CancelToken()

    def work() -> None:
        with cancel.scope(token):
            try:
                box["result"] = handler(ctx, inv)
            except BaseException as exc:  # handed to the caller's thread below
                box["error"] = exc
        if token.cancelled:
            log.info("command %r stopped after its time limit (%s)", inv.verb,
                     "at a cancel check" if isinstance(box.get("error"), cancel.Cancelled) else "it had finished")

    thread = threading.Thread(target=contextvars.copy_context().run, args=(work,),
                              name=f"command-{inv.verb}", daemon=True)
    thread.start()
    thread.join(limit_s)
    if thread.is_alive():
        message = (f"`{inv.verb}` gave up after {limit_s:g} seconds, the time limit per command "
                   "(ASSISTANT_TIME_LIMIT_S), and was stopped; try shorter or fewer texts, or a smaller "
                   "--sample / --n.")
        token.cancel(message)
        log.warning("command %r gave up after %.1f s; its work stops at its next cancel check", inv.verb, limit_s)
        raise UserError(message)
    if "error" in box:
        raise box["error"]
    return box["result"]


def chart_rows(chart: Any) -> int:
    """Rows of data an Altair chart embeds, over its layers and panels (each frame counted once)."""
    return sum(len(frame) for frame in chart_frames(chart))


def limit_charts(result: Result, max_rows: int) -> Result:
    """Leave out any chart over ``max_rows`` rows of data (ASSISTANT_MAX_CHART_ROWS), saying so."""
    kept: list[Chart] = []
    warnings = list(result.warnings)
    for chart in result.charts:
        rows = chart_rows(chart.chart)
        if rows > max_rows:
            warnings.append(f"The chart {chart.name!r} would carry {rows:,} rows of data, over the limit of "
                            f"{max_rows:,} (ASSISTANT_MAX_CHART_ROWS), so it was left out; the tables hold "
                            "every number." + (" For a whole corpus, `map` draws every row with WebGL."
                                               if result.command in ("project", "vocab") else ""))
        else:
            kept.append(chart)
    if len(kept) == len(result.charts):
        return result
    return dataclasses.replace(result, charts=kept, warnings=warnings)
