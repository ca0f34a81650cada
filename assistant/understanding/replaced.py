"""One of the previous command's texts replaced by a new one ("swap the second one for 'X'")."""

from __future__ import annotations

import re
from collections.abc import Mapping

from assistant.commands import slots
from assistant.commands.base import Command, Invocation
from assistant.parsing import parse
from assistant.session import Session
from assistant.sharing.links import merged_line
from assistant.understanding import fill
from assistant.understanding.context import previous_command
from assistant.understanding.facts import Understanding
from tools.core.config import Settings
from tools.core.text import code

#: "swap the second one for 'X'", "replace the first sentence with 'X'": one of the previous texts replaced.
_SWAP = re.compile(r"\b(?:swap|replace|change|switch|exchange)\s+(?:out\s+)?the\s+(first|second|third|last)\s+"
                   r"(?:one|sentence|text)\s+(?:for|with|to|by)\b", re.I)
#: "swap in 'X' for the second one", "try with 'X' instead of the second sentence": the same, said the other way.
_SWAP_IN = re.compile(r"\b(?:swap|put|use|try|plug|sub|substitute)\b.*\b(?:for|instead\s+of|in\s+place\s+of)\s+the\s+"
                      r"(first|second|third|last)\s+(?:one|sentence|text)\b", re.I)


def swapped_text(question: str, session: Session, table: Mapping[str, Command],
                 settings: Settings) -> Understanding | None:
    """The previous command with one of its texts replaced by the one quoted ("swap the second one for 'X'"; after
    a command that takes a word first, the sentences are counted: "the second sentence" of `word w | s1 | s2`)."""
    said = _SWAP.search(question) or _SWAP_IN.search(question)
    if said is None or (last := previous_command(session, table)) is None:
        return None
    read = slots.read(question)
    before = parse(last[0], table, settings)
    first = 1 if last[1].texts.word_first else 0
    index = fill.WHICH[said.group(1).lower()]
    if len(read.texts) != 1 or not -len(before.texts) + first <= index < len(before.texts) - first:
        return None
    texts = list(before.texts)
    texts[index + first if index >= 0 else index] = read.texts[0]
    line = merged_line(last[0], Invocation("again", texts, {}), table, settings)
    return Understanding(line=line, follow_up=True, because=f"it replaces the {said.group(1).lower()} text of "
                                                           f"{code(last[0], 80)}")
