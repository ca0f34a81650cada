"""A question's payload split into its texts: at ``|``, ";", " / ", "vs" / "versus"; else at commas, "and" and
"with", except inside a phrase said twice ("again and again") and between two words joined by "to" ("king to
queen")."""

from __future__ import annotations

import re

#: A blank in a text, as the commands take it.
MASKED = re.compile(r"\[MASK\]|<mask>")
_SEPARATORS_STRONG = re.compile(r"\s*(?:\||;|\s/\s|\bvs\.?(?=\s)|\bversus\b)\s*", re.I)
_SEPARATORS_WEAK = re.compile(r"\s*(?:,|\band\b|\bwith\b)\s*", re.I)
#: Two words (or two pairs of words) joined by "to", all the payload is: "king to queen".
_WORD_TO_WORD = re.compile(r"((?!to\b)\w+(?:\s+(?!to\b)\w+)?)\s+to\s+((?!to\b)\w+(?:\s+(?!to\b)\w+)?)", re.I)
#: What ends texts typed after a colon but is not theirs: their own full stops and exclamation marks stay.
TRAILING_ASKED = re.compile(r"(?:[\s?,:;—–]+|\s+(?:only|please|pls|thanks|also|too)|"  # (a dash before the question)
                            r"\s+as\s+(?:an?\s+)?(?:npy|numpy|csv|json|tsv|parquet)?\s*(?:file|download|array)s?)+$",
                            re.I)  # ("as an npy download")
#: How a text that is itself a question starts.
_A_QUESTION = re.compile(r"(?:how|what|who|whose|where|when|why|which|is|are|was|were|do|does|did|can|could|will|would|"
                         r"should|have|has)\b", re.I)
#: A word said twice around "and" ("again and again", "more and more"): one phrase, never two texts.
_ECHO = re.compile(r"\b(\w+)\s+and\s+(\1)\b", re.I)
_JOINED = "\x00"


def split_payload(payload: str) -> list[str]:
    """The payload's texts: split at ``|``, ";", " / ", "vs" / "versus"; else at commas and "and"."""
    if not payload:
        return []
    if MASKED.search(payload) and "|" not in payload:
        return [payload]
    strong = [p for p in _SEPARATORS_STRONG.split(payload) if p.strip()]
    if len(strong) == 1 and re.search(r"\w[.!]$", payload) and not re.search(r"[.!?]\s", payload):
        return [payload]  # one sentence typed with its full stop ("head view of: Dogs chase cats and cats chase mice.")
    echoed = payload if "," in payload or _mirrored(payload) else _ECHO.sub(rf"\1{_JOINED}\2", payload)  # (a list:
    # "A, B and C"; the same words in another order: "dogs chase cats and cats chase dogs")
    pieces = strong if len(strong) > 1 else [p for p in _SEPARATORS_WEAK.split(echoed) if p.strip()]
    if len(pieces) == 1 and (pair := _WORD_TO_WORD.fullmatch(payload.strip(" ?!.,"))) is not None:
        pieces = list(pair.groups())  # "how similar is king to queen": two words, one "to"
    pieces = [p.replace(_JOINED, " and ") for p in pieces]
    texts = [(TRAILING_ASKED.sub("", p.strip()), p.strip()) for p in pieces]
    return [t + "?" if len(strong) > 1 and typed.endswith("?") and _A_QUESTION.match(t) else t  # ("how old are you? |
            for t, typed in texts if t]  # what is your age?": texts that are questions keep their mark)


def _mirrored(payload: str) -> bool:
    """Whether ``payload`` is two texts of the same words in another order around one "and" ("dogs chase cats and
    cats chase dogs"), which a word said twice around it does not join."""
    halves = re.split(r"\s+and\s+", payload.strip(" ?!."), flags=re.I)
    words = [sorted(re.findall(r"\w+", h.lower())) for h in halves]
    return len(halves) == 2 and len(words[0]) >= 2 and words[0] == words[1] and halves[0] != halves[1]
