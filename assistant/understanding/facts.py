"""What a question was read as (:class:`Understanding`), shared by the reading of new questions and of
follow-ups."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Understanding:
    """What a question was read as: ``line`` to run (with ``suggestions``: the runner-up reading of a close call),
    or ``message`` and ``suggestions`` (command lines)."""

    line: str | None = None
    message: str = ""
    suggestions: tuple[str, ...] = ()
    follow_up: bool = False
    #: Why the question was read as ``line`` (the nearest example question and the words that decided).
    because: str = ""
