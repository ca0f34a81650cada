"""Patterns compiled once, and the spans of a question that a reading cuts out (shared by ``spoken`` and
``models_said``)."""

from __future__ import annotations

import functools
import re

from assistant.understanding.words import LEAD


@functools.cache
def compiled(pattern: str) -> re.Pattern[str]:
    """A pattern compiled once (case-insensitive): a question is read with several hundred of them."""
    return re.compile(pattern, re.I)


def with_lead(text: str, start: int, end: int) -> tuple[int, int]:
    """The span ``start:end`` of ``text`` widened to the word that leads into it ("at", "with"), if any."""
    lead = compiled(rf"{LEAD}$").search(text[:start])
    return (lead.start() if lead else start), end


def overlaps(span: tuple[int, int], cuts: list[tuple[int, int]]) -> bool:
    """Whether ``span`` overlaps any of ``cuts``."""
    return any(span[0] < end and start < span[1] for start, end in cuts)
