"""Which corpora a conversation may use, and the background jobs that encode them.

- **Where corpora live.** The command line and a private server (bound to 127.0.0.1 without
  ``--share``) see every corpus under ``ASSISTANT_CORPUS_DIR`` by name. A shared server
  (``ASSISTANT_CORPUS_SHARED``: set by ``--share`` and on a Space) gives each conversation its own
  folder, ``<corpus dir>/conversations/<conversation id>``, that no other visitor can list or
  search, plus the corpora the operator publishes in ``ASSISTANT_CORPUS_PUBLISHED`` (read by all,
  loaded into by none).
- **Encoding is a job, not a command.** ``corpus load`` starts (or joins) one background thread per
  corpus, outside the per-command time limit; the command waits while it can, showing progress, and
  otherwise answers that the work goes on (``corpus info`` shows how far). A job writes each finished
  chunk to disk, so a crash or a restart loses at most the chunk in flight, and ``corpus stop`` cancels
  it between chunks.
"""

from __future__ import annotations

import shutil
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tools.core import cancel
from tools.core.config import Settings
from tools.core.errors import UserError
from tools.core.text import code
from tools.corpus.folder import Corpus
from tools.corpus.store import CorpusStore, Limits

#: The sub-folder of the corpus folder that holds each conversation's own corpora on a shared server.
CONVERSATIONS = "conversations"


def own_store(settings: Settings, conversation: str) -> CorpusStore:
    """Where this conversation's loads go: the corpus folder, or its own sub-folder on a shared server."""
    if settings.corpus_shared:
        return CorpusStore(settings.corpus_path / CONVERSATIONS / conversation, limits=Limits(
            settings.corpus_conversation_mb * 2**20, settings.corpus_conversation_rows,
            "ASSISTANT_CORPUS_CONVERSATION_MB", "ASSISTANT_CORPUS_CONVERSATION_ROWS"))
    return CorpusStore(settings.corpus_path, settings.corpus_disk_mb * 2**20)


def stores(settings: Settings, conversation: str) -> list[CorpusStore]:
    """Every store this conversation may read, its own first, then the operator's published corpora."""
    found = [own_store(settings, conversation)]
    if settings.corpus_published:
        found.append(CorpusStore(Path(settings.corpus_published).expanduser(), None))
    return found


def open_corpus(settings: Settings, conversation: str, name: str) -> Corpus:
    """The corpus called ``name`` among those this conversation may read."""
    everywhere = stores(settings, conversation)
    for store in everywhere:
        if any(name in (c.name, c.key) for c in store.corpora()):
            return store.open(name)
    return everywhere[0].open(name)  # raises with the names it has


def in_use(settings: Settings, conversation: str, chosen: str, named: str | None) -> Corpus:
    """``--corpus NAME``, else the conversation's corpus (``corpus use``), else the only one there is."""
    name = named or chosen
    if name:
        return open_corpus(settings, conversation, name)
    every = [c for s in stores(settings, conversation) for c in s.corpora()]
    if len(every) == 1:
        return every[0]
    if not every:
        raise UserError("There is no corpus yet; load one with `corpus load FILE` (CSV, TSV, JSONL, Parquet or "
                        "TXT with one text per line), or upload a file in the side panel.")
    names = ", ".join(code(c.name, 30) for c in every[:8])
    raise UserError(f"Which corpus? There are {len(every)} ({names}); pick one with `corpus use NAME` or add "
                    "`--corpus NAME`.")


def rows_as_texts(corpus: Corpus, texts: list[str]) -> list[str]:
    """``texts`` with every ``#N`` replaced by row N's text (ids as the corpus tables show them)."""
    named = [corpus.named_row(t) for t in texts]
    if all(n is None for n in named):
        return texts
    rows = corpus.texts()
    return [text if n is None else rows[n] for text, n in zip(texts, named)]


def forget(settings: Settings, conversation: str) -> None:
    """A departed visitor's corpora on a shared server (unless the operator keeps them)."""
    if settings.corpus_shared and not settings.corpus_keep and conversation:
        shutil.rmtree(own_store(settings, conversation).root, ignore_errors=True)


# --- background encoding ------------------------------------------------------------------------

@dataclass
class Job:
    """One corpus being encoded in the background."""

    key: str
    name: str
    thread: threading.Thread | None = None
    token: cancel.CancelToken = field(default_factory=cancel.CancelToken)
    fraction: float = 0.0
    message: str = "starting"
    result: Any = None
    error: BaseException | None = None
    done: threading.Event = field(default_factory=threading.Event)


class Jobs:
    """The encoding jobs of one process, one per corpus key; a second load of the same corpus joins the first."""

    def __init__(self) -> None:
        self._jobs: dict[str, Job] = {}
        self._lock = threading.Lock()

    def start(self, key: str, name: str, work: Callable[[Callable[[float, str], None]], Any]) -> Job:
        """The running job for ``key``, or a new one running ``work(progress)`` in a daemon thread."""
        with self._lock:
            job = self._jobs.get(key)
            if job is not None and not job.done.is_set():
                return job
            job = Job(key, name)
            self._jobs[key] = job

        def progress(fraction: float, message: str) -> None:
            job.fraction, job.message = fraction, message

        def run() -> None:
            with cancel.scope(job.token):
                try:
                    job.result = work(progress)
                except BaseException as exc:  # handed to whoever waits on the job
                    job.error = exc
                finally:
                    job.done.set()

        job.thread = threading.Thread(target=run, name=f"encode-{name}", daemon=True)
        job.thread.start()
        return job

    def running(self, key: str) -> Job | None:
        with self._lock:
            job = self._jobs.get(key)
        return job if job is not None and not job.done.is_set() else None

    def stop(self, key: str) -> bool:
        """Ask the job for ``key`` to stop after its current chunk; False when none runs."""
        job = self.running(key)
        if job is None:
            return False
        job.token.cancel("the encoding was stopped; `corpus load` resumes it from the last finished chunk")
        return True


def wait(job: Job, seconds: float | None, progress: Callable[[float, str], None]) -> bool:
    """Follow ``job`` for at most ``seconds`` (None: until it ends), passing its progress on; True when it ended."""
    end = None if seconds is None else time.monotonic() + seconds
    while not job.done.is_set():
        left = 0.25 if end is None else min(0.25, end - time.monotonic())
        if left <= 0:
            return False
        job.done.wait(left)
        progress(job.fraction, job.message)
        cancel.check()  # the command itself may be stopped; the job goes on
    return True
