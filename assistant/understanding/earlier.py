"""The conversation's earlier commands that a question may point back at: the last one, the last on as many texts
as it points at, the first of several pairs, the texts of several together."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator, Mapping

from assistant.commands.base import Command
from assistant.parsing import parse
from assistant.session import Session
from assistant.sharing.links import META, previous_line
from tools.core.errors import UserError


def previous_command(session: Session, table: Mapping[str, Command],
                     texts: int = 0) -> tuple[str, Command] | None:
    """The conversation's last command line and its row, when there is one a follow-up can change; with ``texts``,
    the last one that ran on at least that many texts ("plot both sentences" after `attend` of one of them)."""
    return next((c for c in recent_commands(session, table) if not texts or len(parse(c[0], table).texts) >= texts),
                None)


#: A follow-up that goes back to an earlier command by its name ("go back to the similarity but at layer 1").
_BACK_TO = re.compile(r"^\W*(?:(?:ok|okay|now|and|so)\W+)*(?:let'?s\s+)?(?:go(?:ing)?\s+back|back|"
                      r"return(?:ing)?)\s+to\s+(?:the\s+|that\s+|my\s+)?([a-z][\w-]*)\b\W*", re.I)


def named_back(question: str, session: Session, table: Mapping[str, Command]) -> tuple[str, Command, str] | None:
    """The command before the last that a question goes back to by its name or another name of it, and the question
    without those words ("go back to the similarity but at layer 1" after `compare` and `why`: `compare`, "but at
    layer 1"), or None."""
    said = _BACK_TO.match(question)
    if said is None:
        return None
    word = said.group(1).lower()
    recent = list(recent_commands(session, table))
    older = next((c for c in recent[1:] if word in (c[1].name, *c[1].aliases)), None)
    if older is None or older[1] is recent[0][1]:
        return None
    return older[0], older[1], question[said.end():]


def first_pair(session: Session, table: Mapping[str, Command]) -> tuple[str, Command] | None:
    """The first of the last commands that ran on two texts each, one after another ("explain the first pair" after
    `compare A | B` and `compare A | C`), when there are two or more of them."""
    pairs = list(itertools.takewhile(lambda c: len(parse(c[0], table).texts) == 2, recent_commands(session, table)))
    return pairs[-1] if len(pairs) > 1 else None


def gathered(session: Session, table: Mapping[str, Command], many: int) -> list[str]:
    """The texts of the last commands together, oldest first, when they are ``many`` ("now put all three in one
    similarity matrix" after `compare A | B` and `compare A | C`), else []; not past a command whose first text is a
    word."""
    runs: list[list[str]] = []
    for line, spec in recent_commands(session, table):
        if spec.texts.word_first:
            return []
        runs.insert(0, parse(line, table).texts)
        texts = list(dict.fromkeys(t for run in runs for t in run))
        if len(texts) >= many:
            return texts if len(texts) == many else []
    return []


def recent_commands(session: Session, table: Mapping[str, Command]) -> Iterator[tuple[str, Command]]:
    """The conversation's command lines a follow-up can change, with their rows, the last first; back to the first
    one that cannot be changed (`help`, `corpus load`)."""
    history = [*session.history, *([session.tried] if session.tried else [])]  # a failed last command too
    while history:
        while history and getattr(table.get(history[-1].split(" ", 1)[0].lower()), "passes_through", False):
            history.pop()  # "now the same comparison on this model": the command before the switch
        try:
            previous = previous_line(history, table)
        except UserError:
            return
        spec = table.get(previous.split(None, 1)[0].lower())
        if spec is None or spec.name in META or not spec.followed:
            return
        yield previous, spec
        del history[len(history) - 1 - history[::-1].index(previous):]
