"""Options said in words ("at layer 4", "with CLS pooling", "in 3D", "top 10") -> the row's real options.

Nothing here lists a command's options: they come from the row itself (``Command.options``,
their kinds and choices). This module only knows how people *name* an option ("pooling" for
``--pool``, "coloured by" for ``--color``) and a few spoken forms of choices ("t-SNE" for
``tsne``, "the test split" for ``stsb-test``). A value is kept only when the option converts it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from assistant.commands.base import Command
from assistant.commands.options import Option
from tools.core.errors import UserError

#: How people name an option (the row's option names are always accepted too).
OPTION_WORDS: dict[str, tuple[str, ...]] = {
    "layer": ("layer",),
    "head": ("head",),
    "heads": ("heads",),
    "top": ("top", "candidates", "guesses", "predictions", "fills", "suggestions", "words", "answers"),
    "k": ("top", "neighbours", "neighbors", "nearest", "closest", "words", "similar words"),
    "n": ("first", "words", "rows", "tokens", "points", "entries"),
    "sample": ("sample of", "sample", "pairs", "examples"),
    "seed": ("seed",),
    "threshold": ("threshold", "cutoff", "cut-off"),
    "max-length": ("max length", "maximum length", "max-length"),
    "dims": ("d", "dims", "dimensions", "dimensional"),
    "pool": ("pool", "pooling", "poolings", "pooled", "token"),
    "method": ("method", "projection", "with", "using", "via", "by"),
    "color": ("colour", "color", "coloured", "colored", "colouring", "coloring", "by"),
    "strategy": ("strategy", "strategies"),
    "space": ("space", "in", "with", "using", "from"),
    "level": ("level", "per", "each", "by", "one point per"),
    "data": ("split", "set", "data", "on"),
    "padding": ("padding", "pad", "padded", "pad to"),
    "format": ("format", "as"),
    "basis": ("basis", "from"),
}
#: Spoken forms of choice values (a value is always accepted as itself).
CHOICE_WORDS: dict[str, tuple[str, ...]] = {
    "tsne": ("t-sne", "t sne", "tsne"),
    "pca": ("pca", "principal components"),
    "sbert": ("sbert", "sentence-transformers", "sentence transformers"),
    "stsb-test": ("test split", "test set", "stsb-test", "stsb test"),
    "stsb-dev": ("dev split", "dev set", "development set", "stsb-dev", "validation split"),
    "max_length": ("max length", "max_length", "maximum length"),
    "concat-last4": ("concat-last4", "concatenat\\w* (?:of )?the last (?:4|four)(?: layers)?"),
    "sum-last4": ("sum-last4", "sum of the last (?:4|four)(?: layers)?"),
    "mean-last4": ("mean-last4", "(?:mean|average) of the last (?:4|four)(?: layers)?"),
    "sum-all": ("sum-all", "sum of all(?: the)? layers"),
    "all": ("all", "every", "each"),
    "number": ("number", "numbers", "digits"),
    "subword": ("subword", "sub-word", "word pieces?", "wordpieces?"),
    "vowels": ("vowels", "vowel"),
    "length": ("word length", "length"),
    "sentences": ("sentences", "sentence", "texts"),
    "tokens": ("tokens", "token"),
    "vocab": ("vocab", "vocabulary"),
    "html": ("html",),
    "markdown": ("markdown", "md"),
}
#: Choice words too common to stand alone: they count only beside a word naming their option.
COMMON = frozenset({"mean", "max", "first", "last", "length", "number", "all", "every", "each", "model", "word",
                    "tokens", "token", "sentences", "sentence", "texts", "both", "auto", "special", "longest",
                    "vocab", "vocabulary", "cls", "glove"})
#: Flags said in words.
FLAG_WORDS: dict[str, tuple[str, ...]] = {
    "causal": ("causal", "decoder", "masked attention", "future tokens"),
    "truncation": ("truncat\\w*",),
}
_NUMBER_WORDS = {w: i + 1 for i, w in enumerate(
    "one two three four five six seven eight nine ten eleven twelve".split())}
_ORDINALS = {w: i + 1 for i, w in enumerate(
    "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth".split())}
_NUMBER = r"(\d+(?:\.\d+)?|" + "|".join(list(_NUMBER_WORDS) + list(_ORDINALS)) + r")(?:st|nd|rd|th)?"
_LEAD = r"(?:(?:at|in|on|with|using|by|for|from|via|and|of|to|show|give|the|me|only)\s+)*"
#: Characters around a choice within which a word naming its option counts.
WINDOW = 24


@dataclass
class Spoken:
    """Options read from a question's words: ``options`` (name -> raw value, "" for a flag) and
    ``rest`` (the words with those phrases cut out)."""

    options: dict[str, str] = field(default_factory=dict)
    rest: str = ""


def read(text: str, spec: Command) -> Spoken:
    """The options of ``spec`` said in ``text`` (a question outside its quotes)."""
    found: dict[str, str] = {}
    cuts: list[tuple[int, int]] = []

    def keep(option_name: str, value: str, span: tuple[int, int]) -> None:
        option = spec.option(option_name)
        if option is None or option_name in found or _overlaps(span, cuts):
            return
        try:
            option.convert(value if not option.is_flag else None)
        except UserError:
            return
        found[option_name] = value
        cuts.append(span)

    for option in spec.options:  # numbers first: "layer 2 head 5", "top 10", "in 3D"
        if not option.type.numeric:
            continue
        for word in _names(option.name):
            before = re.compile(rf"{_LEAD}\b{word}\s*(?:#|no\.?|number|of|=|:)?\s*{_NUMBER}\b", re.I)
            after = re.compile(rf"{_LEAD}\b{_NUMBER}\s*-?\s*(?:[a-z]+\s+)?{word}\b", re.I)
            for pattern in ((after, before) if option.name == "dims" else (before, after)):
                for m in pattern.finditer(text):
                    keep(option.name, _number(m.group(1)), m.span())
    for option in spec.options:
        if option.is_flag:
            for word in FLAG_WORDS.get(option.name, (option.name,)):
                m = re.search(rf"{_LEAD}\b{word}\b", text, re.I)
                if m:
                    keep(option.name, "", m.span())
        elif not option.type.numeric:
            said = [(choice, span) for choice in _values(spec, option)
                    if (span := _choice(text, option.name, choice)) is not None]
            if option.type.several and len(said) > 1:  # "mean or max" -> mean,max
                span = (min(s[0] for _, s in said), max(s[1] for _, s in said))
                keep(option.name, ",".join(c for c, _ in said), span)
            elif said:
                keep(option.name, *said[0])
    rest = text
    for start, end in sorted(cuts, reverse=True):
        rest = rest[:start] + " " + rest[end:]
    return Spoken(found, re.sub(r"\s+", " ", rest).strip())


def _values(spec: Command, option: Option) -> tuple[str, ...]:
    """The values an option can be said with: its choices, or for a text option the lower-case values
    its usage lists (``--data stsb-dev|stsb-test|FILE`` -> stsb-dev, stsb-test)."""
    if option.choices:
        return option.choices
    listed = re.search(rf"--{re.escape(option.name)} ([^\]\s]+)", spec.usage)
    return tuple(v for v in listed.group(1).split("|") if re.fullmatch(r"[a-z][a-z0-9_-]*", v)) if listed else ()


def _names(option_name: str) -> list[str]:
    words = [option_name.replace("-", "[- ]"), *OPTION_WORDS.get(option_name, ())]
    return [w.replace(" ", "\\s+") for w in dict.fromkeys(words)]


def _choice(text: str, option_name: str, choice: str) -> tuple[int, int] | None:
    """Where ``choice`` is said in ``text`` (with a word naming its option when the choice is common)."""
    for alias in CHOICE_WORDS.get(choice, ()) + (re.escape(choice),):
        for m in re.finditer(rf"(?<![\w-]){alias}(?![\w-])", text, re.I):
            if m.group(0).lower() not in COMMON and alias not in COMMON:
                return _with_lead(text, m.start(), _with_names(text, m, option_name)[1])
            span = _with_names(text, m, option_name)
            if span != m.span():
                return _with_lead(text, *span)
    return None


def _with_names(text: str, m: re.Match, option_name: str) -> tuple[int, int]:
    """The match widened to a word naming its option within :data:`WINDOW` characters, if any."""
    start, end = m.span()
    for word in _names(option_name):
        for n in re.finditer(rf"\b{word}\b", text, re.I):
            if 0 <= m.start() - n.end() <= WINDOW or 0 <= n.start() - m.end() <= WINDOW:
                return min(start, n.start()), max(end, n.end())
    return start, end


def _with_lead(text: str, start: int, end: int) -> tuple[int, int]:
    lead = re.search(rf"{_LEAD}$", text[:start], re.I)
    return (lead.start() if lead else start), end


def _number(raw: str) -> str:
    word = raw.lower()
    return str(_NUMBER_WORDS.get(word) or _ORDINALS.get(word) or raw)


def _overlaps(span: tuple[int, int], cuts: list[tuple[int, int]]) -> bool:
    return any(span[0] < end and start < span[1] for start, end in cuts)
