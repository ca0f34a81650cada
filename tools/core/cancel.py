"""Cancelling long work: a :class:`CancelToken` per command and :func:`check` between batches.

The app runs each command under a time limit. Python cannot stop a thread from outside, so
long loops (encoding batches, benchmark batches, ``vocab`` rows, the model view of
``attend``) call :func:`check` between batches: when the command's token is set, it raises
:class:`Cancelled` and the work stops within about a batch, releasing the model's lock.

The token travels in a context variable that the runner sets in the worker's own
context, so tools need no extra argument and no process-wide state changes per request;
outside a cancellable run :func:`check` does nothing.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
from collections.abc import Iterator

from tools.core.errors import UserError


class Cancelled(UserError):
    """The command's time limit passed; the work stopped at the next check."""


class CancelToken:
    """A flag one runner sets and one command's loops read."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self.reason = ""

    def cancel(self, reason: str = "the command was cancelled") -> None:
        """Ask the work to stop at its next :func:`check`; ``reason`` becomes the error's sentence."""
        self.reason = reason
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()


_TOKEN: contextvars.ContextVar[CancelToken | None] = contextvars.ContextVar("cancel_token", default=None)


@contextlib.contextmanager
def scope(token: CancelToken) -> Iterator[CancelToken]:
    """Make ``token`` the one :func:`check` reads in this context (the worker thread's own)."""
    reset = _TOKEN.set(token)
    try:
        yield token
    finally:
        _TOKEN.reset(reset)


def current() -> CancelToken | None:
    """The token of the command running in this context, if any."""
    return _TOKEN.get()


def check() -> None:
    """Raise :class:`Cancelled` when this command's token is set; call it between batches."""
    token = _TOKEN.get()
    if token is not None and token.cancelled:
        raise Cancelled(token.reason or "The command was cancelled.")
