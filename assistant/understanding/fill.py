"""A row, a question's texts and its spoken options -> the command line that the parser then runs."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import assistant.commands.slots as slots_mod
import assistant.understanding.numbers as numbers
import assistant.understanding.spoken as spoken
import assistant.understanding.words as words
from assistant.commands.base import Command
from assistant.commands.slots import Slots
from tools.core.errors import UserError
from tools.core.text import code

#: Words that point back at the previous command's texts ("why are they similar?", "the first one").
#: "this one", "these two" right before a colon: the texts after it, not the previous ones.
_POINTS_AHEAD = re.compile(r"\bth(?:is|ese)(?:\s+(?:two|three|four))?(?:\s+(?:ones?|sentences?|texts?|pairs?))?\W*$",
                           re.I)
#: All the texts by their count ("all three", "all 4"; not "all three layers"); group 1: the count.
ALL_OF = (r"all\s+(two|three|four|five|six|[2-6])\b(?!\s+(?:layers?|heads?|models?|pooling|strateg\w*|methods?|ways|"
          r"options|corpora|clusters|groups|words|tokens)\b)")
REFERS_BACK = re.compile(r"\b(?:they|them|their|those|these|both|it|its|that|the\s+(?:two\s+)?(?:sentences|texts)|"
                         rf"the\s+whole\s+thing|{ALL_OF}|"
                         r"the\s+two\s+(?:[\w'-]+\s+)?(?:tokens|words|occurrences|vectors|embeddings|ones)|"
                         r"the\s+(?:first|second|last|previous)\s+(?:one|sentence|text|word|two|three)|"
                         r"the\s+same\s+(?:sentences?|texts?|pair)|"
                         r"th(?:is|at|ese|ose)\s+(?:sentences?|texts?|pair|one)|the\s+pair|"
                         r"(?:in|of|for)\s+each(?:\s+(?:one|of\s+them|sentence|text))?(?=\W*$)|"
                         r"(?:t?here)(?=\W*$))\b", re.I)
#: Words that point back at two texts or more: the last command that ran on two ("plot both sentences" after
#: `attend` of the first of them).
BOTH = re.compile(r"\b(?:both|th(?:e|ose|ese)\s+two|each\s+other|(?:the|that|this)\s+(?:same\s+)?pair)\b", re.I)
#: Words that add quoted texts to the previous ones for another command ("add 'A' and plot all three").
_ADDED = re.compile(rf"\b(?:add|adding|include|including|plus|{ALL_OF})\b", re.I)
#: One of the previous texts named by a word of its own ("the vampire sentence", "the river one").
_NAMED_ONE = re.compile(r"\bthe\s+([a-z][\w'-]*)\s+(?:sentence|one|text|example)\b", re.I)
#: Where a quoted word is: in the previous texts ("is 'man' a verb there?", "how does 'it' attend in that sentence?";
#: not "in that corpus").
_IN_THERE = re.compile(r"\b(?:there|attends?\s+to|in\s+(?:it|them|both|each|th(?:at|is|ose|ese)(?!\s+[a-z]))|"
                       r"(?:that|this|the(?:\s+(?:first|second|last))?)\s+(?:sentence|text))\b", re.I)
#: Texts pointed at with their number ("how do the two sentences differ"): which texts, not a count.
_POINTED_TEXTS = re.compile(r"\b(?:the|those|these|both)\s+(?:two|three|four|2|3|4)\s+(?:sentences|texts|pairs)\b",
                            re.I)
#: A new text said as what the previous one is set against ("now compare with 'A'" after `attend` of one text).
_WITH_NEW = re.compile(r"\b(?:with|against|to|versus|vs\.?)\s+" + re.escape(slots_mod.PLACEHOLDER), re.I)
#: Words a follow-up wraps its change in ("give me 30", "different seed please, 7", "and with attention flow?"):
#: never a text; a question of these and options of the previous command (or its count alone) changes that command.
FILLER = frozenset("""run show give get another different more fewer less say per with please pls plz one ones
tho though again new let lets us just maybe part bit turn draw plot display see default switch change set make version
details detail
instead not look thing same check measure measured against each force side by together
highlight lower loosen raise tighten other last final very next comparison
stricter looser tighter higher bigger smaller larger bump up down increase decrease reduce
chart graph figure picture diagram view flat actual real raw underlying plain toy too
be strict loose lenient actually top seed threshold k keep keeping still only zoom zoomed
itself""".split()) | slots_mod.ASKING
#: "that word", "the same word": the word of a command whose first text is one.
_THAT_WORD = re.compile(r"(?<!without )\b(?:that|this|the same|the)\s+word\b", re.I)  # (not "without the word")
#: "on that", "with those": a command that takes no texts run as the previous one was ("compare minilm with mpnet on
#: that" after `benchmark --sample 300`).
_ON_THAT = re.compile(r"\b(?:on|with|for|using|like)\s+(?:that|those|these|them|it)\s*(?:again\s*)?[?.!]*$", re.I)
#: Words that open a question before what it asks ("ok now what does CLS draw on?").
_OPENER = r"(?:(?:ok|okay|now|and|so|then|well|alright)[\s,]+)*"
#: A question's own words where a text would be ("where did the mask look").
_ASKS = re.compile(_OPENER + r"(?:(?:where|what|which|how|why|who|when)\s+"
                   r"(?:did|does|do|is|are|was|were|can|could|would|will)\b|"
                   r"(?:does|do|did|is|are|can|could|will|would)\s+(?:any|some|every|each|one|a|an|it|this|that|they)\s)",
                   re.I)  # ("does any head track the subject?": a yes-or-no question about the last texts)
#: The same asked of a thing named first ("which input tokens does ..."; not "how contextual is ..."), or of heads,
#: layers or tokens doing something ("which heads point to ..."): for a command that follows the previous texts.
_ASKS_OF = re.compile(_OPENER + r"(?:which|what)(?:\s+[\w'-]+){1,2}?\s+"
                      r"(?:did|does|do|is|are|was|were|can|could|would|will)\b|"
                      r"which\s+(?:heads?|layers?|tokens?|words?|pieces?|positions?)\s+(?!(?:of|in|for|from|on|about|"
                      r"between|across)\b)[a-z]+\b", re.I)  # ("which heads point to the previous token?")
#: Which of the previous texts "the first / second / third / last one" is.
WHICH = {"first": 0, "second": 1, "third": 2, "last": -1}
#: Two of the previous texts named by their places ("the first and the third", "the second and last ones", "why is the
#: first one so close to the third").
_ORDINAL_PAIR = re.compile(r"\bthe\s+(first|second|third|last)(?:\s+(?:one|sentence|text))?\s+(?:(?:is|so|as|close|"
                           r"similar|near|far|like|different)\s+){0,3}(?:and|&|with|vs\.?|to|from)\s+"
                           r"(?:the\s+)?(first|second|third|last)\b", re.I)
_HOW_MANY = {"two": 2, "three": 3}


#: A command asked to run on the texts that follow ("run static on Rain | ..."): not part of the first text.
_RUN_ON = re.compile(words.RUN_ON, re.I)


def before_colon(question: str) -> str:
    """What a question says before the texts it carries after a colon ("tokenise this: I believe it"), without the
    "this one" or "these two" that points at them ("and this one: The dog [MASK] all night.")."""
    question, colon, carried = question.partition(":")
    if not colon or not carried.strip():
        return question
    return _POINTS_AHEAD.sub("", question)


def referred_texts(question: str, previous: list[str]) -> list[str]:
    """The previous command's texts a question without quotes refers to ("the second sentence": that one), or []."""
    question = before_colon(question)
    named = [t for m in _NAMED_ONE.finditer(question) if m.group(1).lower() not in (*WHICH, "same", "other", "next")
             for t in previous if holds(t, m.group(1))]
    if len(named) == 1 and len(previous) > 1:
        return named  # "how many tokens does the vampire sentence have?": the one text that holds "vampire"
    pair = _ORDINAL_PAIR.search(question)
    if pair is not None and len(previous) > 2:  # "the first and the third"
        picked = [WHICH[w.lower()] for w in pair.groups()]
        return [previous[i] for i in picked if -len(previous) <= i < len(previous)]
    if not previous or REFERS_BACK.search(question) is None:
        return []
    some = re.search(r"\bthe\s+(first|last)\s+(two|three)\b", question, re.I)
    if some is not None:  # "the first two"
        many = _HOW_MANY[some.group(2).lower()]
        return previous[:many] if some.group(1).lower() == "first" else previous[-many:]
    one = re.search(r"\bthe\s+(first|second|last)\s+(?:one|sentence|text|word|of\s+(?:those|these|them|the\s+two))\b",
                    question, re.I)
    if one is not None:
        index = WHICH[one.group(1).lower()]
        return [previous[index]] if -len(previous) <= index < len(previous) else []
    return list(previous)


def holds(text: str, word: str) -> bool:
    """Whether ``text`` holds ``word`` as a whole word (any case)."""
    return re.search(rf"\b{re.escape(word)}\b", text, re.I) is not None


def _inside(text: str, previous: list[str], spec: Command) -> bool:
    """Whether a quoted ``text`` is a word of the previous texts that ``spec`` has no room for beside them ("is it just
    the word 'black' making them similar?" after two sentences, one with "black": a word asked about, no third text)."""
    return (spec.texts.most is not None and len(previous) >= spec.texts.most and " " not in text
            and any(holds(t, text) for t in previous))


def only_filler(text: str, asking: frozenset[str] = frozenset()) -> bool:
    """Whether ``text`` holds only the words a follow-up wraps its change in (:data:`FILLER`), numbers and
    ``asking`` (a command's own words: "the raw attention per head" for `attend`), each also said in the singular
    or the plural ("the norm of each token" where a phrasing says "norms")."""
    return all(numbers.is_number(w) or any(v in FILLER or v in asking for v in (w, w + "s", w.removesuffix("s")))
               for w in (w.removesuffix("'s") for w in re.findall(r"[\w'-]+", text.lower())))  # ("each token's")


def number_option(had: Mapping[str, str], spec: Command, number: str) -> str | None:
    """The option a bare number in a follow-up changes: the one number the previous line set (``had``: its options
    away from their defaults; "make it 16" after `--max-length 10`), the command's count among several ("try 12" after
    `clusters --k 5 --seed 1`), else the command's count ("more, like 30")."""
    said = [name for name in had if (option := spec.option(name)) is not None
            and (option.type.numeric or numbers.is_number(had[name]))]  # (`--k auto|N` set to a number)
    count = spoken.count_option(spec)
    if count in said:
        return count
    if len(said) == 1:
        try:
            spec.option(said[0]).convert(number)  # type: ignore[union-attr]
            return said[0]
        except UserError:
            pass
    return count


def previous_texts(texts: list[str], word_first: bool, spec: Command, question: str) -> list[str]:
    """The previous command's ``texts`` as ``spec`` takes them: after a command whose first text is a word
    (``word bank | s1 | s2``), "that word" is the word and anything else refers to its sentences."""
    if not word_first or spec.texts.word_first or len(texts) < 2 or len(texts[0].split()) != 1:
        return texts  # (``static a | b`` compares sentences: no word first)
    return texts[:1] if _THAT_WORD.search(question) else texts[1:]


class MissingTexts(UserError):
    """The question names a command but not the texts it needs."""


def asking_words(spec: Command) -> frozenset[str]:
    """Words that ask rather than carry, for this command: the general ones and its phrasings' own words."""
    return slots_mod.asking_words((*spec.phrasings, spec.name, *spec.aliases))  # ("logit-lens He plays [MASK].")


def read(question: str, spec: Command, own_model: str | None = None,
         known: Mapping[str, Sequence[str]] | None = None) -> tuple[Slots, dict[str, str]]:
    """The question's texts and the options of ``spec`` said in its words (``own_model``: the conversation's;
    ``known``: names that exist for an option)."""
    outside = _POINTED_TEXTS.sub(" them ", slots_mod.read(question).rest)  # ("the two sentences": no count)
    said = spoken.read(outside, spec, own_model, known)
    return slots_mod.read(question, unquoted=said.rest, asking=asking_words(spec)), said.options


def texts_for(spec: Command, slots: Slots, table: Mapping[str, Command]) -> list[str]:
    """The texts ``spec`` runs on, in its order: the command's own reading of the question's shape when it
    has one (a word first for ``word``, one word for ``neighbors``, the masked text for ``mask``), else the
    quoted texts, or the whole payload for a command that takes one text."""
    if spec.texts.most == 0:
        return []
    own = spec.question_texts(slots, table)
    if own is not None:
        return own
    if spec.texts.least == 0 and not slots.given:
        return []  # a command that needs no text takes only quoted ones, never the question's own words
    texts = list(slots.texts)
    if slots.quoted and not spec.texts.word_first and any(" " in t for t in texts):  # "does 'it' attend to ... in 'A'?"
        texts = [t for t in texts if " " in t or not any(holds(s, t) for s in texts if " " in s)]
    if spec.texts.most == 1 and not slots.quoted and slots.payload:
        return [slots.payload]  # one text: "and" inside it is part of it
    return texts if spec.texts.most is None else texts[:spec.texts.most]


def build(spec: Command, texts: list[str], options: Mapping[str, str]) -> str:
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


def line_for(spec: Command, question: str, table: Mapping[str, Command], previous: list[str] | None = None,
             own_model: str | None = None, carried: Mapping[str, str] | None = None,
             known: Mapping[str, Sequence[str]] | None = None, shared: Mapping[str, str] | None = None) -> str:
    """The command line that answers ``question`` with ``spec``, or :class:`MissingTexts`. A question without
    quotes that refers back ("why are they similar?") or carries too few texts of its own ("and what does GloVe
    say?") runs on the ``previous`` command's texts; a word it quotes for a command that takes a word first joins
    them. ``own_model``: the
    conversation's model, which a second model named beside it is compared with; ``carried``: options kept from
    the previous command ("that layer"), which the question's own options override; ``known``: names that exist
    for an option (the conversation's corpora), which a question may say alone; ``shared``: the previous command's
    settings that ``spec`` takes too, kept when the line runs on the previous texts."""
    slots, options = read(question, spec, own_model, known)
    refers = not slots.quoted and spec.texts.most != 0 and spec.followed and not slots.has_mask  # (help's and
    # model's texts are names; a blank of its own is its text: "the doctor said ___ was late, what fills it?")
    referred = referred_texts(question, previous or []) if refers else []
    named = slots_mod.TARGET_WORD.search(slots.rest)  # "is the word bark the same in those two?"
    if referred and spec.texts.word_first and named is not None and named.group(1) not in referred:
        referred = [named.group(1), *referred]
    elif referred and spec.texts.word_first and named is None and len(referred) >= 2 and " " in referred[0] and (
            word := slots_mod.shared_word(slots.rest, referred, slots_mod.ASKING)):
        referred = [word, *referred]  # "is bass the same vector in both?" after two sentences that hold "bass"
    texts = referred[:spec.texts.most] or texts_for(spec, slots, table)
    kept = dict(shared or {}) if referred or (  # ("compare minilm with mpnet on that" after `benchmark`)
        spec.texts.most == 0 and _ON_THAT.search(slots.rest) is not None) else {}
    asked = asking_words(spec) | {"every", "any", "all"} if spec.followed else frozenset()  # ("the raw attention
    # of every head"; not `model`'s or `help`'s texts, which are names: "switch to mpnet")
    if previous and not slots.quoted and not referred and (all(only_filler(t, asked) for t in texts) or texts and (
            not slots.given and (_ASKS.match(texts[0]) or (_ASKS.match(question.strip()) or spec.followed
                                                           and _ASKS_OF.match(question))
                                 and spec.question_texts(slots, table) is None))):  # (not the command's own reading)
        texts = []  # "and with attention flow?", "where did the mask look?": no text of its own
    if previous and len(texts) < spec.texts.least:
        word = slots.word if slots.quoted else (named.group(1) if named else None)  # "the word 'pitch' in both of
        if spec.texts.word_first and word is not None:  # those"; the previous word said again stays first; only
            texts = [word, *(t for t in previous if t != word and holds(t, word))]  # the texts that hold it
        elif not slots.quoted:  # "and what does GloVe say?", "show me the heads"
            texts = previous if spec.texts.most is None else previous[:spec.texts.most]
            kept = dict(shared or {})
        elif REFERS_BACK.search(slots.rest) or _ADDED.search(slots.rest) or _WITH_NEW.search(slots.frame) or all(
                slots_mod.ROW_ID.fullmatch(t) for t in texts):
            texts = [*previous, *(t for t in texts if t not in previous and not _inside(t, previous, spec))]
            # "compare that sentence with 'A'"; "what made #42 come up?" after a search (a row said again: once)
    elif previous and slots.quoted and _ADDED.search(slots.rest) and spec.followed and not spec.texts.word_first and (
            spec.texts.most is None or len(previous) + len(texts) <= spec.texts.most):
        texts = [*previous, *(t for t in texts if t not in previous)]  # "add 'A' and plot all three"
    if (previous and slots.quoted and len(texts) == 1 and " " not in texts[0] and not spec.texts.word_first
            and _IN_THERE.search(slots.rest) and spec.question_texts(slots, table) is None):
        holders = [t for t in referred_texts(slots.rest, previous) or previous
                   if " " in t and holds(t, texts[0])]
        texts = holders[:spec.texts.most] if holders else texts  # "is 'man' a verb there? show me the parse"
    if texts and (ran := _RUN_ON.match(texts[0])) and ran.group(1).lower() in (spec.name, *spec.aliases):
        texts = [texts[0][ran.end():], *texts[1:]]  # "run static on Rain | Rain falls. | Rain stopped."
    # a query, then the corpus's rows ("what made row 7 match 'X'?")
    if any(slots_mod.ROW_ID.fullmatch(t) for t in texts):
        texts = sorted(texts, key=lambda t: slots_mod.ROW_ID.fullmatch(t) is not None)
    texts, options = spec.question_options(texts, {**kept, **(carried or {}), **options})
    options = {k: v for k, v in options.items()  # a flag said off is off unless said: left out of a new line
               if not (v == "off" and (o := spec.option(k)) is not None and o.is_flag)}
    least = spec.texts.least
    if len(texts) < least:
        need = spec.texts_hint or f"{least} text{'s' if least > 1 else ''}"
        found = (f"found {len(texts)} text{'s' if len(texts) != 1 else ''}" if texts else "found no text to work on")
        raise MissingTexts(
            f"I read this as {code(spec.name, 20)} but {found}; it needs {need}: put each text in quotes, "
            f"{spec.for_example}")
    return build(spec, texts, options)
