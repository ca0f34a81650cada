"""The previous command's texts changed by a question: one replaced ("swap the second one for 'X'"), one left out
("remove the last one"), or a word in them replaced ("now with 'He' instead of 'She'", "mask out 'delicious'")."""

from __future__ import annotations

import re
from collections.abc import Mapping

import assistant.understanding.fill as fill
import assistant.understanding.spoken as spoken
from assistant.commands import slots
from assistant.commands.base import Command, Invocation
from assistant.parsing import parse
from assistant.session import Session
from assistant.sharing.links import merged_line
from assistant.understanding.earlier import previous_command
from assistant.understanding.facts import Understanding
from tools.core.config import Settings
from tools.core.text import code

#: "swap the second one for 'X'", "replace the first sentence with 'X'": one of the previous texts replaced.
_SWAP = re.compile(r"\b(?:swap|replace|change|switch|exchange)\s+(?:out\s+)?the\s+(first|second|third|last)\s+"
                   r"(?:one|sentence|text)\s+(?:for|with|to|by)\b", re.I)
#: "swap in 'X' for the second one", "try 'X' as the second sentence": the same, said the other way.
_SWAP_IN = re.compile(r"\b(?:swap|put|use|try|plug|sub|substitute|with|(?:what|how)\s+about)\b.*"
                      r"\b(?:for|as|instead\s+of|in\s+place\s+of)\s+the\s+(first|second|third|last)\s+(?:one|sentence|text)\b",
                      re.I)
#: "what if the second one is 'X'", "make the first sentence 'X'": the same, said as what it becomes.
_SWAP_IS = re.compile(r"^\W*(?:(?:and|now|ok|so)\W+)*(?:what\s+if|suppose|make|let|and\s+if|if)?\s*the\s+"
                      r"(first|second|third|last)\s+(?:one|sentence|text)\s+(?:is|was|were|becomes|be|to|=)?\s*['\"“‘]",
                      re.I)
#: "now explain 'X' against the first one instead": of two previous texts, the one not named replaced.
_AGAINST = re.compile(r"['\"“‘][^'\"”’]+['\"”’]\s+(?:against|with|versus|vs\.?|beside|next\s+to)\s+"
                      r"the\s+(first|second)\s+(?:one|sentence|text)\b", re.I)
#: "what about the first one vs 'X' instead": of two previous texts, the one named kept, the other replaced.
_KEPT_AGAINST = re.compile(r"\bthe\s+(first|second)\s+(?:one|sentence|text)\s+(?:against|versus|vs\.?|next\s+to|to|"
                           r"compared?\s+(?:with|to|against))\s+['\"“‘]", re.I)
#: "remove the last one", "drop the second sentence": one of the previous texts left out.
_DROP = re.compile(r"^\W*(?:(?:and|now|ok|so|please|just)\W+)*(?:remove|drop|delete|take\s+out|leave\s+out|lose|"
                   r"without)\s+(?:the\s+(first|second|third|last)\s+(?:one|sentence|text)|['\"“‘](?P<text>[^'\"”’]+)['\"”’])"
                   r"(?:\s+and\s+(?:rerun|re-run|redo|run\s+(?:it\s+|that\s+)?again|try\s+again)|"
                   r"(?:\s*,\s*|\s+and\s+|\s+but\s+)(?P<more>[^'\"“‘]*?))?\W*$", re.I)  # ("... and use max pooling")
#: "now with 'He' instead of 'She'", "replace 'She' with 'He'", "'He' rather than 'She'": a word of the texts replaced.
_WORD_FOR_WORD = re.compile(r"['\"“‘](?P<new>[^'\"”’]+)['\"”’]\s+(?:instead\s+of|rather\s+than|in\s+place\s+of|for)\s+"
                            r"['\"“‘](?P<old>[^'\"”’]+)['\"”’]|\b(?:replace|swap|change)\s+['\"“‘](?P<old2>[^'\"”’]+)['\"”’]"
                            r"\s+(?:with|for|to|by)\s+['\"“‘](?P<new2>[^'\"”’]+)['\"”’]", re.I)
#: The same unquoted, when the question is only that ("now France instead of Italy", "swap cat for dog").
_BARE_WORD_FOR_WORD = re.compile(r"^\W*(?:(?:and|now|ok|so|then|try|with|what\s+about|how\s+about)\W+)*(?:"
                                 r"(?P<new>[\w'-]+)\s+(?:instead\s+of|rather\s+than|in\s+place\s+of)\s+(?P<old>[\w'-]+)|"
                                 r"(?:replace|swap|change)\s+(?P<old2>[\w'-]+)\s+(?:with|for|to|by)\s+(?P<new2>[\w'-]+))"
                                 r"(?:\s+(?:then|instead|please))?\W*$", re.I)
#: "what if I mask out 'delicious'?", "hide 'cat'": that word of the previous text masked, for `mask`.
_MASK_WORD = re.compile(r"\b(?:mask(?:ed|ing)?|hide|blank)\s+(?:out\s+)?(?:the\s+word\s+)?"
                        r"['\"“‘](?P<old>[^'\"”’]+)['\"”’]", re.I)


def swapped_text(question: str, session: Session, table: Mapping[str, Command],
                 settings: Settings) -> Understanding | None:
    """The previous command with one of its texts replaced by the one quoted ("swap the second one for 'X'"; after
    a command that takes a word first, the sentences are counted: "the second sentence" of `word w | s1 | s2`), or,
    of two, the one it does not keep ("'X' against the first one")."""
    said = (_SWAP.search(question) or _SWAP_IN.search(question) or _SWAP_IS.search(question)
            or _AGAINST.search(question) or _KEPT_AGAINST.search(question))
    if said is None or (last := previous_command(session, table)) is None:
        return None
    read = slots.read(question)
    before = parse(last[0], table, settings)
    which = said.group(1).lower()
    if said.re in (_AGAINST, _KEPT_AGAINST):  # the other one of two ("'X' against the first one": the second)
        if len(before.texts) - (1 if last[1].texts.word_first else 0) != 2:
            return None
        which = "second" if which == "first" else "first"
    at = _position(which, last[1], before.texts)
    if len(read.texts) != 1 or at is None:
        return None
    texts = list(before.texts)
    texts[at] = read.texts[0]
    line = merged_line(last[0], Invocation("again", texts, {}), table, settings)
    return Understanding(line=line, follow_up=True, because=f"it replaces the {which} text of {code(last[0], 80)}")


def _position(which: str, spec: Command, texts: list[str]) -> int | None:
    """Where "the first / second / third / last one" is among ``texts`` (after a command that takes a word first,
    the sentences are counted), or None when there is no such text."""
    first = 1 if spec.texts.word_first else 0
    index = fill.WHICH[which.lower()]
    if not -len(texts) + first <= index < len(texts) - first:
        return None
    return index + first if index >= 0 else len(texts) + index


def dropped_text(question: str, session: Session, table: Mapping[str, Command],
                 settings: Settings) -> Understanding | None:
    """The previous command without one of its texts ("remove the last one"), when it still has enough."""
    said = _DROP.search(question)
    if said is None or (last := previous_command(session, table)) is None:
        return None
    before = parse(last[0], table, settings)
    named = said.group("text")  # ("drop 'Interest rates rose.' and rerun": that text, said again)
    at = (before.texts.index(named) if named in before.texts else None) if named else _position(
        said.group(1), last[1], before.texts)
    if at is None or len(before.texts) - 1 < last[1].texts.least:
        return None
    texts = list(before.texts)
    del texts[at]
    more = spoken.read(said.group("more") or "", last[1])  # what it changes besides ("and use max pooling")
    if not fill.only_filler(more.rest):
        return None
    options = {o.dest: more.options[o.name] for o in last[1].options if o.name in more.options}
    line = merged_line(last[0], Invocation("again", texts, options), table, settings)
    which = code(named, 40) if named else f"the {said.group(1).lower()} text"
    return Understanding(line=line, follow_up=True, because=f"it leaves out {which} of {code(last[0], 80)}")


def word_replaced(question: str, session: Session, table: Mapping[str, Command],
                  settings: Settings) -> Understanding | None:
    """The previous command with a word of its texts replaced ("now with 'He' instead of 'She'"), or, for "mask out
    'delicious'", `mask` on the previous text with that word masked."""
    said = _WORD_FOR_WORD.search(question) or _BARE_WORD_FOR_WORD.search(question)
    masked = _MASK_WORD.search(question) if said is None else None
    if (said is None and masked is None) or (last := previous_command(session, table)) is None:
        return None
    before = parse(last[0], table, settings)
    old = (said.group("old") or said.group("old2")) if said is not None else masked.group("old")  # type: ignore[union-attr]
    new = (said.group("new") or said.group("new2")) if said is not None else "[MASK]"
    word = re.compile(rf"(?<![\w-]){re.escape(old)}(?![\w-])", 0 if said is None or said.re is _WORD_FOR_WORD else re.I)
    if not any(word.search(t) for t in before.texts):
        return None
    texts = [word.sub(new, t, count=1) for t in before.texts]
    if said is not None:
        line = merged_line(last[0], Invocation("again", texts, {}), table, settings)
        return Understanding(line=line, follow_up=True, because=f"it puts {code(new, 30)} for {code(old, 30)} in "
                                                               f"{code(last[0], 80)}")
    if "mask" not in table or len(texts) != 1 or slots.read(question).has_mask:  # (a text of its own to fill:
        return None  # "if I mask 'barked' instead: The dog [MASK] all night.")
    return Understanding(line=f"mask {texts[0]}", because=f"it masks {code(old, 30)} in the previous text")
