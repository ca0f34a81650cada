"""Numbers said in digits or words ("12", "twelve", "twenty-five", "two hundred", "2,000", "third") -> digits."""

from __future__ import annotations

import re

from assistant.understanding.words import NUMBER, ORDINALS, TENS, UNITS

_WHOLE = re.compile(NUMBER, re.I)
_ALONE = re.compile(rf"(?<![\w.,-]){NUMBER}(?![\w-])", re.I)
#: "this one", "the right one": a thing pointed at, not the number one; nor "one another", "one by one".
_POINTED = re.compile(r"\b(?:this|that|the|which|each|every|any|same|other|another|right|wrong|new|no)\s+one\b|"
                      r"\bone\s+(?:another|by\s+one|after\s+(?:the\s+)?other|at\s+a\s+time)\b", re.I)


def is_number(word: str) -> bool:
    """Whether ``word`` is a number in digits or words ("12", "ten", "twenty-five")."""
    return _WHOLE.fullmatch(word) is not None


def number_in(text: str) -> str | None:
    """The one number ``text`` says, in digits ("show ten per layer": 10), or None (none, or several)."""
    found = _ALONE.findall(_POINTED.sub(" ", text))
    return in_digits(found[0]) if len(found) == 1 else None


def in_digits(raw: str) -> str:
    """A number said in digits or words ("twelve", "twenty-five", "two hundred", "2,000", "third") in digits."""
    words = re.split(r"[\s-]+", raw.lower())
    if re.fullmatch(r"\d{1,3}(?:,\d{3})+", raw):  # "2,000"
        return raw.replace(",", "")
    if words[-1] in ("hundred", "thousand"):
        times = 1 if words[0] in ("a", "one") else UNITS.index(words[0])
        return str(times * (100 if words[-1] == "hundred" else 1000))
    if words[0] in ORDINALS:
        return str(ORDINALS[words[0]])
    if words[0] in TENS:
        return str(TENS[words[0]] + (UNITS.index(words[1]) if len(words) > 1 else 0))
    return str(UNITS.index(words[0])) if words[0] in UNITS else raw
