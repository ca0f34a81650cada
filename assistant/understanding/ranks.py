"""Rows of the last reply named by their rank ("why did the first hit match?", "how close is the third result?"):
read as their ids (``#1536``), which the corpus commands and every command's texts take.

A reply ranks rows when one of its tables has a ``rank`` and an ``id`` column (`search`'s hits, `outliers`); the
reply is read from the conversation's stored results (the latest ones). When it is no longer stored the question is
left as it was; a rank past the table's is refused with the ranks there are.
"""

from __future__ import annotations

import re

import pandas as pd

from assistant.commands.slots import ROW_ID, quoted_spans
from assistant.session import Session
from assistant.understanding.words import ORDINALS
from tools.core.errors import UserError
from tools.core.text import code

#: "the first hit", "the top result", "the 3rd match", "result number 2", "the last one" (hits, results, matches,
#: rows, outliers, texts).
_NOUN = r"(?:hit|result|match|row|outlier|text|one)(?:e?s)?"
_RANKED = re.compile(rf"\b(?:the\s+)?(?:(top|last|{'|'.join(ORDINALS)})|(\d{{1,3}})(?:st|nd|rd|th))\s+{_NOUN}\b|"
                     rf"\b(?:the\s+)?{_NOUN}\s+(?:number|no\.?)\s*(\d{{1,3}})\b", re.I)


def by_id(question: str, session: Session) -> str:
    """``question`` with each row it names by its rank in the last reply's ranking written as that row's id; as it
    was when it names a row by its id already (there "the top hit" says what that row is: "why is #4 the top hit?")."""
    if not session.turns or not _RANKED.search(question) or ROW_ID.search(question):
        return question
    result = session.stored(session.turns[-1])
    ranking = next((t.frame for t in result.tables if {"rank", "id"} <= set(map(str, t.frame.columns))),
                   None) if result is not None else None
    if ranking is None or ranking.empty:
        return question
    quoted = quoted_spans(question)  # a quoted text is a text, whatever it says ("compare 'the top one' and ...")
    return _RANKED.sub(lambda said: said.group(0) if any(a <= said.start() < b for a, b, _ in quoted)
                       else _row(said, ranking), question)


def _row(said: re.Match[str], ranking: pd.DataFrame) -> str:
    word, digits, numbered = said.groups()
    word = (word or "").lower()
    rank = (int(ranking["rank"].max()) if word == "last" else 1 if word == "top" else ORDINALS.get(word)
            or int(digits or numbered))
    rows = ranking.loc[ranking["rank"] == rank, "id"]
    if not len(rows):
        raise UserError(f"The last reply ranks {len(ranking)} rows, so {code(said.group(0).strip(), 30)} is not "
                        f"among them; name one of ranks 1 to {int(ranking['rank'].max())}, or a row by its id "
                        f"(`#{int(ranking['id'].iloc[0])}`).")
    return f"#{int(rows.iloc[0])}"
