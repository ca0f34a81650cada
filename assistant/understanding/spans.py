"""Patterns compiled once, the spans of a question that a reading cuts out (shared by ``spoken`` and
``models_said``), and a command's own terms said in a question (``router``, ``context``)."""

from __future__ import annotations

import functools
import re

from assistant.commands.base import terms_pattern
from assistant.understanding.words import LEAD, RATHER


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


def says_term(terms: tuple[str, ...], outside: str) -> bool:
    """Whether ``outside`` (a question outside its quotes) says one of a command's ``terms`` ("Kornblith", "logit
    lens"), and not only to set it aside ("the probe on that corpus instead of STS-B")."""
    return bool(terms) and any(compiled(RATHER).search(outside[:m.start()]) is None
                               for m in terms_pattern(terms).finditer(outside))


def without_terms(terms: tuple[str, ...], text: str) -> str:
    """``text`` with every one of a command's ``terms`` it says cut out ("selectivity in probing" -> " in ")."""
    return terms_pattern(terms).sub(" ", text) if terms else text
