"""A row, a question's texts and its spoken options -> the command line that the parser then runs."""

from __future__ import annotations

import re
from collections.abc import Mapping

import assistant.understanding.slots as slots_mod
import assistant.understanding.spoken as spoken
from assistant.commands.spec import CommandSpec
from assistant.understanding.slots import Slots
from tools.core.errors import UserError
from tools.core.text import code

_PHRASING_WORD = re.compile(r"[A-Za-z][\w'-]*")
#: Rows whose first text is a word and the rest sentences that contain it.
WORD_FIRST = frozenset({"word", "static"})


class MissingTexts(UserError):
    """The question names a command but not the texts it needs."""


def asking_words(spec: CommandSpec) -> frozenset[str]:
    """Words that ask rather than carry, for this row: the general ones and its phrasings' own words."""
    own = {w.lower() for p in spec.phrasings for w in _PHRASING_WORD.findall(slots_mod.quoted_free(p))}
    return slots_mod.ASKING | frozenset(own)


def read(question: str, spec: CommandSpec) -> tuple[Slots, dict[str, str]]:
    """The question's texts and the options of ``spec`` said in its words."""
    outside = slots_mod.read(question).rest
    said = spoken.read(outside, spec)
    return slots_mod.read(question, unquoted=said.rest, asking=asking_words(spec)), said.options


def texts_for(spec: CommandSpec, slots: Slots, table: Mapping[str, CommandSpec]) -> list[str]:
    """The texts ``spec`` runs on, in its order (word first for ``word``/``static``, one word for ``neighbors``)."""
    least, most = spec.texts
    if most == 0:
        return []
    texts = list(slots.texts)
    if spec.name == "help":
        named = [w for w in re.findall(r"[\w-]+", slots.rest.lower()) if w in table and table[w].name != "help"]
        return [table[named[0]].name] if named else []
    if spec.name == "model":
        return texts[:1] if slots.quoted else []
    if spec.name == "mask":
        masked = [t for t in texts if "[MASK]" in t]
        return masked[:1] or ([slots.payload] if "[MASK]" in slots.payload else [])
    if spec.name == "neighbors":
        word = slots.word or (texts[0].split()[-1] if texts else None)
        return [word.strip(".,?!")] if word else []
    if spec.name in WORD_FIRST and slots.word is not None:
        sentences = [t for t in slots.sentences if t != slots.word]
        if spec.name == "word" or len(sentences) >= 2:
            return [slots.word, *sentences]
    if spec.name in WORD_FIRST and slots.quoted and len(slots.sentences) >= 2:
        shared = shared_word(slots.rest, slots.sentences, asking_words(spec))
        if shared is not None:  # "is bank in 'the river bank' the same vector as in 'a bank loan'?"
            return [shared, *slots.sentences]
    if most == 1 and not slots.quoted and slots.payload:
        return [slots.payload]  # one text: "and" inside it is part of it
    return texts if most is None else texts[:most]


def shared_word(outside: str, sentences: list[str], asking: frozenset[str]) -> str | None:
    """The first unquoted word that every quoted sentence contains as a word: the target the question
    named without quotes. Asking words ("is", "the", "same") never count."""
    for word in _PHRASING_WORD.findall(outside):
        if word.lower() in asking or len(word) < 2:
            continue
        pattern = re.compile(rf"(?<![\w'-]){re.escape(word)}(?![\w'-])", re.IGNORECASE)
        if all(pattern.search(sentence) for sentence in sentences):
            return word
    return None


def build(spec: CommandSpec, texts: list[str], options: Mapping[str, str]) -> str:
    """The command line: the verb, the texts between ``|`` (quoted when they must be), the options."""
    parts = [spec.name]
    if texts:
        parts.append(" | ".join(as_text(t) for t in texts))
    for name, value in options.items():
        parts.append(f"--{name}" + (f" {value}" if value else ""))
    return " ".join(parts)


def as_text(text: str) -> str:
    """A text as the parser reads it back: quoted when it holds ``|`` or ``--`` or starts with a quote."""
    if "|" not in text and "--" not in text and text[:1] not in "\"'":
        return text
    mark = "'" if '"' in text else '"'
    return f"{mark}{text}{mark}"


def line_for(spec: CommandSpec, question: str, table: Mapping[str, CommandSpec]) -> str:
    """The command line that answers ``question`` with ``spec``, or :class:`MissingTexts`."""
    slots, options = read(question, spec)
    texts = texts_for(spec, slots, table)
    least = spec.texts[0]
    if len(texts) < least:
        need = spec.texts_hint or f"{least} text{'s' if least > 1 else ''}"
        found = (f"found {len(texts)} text{'s' if len(texts) != 1 else ''}" if texts else "found no text to work on")
        raise MissingTexts(
            f"I read this as {code(spec.name, 20)} but {found}; it needs {need}: put each text in quotes, "
            f"for example {code(spec.examples[0], 90)}.")
    return build(spec, texts, options)
