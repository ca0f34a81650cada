"""Fill in a Result's elapsed time without repeating the stopwatch in every tool."""

from __future__ import annotations

import dataclasses
import functools
import time
from collections.abc import Callable
from typing import ParamSpec

from tools.core.results import Result

P = ParamSpec("P")


def timed(command: str) -> Callable[[Callable[P, Result]], Callable[P, Result]]:
    """Decorate a tool so its Result carries ``elapsed_ms`` (and the command name)."""

    def wrap(fn: Callable[P, Result]) -> Callable[P, Result]:
        @functools.wraps(fn)
        def inner(*args: P.args, **kwargs: P.kwargs) -> Result:
            start = time.perf_counter()
            result = fn(*args, **kwargs)
            elapsed = (time.perf_counter() - start) * 1000
            return dataclasses.replace(result, command=result.command or command, elapsed_ms=elapsed)

        return inner

    return wrap
