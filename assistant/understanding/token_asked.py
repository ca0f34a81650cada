"""What one word of a text draws on: "which word does 'it' attend to most?" after a `rollout`, or "what does 'it'
draw on in 'The cat sat on the mat because it was tired.'?": `rollout` of that text, its row read first
(``--token``), attention followed down every layer (Abnar & Zuidema 2020). After `attend`, the raw maps answer."""

from __future__ import annotations

import re
from collections.abc import Mapping

import assistant.understanding.earlier as earlier
import assistant.understanding.fill as fill
from assistant.commands import slots
from assistant.commands.base import Command, Invocation
from assistant.parsing import parse
from assistant.session import Session
from assistant.sharing.links import merged_line
from assistant.understanding.facts import Understanding
from tools.core.config import Settings
from tools.core.text import code

#: Words that ask what a token draws on across the layers (rollout's own question).
_DRAWS = re.compile(r"\b(?:draw(?:s|ing)?\s+on|rel(?:y|ies)\s+on|get(?:s)?\s+its\s+(?:meaning|information)\s+from)\b",
                    re.I)
#: Words that ask what a token attends to: after a `rollout`, its row (after `attend`, the raw maps answer them).
_ATTENDS = re.compile(rf"{_DRAWS.pattern}|\b(?:attend(?:s|ing|ed)?(?:\s+to)?|look(?:s|ing)?\s+at|focus(?:es)?\s+on|"
                      r"pay(?:s)?\s+(?:the\s+most\s+)?attention\s+to)\b", re.I)


def token_asked(question: str, session: Session, table: Mapping[str, Command],
                settings: Settings) -> Understanding | None:
    """`rollout TEXT --token WORD` for a question that quotes one word and asks what it draws on in the text it
    quotes beside it, or, right after a `rollout` of a text that holds the word, what it attends to (the method
    kept)."""
    if "rollout" not in table or _ATTENDS.search(question) is None:  # (a word read before the quotes are)
        return None
    read = slots.read(question)
    if not read.quoted or _ATTENDS.search(read.rest) is None:
        return None
    word, *given = read.texts
    if len(word.split()) != 1 or len(given) > 1 or (given and not fill.holds(given[0], word)):
        return None
    if given:
        if _DRAWS.search(read.rest) is None:
            return None
        return Understanding(line=fill.build(table["rollout"], given, {"token": word}),
                             because=f"it asks what {code(word, 20)} draws on in the text it quotes")
    last = earlier.previous_command(session, table)
    if last is None or last[1].name != "rollout" or not fill.holds(" ".join(parse(last[0], table, settings).texts),
                                                                    word):
        return None
    return Understanding(line=merged_line(last[0], Invocation("again", [], {"token": word}), table, settings),
                         follow_up=True, because=f"it asks what {code(word, 20)} of the previous text attends to")
