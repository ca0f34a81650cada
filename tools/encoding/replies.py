"""The words of the encoding floor: what unknown and letter-by-letter tokens mean for an answer.

Every command that encodes text gets these warnings from one place (the command runner gathers
:class:`~tools.encoding.unknown.Unseen` records while it runs and adds these sentences to its Result).
"""

from __future__ import annotations

from collections.abc import Iterable

from tools.core.text import code
from tools.encoding.unknown import Unseen

#: Texts named one by one; the rest are counted in one more sentence.
NAMED_TEXTS = 3


def unknown_warnings(seen: Iterable[Unseen]) -> list[str]:
    """One sentence per text with unknown or letter-by-letter tokens (the first few), and a count of the rest."""
    records = list(seen)
    out = [_sentence(s) for s in records[:NAMED_TEXTS]]
    if len(records) > NAMED_TEXTS:
        out.append(f"{len(records) - NAMED_TEXTS:,} more texts hold characters or scripts the vocabulary lacks too; "
                   "their vectors carry less of their meaning.")
    return out


def _sentence(s: Unseen) -> str:
    name = code(s.text, 40)
    if s.unknown:
        chars = f" ({' '.join(s.characters)})" if s.characters else ""
        rest = s.tokens - s.unknown
        effect = ("so the answer says nothing about this text's meaning" if rest == 0 else
                  f"so the answer reflects only its other {rest} token{'s' if rest != 1 else ''}")
        if rest == 0:
            which = f"the only token of {name} is" if s.tokens == 1 else f"all {s.tokens} tokens of {name} are"
        else:
            which = f"{s.unknown} of the {s.tokens} tokens of {name} {'is' if s.unknown == 1 else 'are'}"
        them, their = ("it", "its") if s.unknown == 1 else ("them", "their")
        return (f"{which[0].upper()}{which[1:]} unknown to {s.model}'s vocabulary{chars}: [UNK] stands for {them}, "
                f"one shared vector that carries none of {their} meaning, {effect}.")
    return (f"{s.model} spells {name} letter by letter ({s.spelled} of its {s.tokens} tokens are single letters): "
            "its vocabulary has no words of this script, so the vectors carry little of the text's meaning.")
