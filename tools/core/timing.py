"""A Result's elapsed time, stamped in one place; a tool's one-call form composed from its facts and replies."""

from __future__ import annotations

import dataclasses
import functools
import inspect
import time
from collections.abc import Callable
from typing import ParamSpec, TypeVar

from tools.core.results import Result

P = ParamSpec("P")
F = TypeVar("F")


def stamped(result: Result, start: float, command: str = "") -> Result:
    """``result`` with the time since ``start`` (``time.perf_counter()``) as its ``elapsed_ms``: the one stopwatch
    that tools and the assistant's dispatch both use."""
    elapsed = (time.perf_counter() - start) * 1000
    return dataclasses.replace(result, command=result.command or command, elapsed_ms=elapsed)


def answer(facts: Callable[P, F], reply: Callable[[F], Result], command: str) -> Callable[P, Result]:
    """The one-call tool a notebook uses: ``reply(facts(...))`` timed, with ``facts``'s own signature and docstring.

    Each tool is written once, as its facts function; the Result function is this composition, so the two
    never drift apart.
    """

    @functools.wraps(facts)
    def tool(*args: P.args, **kwargs: P.kwargs) -> Result:
        start = time.perf_counter()
        return stamped(reply(facts(*args, **kwargs)), start, command)

    tool.__name__ = tool.__qualname__ = command
    signature = inspect.signature(facts).replace(return_annotation=Result)
    tool.__signature__ = signature  # type: ignore[attr-defined]  # functions take any attribute; inspect reads it
    return tool
