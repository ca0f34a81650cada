"""The routing indexes made in this process, one making at a time per model and rows, and how far a making has got,
shown to the questions that wait for it.

A server makes the default model's index in the background as it starts (tens of seconds on a small CPU: every
example question is embedded, then the classifier learns from them); a question asked meanwhile waits for it and
shows this progress, as does a process that makes an index for its own first question (a one-shot command line, a
model not used before)."""

from __future__ import annotations

import contextlib
import threading
import weakref
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from tools.models.hub import LoadedModel

Index = TypeVar("Index")

#: What a caller is told as a wait goes on: (fraction done, what is happening).
Progress = Callable[[float, str], None]
#: The share of the making that embedding the examples takes (the classifier's fit is the rest).
EMBEDDING_SHARE = 0.85
#: How often a waiting question looks again at the making's progress, in seconds.
POLL_S = 0.25


@dataclass
class Making:
    """One index's making: the lock its maker holds and how far it has got, which its maker's own caller and every
    question waiting for the lock are told."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    #: How many examples are embedded, of how many (0 of 0 before embedding starts or when all were kept).
    done: int = 0
    total: int = 0
    fitting: bool = False
    #: The maker's own caller, told of each step.
    told: Progress | None = None

    @property
    def fraction(self) -> float:
        if self.fitting:
            return EMBEDDING_SHARE
        return EMBEDDING_SHARE * self.done / self.total if self.total else 0.0

    @property
    def message(self) -> str:
        if self.fitting:
            return "Learning to read questions: fitting the classifier"
        if self.total:
            return f"Learning to read questions: {self.done:,} of {self.total:,} examples embedded"
        return "Learning to read questions"

    def embedded(self, done: int, total: int) -> None:
        """``done`` of ``total`` examples are embedded."""
        self.done, self.total = done, total
        self._tell()

    def fit_begins(self) -> None:
        """The classifier starts learning from the examples."""
        self.fitting = True
        self._tell()

    def _tell(self) -> None:
        if self.told is not None:
            self.told(self.fraction, self.message)

    @contextlib.contextmanager
    def held(self, progress: Progress | None) -> Iterator[None]:
        """Hold the making's lock; while another thread holds it (making the index), tell ``progress`` how far it
        has got every :data:`POLL_S` seconds. Whoever holds it has ``progress`` told of its own steps."""
        if not self.lock.acquire(blocking=False):
            while not self.lock.acquire(timeout=POLL_S):
                if progress is not None:
                    progress(self.fraction, self.message)
        try:
            self.done, self.total, self.fitting, self.told = 0, 0, False, progress
            yield
        finally:
            self.told = None
            self.lock.release()


#: Each loaded model's indexes (by its unique ``key``), keyed by what they index; freed with the model.
_MADE: dict[str, dict[Hashable, Any]] = {}
_MAKING: dict[tuple[str, Hashable], Making] = {}
_LOCK = threading.Lock()


def made(lm: LoadedModel, key: Hashable, make: Callable[[Making], Index], progress: Progress | None = None) -> Index:
    """``lm``'s index of ``key``: the one made already in this process, else ``make``'s (told how far it has got). One
    making at a time per model and key: a second asker waits for the first one's index, ``progress`` told how far
    that making has got (or, when it makes the index itself, how far it has)."""
    with _LOCK:
        found = _MADE.get(lm.key, {}).get(key)
        if found is not None:  # (every question: no record made for it)
            return found
        making = _MAKING.get((lm.key, key)) or _MAKING.setdefault((lm.key, key), Making())
    with making.held(progress):
        with _LOCK:
            found = _MADE.get(lm.key, {}).get(key)
        if found is not None:
            return found
        index = make(making)
        with _LOCK:
            if lm.key not in _MADE:
                weakref.finalize(lm, _forget, lm.key)
            return _MADE.setdefault(lm.key, {}).setdefault(key, index)


def _forget(model_key: str) -> None:
    with _LOCK:
        _MADE.pop(model_key, None)
        for k in [k for k in _MAKING if k[0] == model_key]:
            del _MAKING[k]
