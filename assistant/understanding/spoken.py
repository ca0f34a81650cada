"""Options said in words ("at layer 4", "with CLS pooling", "in 3D", "top 10") -> the row's real options.

Nothing here lists a command's options: they come from the row itself (``Command.options``,
their kinds and choices). This module only knows how people *name* an option ("pooling" for
``--pool``, "coloured by" for ``--color``) and a few spoken forms of choices ("t-SNE" for
``tsne``, "the test split" for ``stsb-test``). A value is kept only when the option converts it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from assistant.commands.base import Command
from assistant.commands.options import Number, Option
from assistant.understanding.models_said import model_said, takes_models
from assistant.understanding.numbers import in_digits
from assistant.understanding.spans import compiled, overlaps, with_lead
from assistant.understanding.words import (
    ASIDE,
    BETWEEN,
    CHOICE_WORDS,
    COMMON,
    EVERY,
    FLAG_WORDS,
    JOIN,
    NAME_AT_END,
    NAME_LEAD,
    NAME_WORDS,
    NOT,
    NOT_NAMES,
    NOT_NAMES_AT_END,
    NUMBER,
    OPTION_WORDS,
    REPLACED,
    VALUE_WORDS,
)

#: Characters around a choice within which a word naming its option counts.
WINDOW = 24


@dataclass
class Spoken:
    """Options read from a question's words: ``options`` (name -> raw value, "" for a flag) and
    ``rest`` (the words with those phrases cut out)."""

    options: dict[str, str] = field(default_factory=dict)
    rest: str = ""


#: A name that holds a number ("1-200", "3,8": rows; "cluster 3": a group), read before any count.
_DIGIT = re.compile(r"\d")


def read(text: str, spec: Command, own_model: str | None = None,
         known: Mapping[str, Sequence[str]] | None = None) -> Spoken:
    """The options of ``spec`` said in ``text`` (a question outside its quotes). An option that takes one model
    names the model that is not ``own_model`` (the conversation's) when the question names both ("show bert-base
    next to minilm" on minilm is ``--vs bert-base``). ``known``: names that exist for an option (the corpora this
    conversation may use), said alone ("dedupe check on reviews")."""
    found: dict[str, str] = {}
    cuts: list[tuple[int, int]] = []

    def keep(option: Option, value: str, span: tuple[int, int], *more: tuple[int, int]) -> None:
        if option.name in found or (any(overlaps(s, cuts) for s in (span, *more))
                                    and not option.is_flag):  # "truncated at 10": both
            return
        if not option.accepts(value):
            return
        found[option.name] = value
        span = (span[0], span[1] + 2) if text.startswith("'s", span[1]) else span  # ("every pooling's cosine")
        cuts.extend((span, *more))

    # names that hold numbers, cut before numbers ("rows 1-200 into clusters" counts no 200 groups, "what's in cluster
    # 3?" asks for no 3 groups), kept in turn
    ranges = {}
    for option in spec.options if _DIGIT.search(text) else ():
        if not option.type.numeric and (named := _named(text, option)) is not None and _DIGIT.search(named[0]) \
                and option.accepts(named[0]):
            ranges[option.name] = named[0]
            cuts.append(named[1])
    # numbers first ("layer 2 head 5", "top 10", "in 3D", "five groups"), longer names first ("heads", "head")
    for option, patterns in _number_patterns(spec) if compiled(rf"\b{NUMBER}").search(text) else ():
        for pattern in patterns:
            for m in pattern.finditer(text):
                if m.re.groupindex.get("mid") and m.group("mid"):  # "500 stsb-dev pairs": the middle stays
                    keep(option, in_digits(m.group(1)), with_lead(text, m.start(), m.start("mid")),
                         (m.end("mid"), m.end()))
                else:
                    keep(option, in_digits(m.group(1)), with_lead(text, *m.span()))
    for option in spec.options:  # a value said by a name of its own ("the embedding layer": layer 0)
        for said, value in VALUE_WORDS.get(option.name, ()):
            if (m := compiled(said).search(text)) and found.get(option.name) == value:
                cuts.extend([] if overlaps(m.span(), cuts) else [with_lead(text, *m.span())])  # said twice: "the
            elif m:  # embedding layer (hidden state 0)"
                keep(option, value, with_lead(text, *m.span()))
    no_texts = spec.texts.most == 0
    fractional = [o for o in spec.options if isinstance(o.type, Number) and not o.type.whole]
    decimal = list(compiled(r"(?<![\w.,-])\d*\.\d+(?![\w.-])").finditer(text))
    if len(fractional) == 1 and len(decimal) == 1 and fractional[0].name not in found:  # "dedupe at 0.98"
        keep(fractional[0], decimal[0].group(0), with_lead(text, *decimal[0].span()))
    named = [o for o in spec.options if _counts(o) and o.name not in found and o.name != count_option(spec)
             and _named_by(spec, o).search(text)]
    whole = [m for m in compiled(r"(?<![\w.,#-])\d+(?![\w.,])").finditer(text) if not overlaps(m.span(), cuts)]
    if len(named) == 1 and len(whole) == 1:  # "a different seed for the baseline, say 11": the one number left
        word = min(m.start() for w in option_names(spec, named[0]) if (m := compiled(rf"\b{w}\b").search(text)))
        keep(named[0], whole[0].group(0), (min(word, whole[0].start()), max(word, whole[0].end())))
    for option in spec.options:
        if option.is_flag:
            for word in (*FLAG_WORDS.get(option.name, (option.name,)), f"--{option.name}"):
                m = compiled(rf"(?<![\w-]){word}\b").search(text)
                if m:
                    before = compiled(rf"{NOT}$").search(text[:m.start()])  # "without the causal mask"
                    after = compiled(r"(?:\s+\w+){0,2}?\s+off\b").match(text, m.end())  # "the causal mask (turned) off"
                    if before or after:
                        keep(option, "off", (before.start(), m.end()) if before else (m.start(), after.end()))
                    elif found.get(option.name) == "" and not overlaps(m.span(), cuts):
                        cuts.append(with_lead(text, *m.span()))  # the flag said twice ("what did it rely on?
                        # integrated gradients please")
                    else:
                        keep(option, "", with_lead(text, *m.span()))
        elif takes_models(option) and (model := model_said(text, option, own_model)) is not None:
            value, span = model
            if value:
                keep(option, value, span)
            elif not overlaps(span, cuts):
                cuts.append(span)  # the conversation's own model, said as the subject: nothing to set
        elif option.name in ranges:
            found[option.name] = ranges[option.name]
        else:
            if (named := _named(text, option) or _known(text, (known or {}).get(option.name, ()), no_texts)
                    or (_at_end(text, option) if no_texts else None)) is not None:
                keep(option, *named)
            if option.name not in found and not option.type.numeric and (said := _said(text, spec, option)):
                if not said[0]:  # every value, which is its default: nothing to set
                    cuts.extend([] if overlaps(said[1], cuts) else [said[1]])
                    continue
                keep(option, *said)
                bare = _raw_spans(text, said[0]) if said[0] not in COMMON else []
                if option.name not in found and bare:  # its option's word belongs to another ("umap with one dot
                    keep(option, said[0], bare[0])  # per text")
    for option in spec.options:  # "padded to 12 tokens": --max-length 12 and --padding max_length
        implied = [c for c in option.choices if c.replace("_", "-") in found and c.replace("_", "-") != option.name]
        if implied and option.name not in found and any(
                compiled(rf"\b{word}\b").search(text) for word in option_names(spec, option)):
            found[option.name] = implied[0]
    rest, last = text, len(text)
    for start, end in sorted(cuts, reverse=True):  # a cut inside another ("with truncation at 8") goes once
        if start < (end := min(end, last)):
            rest = rest[:start] + " " + rest[end:]
        last = min(last, start)
    return Spoken(found, re.sub(r"\s+", " ", rest).strip())


@functools.lru_cache(maxsize=256)
def _number_patterns(spec: Command) -> tuple[tuple[Option, tuple[re.Pattern[str], ...]], ...]:
    """Each option of ``spec`` that takes a number, longer names first, with the patterns that say it: its
    name then the number ("layer 2"), the number then its name ("3 heads"; "the 10 most unusual texts" for a
    command's count), in that order ("in 3D": number first for ``dims``). Built once per row; the words that
    lead into a match ("at", "with") are added to its span after it is found (a leading group would make
    every pattern try every position)."""
    out = []
    # "seed 5 and 100 sentences": a number after "and" that another option's name follows is that option's
    counted = sorted({w for o in spec.options if _counts(o) for w in option_names(spec, o)}, key=len, reverse=True)
    others = "|".join(counted)
    for option in sorted(spec.options, key=lambda o: -len(o.name)):
        if not _counts(option):
            continue
        gap = 2 if option.name == count_option(spec) else 1
        patterns: list[re.Pattern[str]] = []
        # "a 3.5 threshold, 400 pairs": a number another option's name follows (itself without a number) is that one's
        foreign = "|".join(w for w in counted if w not in option_names(spec, option)) or "(?!)"
        for word in option_names(spec, option):
            before = compiled(rf"\b{word}(?![a-z])\s*-?\s*{BETWEEN}{NUMBER}\b"  # not ids ("heads 2 and 5"), not "done"
                              rf"(?!\s+(?:{foreign})\b(?!\s*-?\s*{BETWEEN}{NUMBER}))"
                              rf"(?!\s*(?:[-,]|to\b|and\b)\s*\d+\b(?!\s+(?:{others})\b))"
                              rf"(?!(?:(?<=st)|(?<=rd)|(?<=th)|(?<=ond))\s+(?:{others})\b)"  # ("layer, first head")
                              r"(?<!\bone(?=\s+(?:won|wins|was|is|came|got)\b))")  # not "why the top one won"
            after = compiled(rf"\b{NUMBER}\s*-?\s*(?P<mid>(?:[a-z][a-z-]*\s+){{0,{gap}}}){word}\b")
            patterns += (after, before) if option.name == "dims" else (before, after)
        if gap == 2:  # a command's count said bare after a verb of showing: "show 15", "give me 8"
            patterns.append(compiled(rf"\b(?:show|give|list|get|return)\s+(?:me\s+)?(?:the\s+)?(?:top\s+)?{NUMBER}\b"
                                     r"(?!\s*[-,.]\s*\d)"))
            patterns.append(compiled(rf"\b(?:just|only)\s+(?:the\s+)?(?:top\s+)?{NUMBER}\s*[?.!]*\s*$"))  # ", just 5"
        out.append((option, tuple(patterns)))
    return tuple(out)


@functools.lru_cache(maxsize=1024)
def _named(text: str, option: Option) -> tuple[str, tuple[int, int]] | None:
    """A name said for ``option`` ("the reviews corpus", "call it reviews", "rows 1-50") and where, if any (read once
    per text: names that hold a number are read before the counts, the others after them)."""
    for pattern in NAME_WORDS.get(option.name, ()):
        for m in compiled(pattern).finditer(text):
            if m.group("v").lower() not in NOT_NAMES:  # row ids in words: "1, 5 and 20-40", "1 to 500"
                value = re.sub(r"\s*\bto\b\s*", "-", re.sub(r"\s*(?:,\s*and\b|\band\b|&)\s*", ",", m.group("v")))
                return value.replace(" ", "").replace("#", ""), with_lead(text, *m.span())
    return None


def _at_end(text: str, option: Option) -> tuple[str, tuple[int, int]] | None:
    """A name said last in ``text`` (:data:`NAME_AT_END`), for a command that reads no texts of its own."""
    for pattern in NAME_AT_END.get(option.name, ()):
        m = compiled(pattern).search(text)
        if m and m.group("v").lower() not in NOT_NAMES | NOT_NAMES_AT_END:
            return m.group("v"), with_lead(text, m.start(), m.end("v"))
    return None


def _known(text: str, names: Sequence[str], no_texts: bool = False) -> tuple[str, tuple[int, int]] | None:
    """One of ``names`` said where a name stands ("on reviews", "stop encoding reviews", "the amazon one", "the logs
    encoding"; not "find reviews about ..." nor "reviews.csv"), and where, with the words that lead into it. For a
    command that reads no texts, "the NAME" anywhere is that name too ("cluster the tweets into ten groups"), and so is
    a name right after the line's first word ("check tweets for dupes")."""
    said = [n for n in sorted(names, key=len, reverse=True) if n.lower() not in NOT_NAMES]
    if not said:
        return None
    alts = "|".join(map(re.escape, said))  # (re's own bounded cache: visitors' corpus names are not a fixed set)
    the = r"\bthe\s+|^\W*(?!(?:which|what|how|why|who|where|when|are|is|do|does|did|any|can|could)\b)[a-z]+\s+" \
        if no_texts else rf"\bthe\s+(?=(?:{alts})\s+(?:one|encoding|corpus|dataset|load|loading|upload)\b)"
    m = re.search(rf"(?:\b{NAME_LEAD}\s+(?:the\s+|those\s+|these\s+)?|{the})({alts})"
                  r"(?![\w-]|\.\w)", text, re.I)
    if m is None:
        return None
    return next(n for n in said if n.lower() == m.group(1).lower()), with_lead(text, m.start(1), m.end(1))


def _counts(option: Option) -> bool:
    """Whether an option takes a number (``--layer N``, ``--k N|auto``)."""
    return option.type.numeric or "N" in option.usage().split()[-1].split("|")


def _said(text: str, spec: Command, option: Option) -> tuple[str, tuple[int, int]] | None:
    """The value of a choice option said in ``text`` and where: one choice; a list of them ("mean or max":
    ``mean,max``, or its "all" choice when it takes one value); "every" one of them ("" where that is the default
    of a list option: benchmark's poolings)."""
    if not _any_value(spec, option).search(text):
        return None
    values = _values(spec, option)
    every = next((c for c in values if c in EVERY), None)
    raw = {c: _raw_spans(text, c) for c in values}
    said = sorted(((span, choice) for choice in values if choice != every and (span := _choice(
        text, spec, option, choice, [s for other in values if other != choice for s in raw[other]])) is not None),
        key=lambda sc: min((r[0] for r in raw[sc[1]] if sc[0][0] <= r[0] < sc[0][1]), default=sc[0][0]))  # as said
    listed = _listed(text, [v for v in values if v != every])
    if listed is not None and len(listed[0]) > len(said):
        said = [(listed[1], c) for c in listed[0]]
    if len(said) > 1:
        span = (min(s[0] for s, _ in said), max(s[1] for s, _ in said))
        if option.type.several:
            return ",".join(dict.fromkeys(c for _, c in said)), span
        if every is not None:
            return every, span
    if every is not None and not said and (span := _choice(text, spec, option, every)) is not None:
        return every, span
    names = "|".join(w for w in option_names(spec, option) if len(w) > 3) or "(?!)"  # (its nouns: not "as", "by")
    if every is not None and (m := compiled(rf"(?<![\w-])(?:all|every|each)\s+(?:of\s+)?(?:the\s+)?(?:{names})s?\b")
                              .search(text)):
        return every, m.span()  # "is the CLS vector or the mean better? show all poolings"
    if every is None and option.type.several and not said and _named_by(spec, option).search(text):
        for m in compiled(rf"\ball\s+({NUMBER})\b").finditer(text):  # "which pooling is best? try all four"
            if in_digits(m.group(1)) == str(len(values)):  # (counted: each of them named)
                return ",".join(values), m.span()
    if every is None and option.type.several and (span := _choice(text, spec, option, "all")) is not None:
        # (a list whose default sets none runs every value: "all" of them is that default, "" here)
        return ",".join(values) if option.default is not None else "", span
    return (said[0][1], said[0][0]) if said else None


@functools.lru_cache(maxsize=1024)
def _any_value(spec: Command, option: Option) -> re.Pattern[str]:
    """Every way of saying one of ``option``'s values (and "all" when it takes several), as one pattern without the
    word bounds: a question it does not match says none of them (most questions, for most options)."""
    values = (*_values(spec, option), *(("all",) if option.type.several else ()))
    return compiled("|".join(f"(?:{a})" for v in values for a in _aliases(v)) or r"(?!)")


@functools.cache
def _aliases(choice: str) -> tuple[str, ...]:
    """How a choice can be said: its spoken forms, and itself with or without its joins ("sum last 4")."""
    loose = "[-_ ]?".join(re.escape(p) for p in re.split(r"[-_]|(?<=[a-z])(?=\d)", choice))
    return (*CHOICE_WORDS.get(choice, ()), loose)


def _listed(text: str, values: list[str]) -> tuple[list[str], tuple[int, int]] | None:
    """Two or more choices said together ("cls, mean and max"), in the order said, and where."""
    if len(values) < 2:
        return None
    one = "|".join(sorted((a for v in values for a in _aliases(v)), key=len, reverse=True))
    run = compiled(rf"(?<![\w-])(?:{one})(?:{JOIN}(?:{one}))+(?![\w-])").search(text)
    if run is None:
        return None
    said = []
    for m in compiled(rf"(?<!\w)(?:{one})(?!\w)").finditer(run.group(0)):
        said.append(next(v for v in values if any(compiled(a).fullmatch(m.group(0)) for a in _aliases(v))))
    return list(dict.fromkeys(said)), run.span()


@functools.lru_cache(maxsize=1024)
def _values(spec: Command, option: Option) -> tuple[str, ...]:
    """The values an option can be said with: its choices, or for a text option the lower-case values
    its usage lists (``--data stsb-dev|stsb-test|FILE`` -> stsb-dev, stsb-test)."""
    if option.choices:
        return option.choices
    listed = re.search(rf"--{re.escape(option.name)} ([^\]\s]+)", spec.usage)
    return tuple(v for v in listed.group(1).split("|") if re.fullmatch(r"[a-z][a-z0-9_-]*", v)) if listed else ()


@functools.lru_cache(maxsize=1024)
def _named_by(spec: Command, option: Option) -> re.Pattern[str]:
    """Any of the words that name ``option`` (:func:`option_names`), as one pattern."""
    return compiled(rf"\b(?:{'|'.join(option_names(spec, option))})\b")


def option_names(spec: Command, option: Option) -> tuple[str, ...]:
    return _all_names(spec)[option.name]


@functools.lru_cache(maxsize=256)
def count_option(spec: Command) -> str | None:
    """The option that says how many of its results a command shows (the first whose help says "how many")."""
    return next((o.name for o in spec.options if o.help.startswith("how many")), None)


@functools.lru_cache(maxsize=256)
def _all_names(spec: Command) -> dict[str, tuple[str, ...]]:
    count = count_option(spec)
    return {o.name: _option_names(spec, o, o.name == count) for o in spec.options}


def _option_names(spec: Command, option: Option, counts: bool) -> tuple[str, ...]:
    """How an option is named: its own name, the usual words for it, and for a command's count (the first
    option whose help says "how many X"), X and the command's own name ("five groups", "ten outliers")."""
    words = [option.name.replace("-", "[- ]"), *OPTION_WORDS.get(option.name, ())]
    if counts:
        noun = re.match(r"how many (\w+)", option.help)
        words += [noun.group(1).removesuffix("s") + "s?"] if noun else []
        per = re.search(r"\bper (\w+)", option.help)  # ("how many candidates per mask": "two masks" counts no guesses)
        words += [n.removesuffix("s") + "s?" for n in (getattr(spec, "name", ""), *getattr(spec, "aliases", ()))
                  if re.fullmatch(r"[a-z]+", n) and not (per and per.group(1) == n)]  # "into 3 topics" (`topics`)
        words += ["them", "those", "texts?", "entr(?:y|ies)", "items?", "rows"]  # "25 of them", "the 5 weirdest rows"
    return tuple(w.replace(" ", "\\s+") for w in dict.fromkeys(words))


def _raw_spans(text: str, choice: str) -> list[tuple[int, int]]:
    """Where a choice is said, so that a choice inside a longer one ("last" in "sum last 4") is not said twice."""
    return [m.span() for alias in _aliases(choice) for m in compiled(rf"(?<![\w-]){alias}(?![\w])").finditer(text)]


def _choice(text: str, spec: Command, option: Option, choice: str,
            inside: list[tuple[int, int]] = []) -> tuple[int, int] | None:  # noqa: B006 - never changed
    """Where ``choice`` is said in ``text`` (with a word naming its option when the choice is common), outside
    the spans ``inside`` (where a longer choice is said). A choice that is the command's own name ("rollout") is
    the command said, unless the option's name is said too ("method rollout") or a spoken form ("plain rollout")."""
    bare = choice == getattr(spec, "name", "") and not compiled(rf"\b{option.name}\b").search(text)
    names = "|".join((*option_names(spec, option), re.escape(getattr(spec, "name", "") or "(?!)")))  # ("pos-probe")
    for alias in _aliases(choice)[:-1] if bare else _aliases(choice):  # (the last: the choice as itself)
        for m in compiled(rf"(?<![\w\[-]){alias}(?!\w|-(?!(?:{names})\b))").finditer(text):  # (not "[CLS]": a token)
            if any(a <= m.start() and m.end() <= b and b - a > m.end() - m.start() for a, b in inside) or \
                    compiled(rf"(?:\bnot\s+(?:just|only)\s+(?:the\s+)?|{ASIDE})$").search(text[:m.start()]) or \
                    compiled(REPLACED).match(text, m.end()):
                continue  # (inside a longer choice; "every strategy, not just last", "max instead of cls", "mean
                # pooling replaced by max")
            if m.group(0).lower() not in COMMON and alias not in COMMON:
                return with_lead(text, m.start(), _with_names(text, m, spec, option)[1])
            span = _with_names(text, m, spec, option)
            if span != m.span():
                return with_lead(text, *span)
    return None


#: Words that name an option only before its value ("with flow"; not "flow, with bert-base too").
_LEADING = frozenset({"with", "using", "via", "by", "on", "in", "at", "for", "from"})


def _with_names(text: str, m: re.Match, spec: Command, option: Option) -> tuple[int, int]:
    """The match widened to a word naming its option within :data:`WINDOW` characters, if any."""
    start, end = m.span()
    for word in option_names(spec, option):
        for n in compiled(rf"\b{word}s?\b").finditer(text):  # (a word that leads, "with", names what follows it)
            if 0 <= m.start() - n.end() <= WINDOW or 0 <= n.start() - m.end() <= WINDOW and word not in _LEADING:
                return min(start, n.start()), max(end, n.end())
    return start, end
