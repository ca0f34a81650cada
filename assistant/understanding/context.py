"""The conversation as context: what a question takes from the lines before it.

A follow-up changes the previous command ("now at layer 4", "what about CLS pooling?", "run that again") or runs it
on another model ("compare that with bert-base"); a command named alone ("why?") runs on the previous texts; "that
layer", "the next head" are read from the conversation's lines (:mod:`.settings_kept`; which corpus it means:
:mod:`.named`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping

import assistant.understanding.fill as fill
import assistant.understanding.named as named
import assistant.understanding.numbers as numbers
import assistant.understanding.settings_kept as settings_kept
import assistant.understanding.spoken as spoken
from assistant.commands import slots
from assistant.commands.base import Command, Invocation
from assistant.parsing import parse
from assistant.session import Session
from assistant.sharing.links import merged_line, option_values
from assistant.understanding.earlier import named_back, previous_command
from assistant.understanding.facts import Understanding
from assistant.understanding.models_said import takes_models
from assistant.understanding.reset import back_to_default
from assistant.understanding.spans import says_term
from assistant.understanding.words import ASIDE, OPENING, ORDINALS, UNITS
from tools.core.config import Settings
from tools.core.errors import UserError
from tools.core.text import code

#: How a follow-up starts ("now at layer 4", "what about CLS pooling?", "same with t-SNE").
_FOLLOW_UP = re.compile(r"^(?:\s*(?:and|now|what about|how about|what if|(?:the\s+)?same|try|also|then|again|ok|"
                        r"okay|instead|this time|"
                        r"redo|rerun|re-run|repeat|but|with|at|in|using|use|only|just|zoom|add|include|drop|remove|clear|undo|"
                        r"more|fewer|less|change|set|replace|swap|apply|enable|turn on|switch on|"
                        r"make it|show it|show (?:me )?(?:more|fewer|less)|"
                        r"(?:limit|restrict|narrow)(?: (?:it|that|this|them|those))?(?: down)? to|"
                        r"switch (?:back )?to|what (?:does|do|would) [\w:-]+ say|side by side|go back|back to|reset|"
                        r"colou?r (?:it|them)|(?:run|do) (?:it|that|this|the same(?: \w+)?)|once more|one more time|"
                        r"do(?=\s+[\w'-]+\s+(?:too|as\s+well)\W*$))\b"
                        r"|.*\b(?:instead|this time|rather|of them|of those|the same way)\b|.*\bonly\W*$)", re.I)
#: "what if I use": how a follow-up asks for a choice alone ("what if I use max?").
_WHAT_IF = re.compile(r"^\W*what\s+if\s+(?:i|we|you)\s+(?:use[sd]?|try|tried|pick(?:ed)?|went\s+with|"
                      r"switch(?:ed)?\s+to)\b", re.I)
#: A question that asks for the previous command once more, as it was.
_RUN_AGAIN = re.compile(r"^\s*(?:(?:and|ok|now|just)\s+)*(?:(?:run|do|redo|rerun|re-run|repeat|try|compare)\s+"
                        r"(?:that(?: one)?|it|this(?: one)?|them|those|"
                        r"the (?:last|previous) (?:command|one|line|request|query))|"
                        r"(?:(?:do|run|show|give me)\s+)?the same (?:thing|comparison|command|question|analysis|one))"
                        r"(?:\s+(?:again|once more|one more time))?"
                        r"(?:\s+(?:on|with|for|using|in)\s+(?:this|the new|the other|that)\s+model)?"
                        r"(?:[,\s]+(?:unchanged|as\s+is|exactly\s+as\s+(?:it\s+was|before)))?"  # ("..., unchanged")
                        r"(?:\s+please)?\s*[.!?]*\s*$", re.I)
#: "compare them": after another command, `compare` of its texts rather than that command again.
_COMPARE_THEM = re.compile(r"\W*(?:\w+\s+)?compare\b", re.I)
#: Politeness before a follow-up ("could you rerun that", "please redo the last one"): read past it.
_POLITE = re.compile(r"^\s*(?:(?:(?:can|could|would|will) you|please|pls|so|actually|hey)[,\s]+)+", re.I)
#: Words that point back at the previous reply's texts: new quoted texts are added to them.
_REFERS = re.compile(r"\b(?:that|this|those|them|the (?:last|previous) (?:one|answer|result|texts?|sentences?))\b",
                     re.I)
#: "do that for 'A' and 'B'": the previous command pointed at, on new texts (not the texts to add them to).
_DO_THAT = re.compile(r"\b(?:do|run|try|repeat)\s+(?:that|this|it)\b", re.I)
#: A new word alone in a follow-up's words ("what about queen", "same for queen", "and violin?").
_WORD_ALONE = re.compile(r"\W*(?:(?:(?:and|now|ok|okay|so|then|try|what about|how about|"
                         r"(?:(?:do|run)\s+)?(?:the\s+)?same(?:\s+(?:list|thing|again))?)\W+)+"  # ("do the same
                         r"(?:do\W+|try\W+)?|"  # for dog", "and the same list for queen")
                         r"do\W+(?=[\w'-]+\W+(?:too|as\s+well)\W*$))"  # ("do dog too")
                         r"(?:for\W+|with\W+)?"
                         r"([A-Za-z][\w'-]*)(?:\W+(?:too|as\s+well|please|pls))?\W*", re.I)
#: New words for a command whose texts are words, said after "for" or "on" ("only for cold and hot" after
#: `contextuality`; "just for the words play and run": said as words, any word is one); what comes before them only
#: wraps the change.
_WORDS_FOR = re.compile(r"\W*((?:[\w']+\W+){0,4}?)(?:for|on)\s+(the\s+words?\s+)?"
                        r"([A-Za-z][\w'-]*(?:(?:\s*,\s*(?:and\s+)?|\s+and\s+)[A-Za-z][\w'-]*)*)\W*", re.I)
#: A number said of a layer, a head or one of the texts ("at layer 3", "the second sentence"): no count, and no
#: change at all to a command without that option.
_NOT_A_COUNT = re.compile(rf"\b(layer|head)\s+(?:number\s+)?(?:\d+|{'|'.join(UNITS[1:13])})\b|"
                          rf"\b(?:\d+(?:st|nd|rd|th)|{'|'.join(list(ORDINALS)[:5])}|last)\s+"
                          r"(layer|head|sentence|text|pair)\b", re.I)
#: "5 more": as many again as the previous count said, added to it.
_MORE = re.compile(r"\b(\d+)\s+more\b", re.I)
#: Words that add new quoted texts to the previous reply's ("now with 'a dog ran' too").
_ADDS = re.compile(r"\b(?:too|as well|also|add|plus|include|including)\b", re.I)
#: One new word added to the previous texts, said alone ("add spring", "and include light too").
_ADD_WORD = re.compile(r"\W*(?:(?:and|now|ok|okay|so|then|also)\W+)*(?:add|include|plus)\s+"
                       r"([A-Za-z][\w'-]*(?:(?:\s*,\s*(?:and\s+)?|\s+and\s+)[A-Za-z][\w'-]*)*)"
                       r"(?:\s+(?:too|as well))?\W*", re.I)
#: Another word for the previous command ("just for the word 'right'" after `contextuality`).
_FOR_WORD = re.compile(r"^\W*(?:(?:and|now|ok|okay|just|only|but|so|(?:how|what)\s+about)\s+)*"
                       r"(?:(?:for|with|on|of)\s+)?(?:just\s+)?(?:the\s+)?word(?:\W+only)?\W*$", re.I)
def _starts_with_another(question: str, spec: Command, table: Mapping[str, Command]) -> bool:
    """Whether ``question`` starts with the own name of a command other than ``spec`` and not of its own option
    ("why that answer?" after `mask` asks for its `--why`)."""
    first = question.split(None, 1)[0].lower() if question.strip() else ""
    return (first in table and table[first].name == first and first not in (spec.name, "again")  # ("again with seed 9")
            and spec.option(first) is None)


def _names_another(words: str, spec: Command, table: Mapping[str, Command]) -> bool:
    """Whether ``words`` (a question outside its quotes) name another command by its own name ("now search for")."""
    return any(w in table and table[w].name == w and w not in (spec.name, "word", "model")  # common nouns too
               for w in re.findall(r"[a-z]+", words.lower()))


def _verb_of_another(words: str, spec: Command, table: Mapping[str, Command]) -> bool:
    """Whether ``words`` ask for another command with the verb its name comes from, before what it acts on ("now
    cluster what I just lassoed" after `map`, "cluster rows 4,9,15" after `search`; not "colour it by cluster")."""
    return _verbs(tuple(n[:-1] for n in table if n.endswith("s") and table[n].name == n != spec.name)).search(
        words) is not None


@functools.lru_cache(maxsize=64)
def _verbs(verbs: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile(rf"\b(?:{'|'.join(verbs) or '(?!)'})\s+(?:only\s+|just\s+)?"
                      r"(?:what|the|these|those|them|it|that|this|"
                      r"rows?|my|all|#?\d)", re.I)


def _a_word_of(read: slots.Slots, question: str, texts: list[str]) -> bool:
    """Whether the question quotes a word of the previous texts ("the word 'pitch'", "does 'crane' get the same
    vector in both of them?"), or says one outside new quoted sentences that each holds ("is bat the same in 'A' and
    'B'?"): a word to follow through them, not a text to add."""
    if read.word_said_outside(slots.ASKING) is not None:
        return True
    inside = read.word is not None and bool(texts) and all(
        re.search(rf"(?<![\w-]){re.escape(read.word)}(?![\w-])", t, re.I) for t in texts)
    if slots.TARGET_WORD.search(question):  # (but "add the word 'spring'" to `contextuality bank | light`)
        return inside or not _ADDS.search(read.rest)
    return inside and len(read.texts) == 1


#: A command's name alone ("why?"), or said as a command ("same thing with the word command", "use the static one").
_NAMED_ALONE = re.compile(r"\s*(?:(?:the\s+)?same(?:\s+thing)?\s+(?:but\s+)?(?:with|using|in|via|through)\s+"
                          r"(?:the\s+)?`?([a-z]+)`?\s+command|`?([a-z]+)`?)\s*[?!.]*\s*")


def named_alone(question: str, session: Session, table: Mapping[str, Command],
                 settings: Settings) -> Understanding | None:
    """A question that is only a command's name ("why?", "ok now why?"), or names it as a command ("same thing with the
    word command"), runs that command on the previous command's texts."""
    word = _NAMED_ALONE.fullmatch(OPENING.sub("", question).lower())
    spec = table.get(word.group(1) or word.group(2)) if word else None
    least = spec.texts.least if spec is not None else 0
    last = previous_command(session, table, texts=least) if least > 0 else None
    if spec is None or last is None:
        return None
    before = parse(last[0], table, settings)
    texts = before.texts[1:] if last[1].texts.word_first and not spec.texts.word_first else before.texts
    if len(texts) < spec.texts.least:  # (after `word w | s1 | s2`, "why?" is about the sentences)
        return None
    kept = texts if spec.texts.most is None else texts[:spec.texts.most]  # with the settings it shares ("why?")
    return Understanding(line=fill.build(spec, kept, settings_kept.shared_options(question, before, spec, table)),
                         follow_up=True,
                         because=f"it names `{spec.name}` alone, on the previous command's texts ({code(last[0], 80)})")


def handed_on(question: str, session: Session, table: Mapping[str, Command],
              settings: Settings) -> Understanding | None:
    """The command the previous one hands a follow-up on to (:meth:`Command.handed_on`: after `static`, "the
    contextual model itself" is `word` or `compare`), on the previous texts with the options the question says, the
    settings the two commands share and the ones it points at ("what's driving it?" after `compare A | B --layer 3`:
    `why A | B --layer 3`). A question that quotes a new text is not about the previous ones (a word of theirs is:
    "and what does the contextual model make of 'bat' in those?")."""
    if (last := previous_command(session, table)) is None:
        return None
    before = parse(last[0], table, settings)
    verb = last[1].handed_on(question, before)
    if verb is None or verb not in table:
        return None
    read = slots.read(question)
    if read.quoted and any(not any(fill.holds(t, said) for t in before.texts) for said in read.texts
                           if not slots.ROW_ID.fullmatch(said)):
        return None
    spec = table[verb]
    _, options = fill.read(question, spec, session.model or settings.model)
    kept = {**settings_kept.shared_options(question, before, spec, table),
            **settings_kept.carried(question, spec, before, session, settings, table)}  # ("at that layer")
    rows = slots.ROW_ID.findall(question)  # rows said by their ids join the texts ("how come #17 is the top hit?")
    texts = [*before.texts, *(row for row in dict.fromkeys(rows) if row not in before.texts)]  # (once)
    most = spec.texts.most
    texts = texts[-most:] if rows and most and len(texts) > most else texts[:most]  # (the rows it names, kept)
    line = fill.build(spec, texts, {**kept, **options})
    return Understanding(line=line, because=f"it asks {code(last[1].name, 20)}'s question of {code(verb, 20)}")


def _points_at_its_own(read: slots.Slots) -> bool:
    """Whether the question's pointing word follows two texts of its own or more ("are 'cold' and 'hot' opposites?
    compare them"): it points at those, not at the previous reply's (as "now 'A' and 'B' with those" does)."""
    said = re.search(r"\b(?<!with )(?<!to )(?<!against )(?:they|them|those|these|both)\b", read.frame, re.I)
    return said is not None and read.frame[:said.start()].count(slots.PLACEHOLDER) >= 2


#: A new text with a blank after an opening word, unquoted ("now Rome is the [MASK] of Italy." after `lens`).
_NOW_MASKED = re.compile(r"(\s*(?:(?:and|now|ok|okay|then|next|what about|how about)[\s,]+)+)"
                         r"([^'\"“‘:]*(?:\[MASK\]|<mask>)[^'\"”’]*?)\s*", re.I)


def follow_up(question: str, session: Session, table: Mapping[str, Command],
              settings: Settings) -> Understanding | None:
    """The previous command re-run with what ``question`` changes ("now at layer 4"), or None.

    A question is a follow-up when it starts like one (or says only options) and names
    an option of the previous command or new quoted texts for it.
    """
    if (back := named_back(question, session, table)) is not None:  # "go back to the similarity but at layer 1"
        previous, spec, question = back
        if fill.only_filler(question):
            return Understanding(line=previous, follow_up=True, because=f"it goes back to {code(previous, 80)}")
    elif (last := previous_command(session, table)) is not None:
        previous, spec = last
    else:
        return None
    if slots.MASKED.search(previous) and (masked := _NOW_MASKED.fullmatch(question)) is not None:
        return follow_up(f"{masked.group(1)} \"{masked.group(2)}\"", session, table, settings)  # as if quoted
    plain = _POLITE.sub("", question)  # "could you rerun that once more": read past the politeness
    plain = re.sub(rf"^\s*{re.escape(spec.name)}\s+(?:(?:that|it|this)\s+)?(?=again\b)", "", plain,
                   flags=re.I)  # "search (that) again but ..."
    before = parse(previous, table, settings)
    compared = spec.name != "compare" and len(before.texts) > 1 and _COMPARE_THEM.match(plain) is not None
    if _RUN_AGAIN.match(plain) and not compared:  # "run that again" ("compare them" after `why A | B`: `compare`)
        return Understanding(line=previous, follow_up=True, because=f"it asks for {code(previous, 80)} again")
    read = slots.read(question)
    swap = read.quoted and len(read.texts) == 1 and _FOR_WORD.match(read.rest) is not None
    own_word = not spec.texts.word_first and _a_word_of(read, question, before.texts)  # "the word 'pitch' in both"
    models = len({slots.model_name(m) for m in slots.MODEL.finditer(read.rest)}) > 1 and any(
        takes_models(o) and "," in o.usage() for o in spec.options)  # "compare minilm and mpnet there"
    another = (_starts_with_another(question, spec, table) and not models) or _verb_of_another(
        read.rest, spec, table) or (read.quoted and (_names_another(read.rest, spec, table) or own_word))
    if another and not swap:
        return None  # "compare that sentence with 'A'", "now search for 'X'", "the word 'pitch' in both": another
    said = spoken.read(read.rest, spec, known=named.known_names(spec, session, settings))
    if not swap and any(c.name != spec.name and says_term(c.terms, said.rest) for c in dict.fromkeys(table.values())):
        return None  # a term of another command's measure, left after this one's options ("now topic-model it")
    said.options.update(settings_kept.carried(question, spec, before, session, settings, table))  # "on my corpus"
    if list(said.options) == ["corpus"] and named.SWITCH.search(question):
        return None  # "go back to reviews": another corpus to use, not this command on it
    reset = back_to_default(said.rest, spec)  # "back to the last layer"
    said = spoken.Spoken({**reset.options, **said.options}, reset.rest)
    if not said.options:  # "back to tokens" after `project ... --level sentences`; "add max" after `--pool cls`
        said = _other_choice(said.rest, before, spec)
    grown = _grown(said.options, before, spec, session.model or settings.model) if _ADDS.search(read.rest) else {}
    said.options.update(grown)  # "add cls and max too", "include bert-small", "throw bert-base in too": a list grows
    leftover = slots.strip_asking(said.rest, slots.ASKING | fill.asking_words(spec))
    named_as = {w for o in spec.options for w in spoken.option_names(spec, o) if w.isalpha()}  # "switch the projection"
    leftover = " ".join(w for w in leftover.split() if w.lower().strip(",.?!") not in named_as)
    # "that with 'a bird'", "add a third one: The milk has gone sour."
    adding = (read.given or ":" in read.rest) and bool(_REFERS.search(_DO_THAT.sub(" ", fill.before_colon(read.rest)))
                                                        and not _points_at_its_own(read) or _ADDS.search(read.rest))
    adding = adding and not (spec.texts.word_first and len(read.texts) == 1 and " " not in read.texts[0]
                             and not _ADDS.search(read.rest))  # ("what about the word 'the' in those": a new word)
    # "why did it pick that? which tokens mattered?" after `mask`: a flag of the last command, said first
    opened = re.sub(r"^\W*(?:(?:and|so|but|ok|okay|now|then)\W+)+", "", plain, flags=re.I)  # "and why that fill?"
    first = opened.split(None, 1)[0].lower().strip("?!.,") if opened.strip() else ""
    own_flag = not read.quoted and getattr(spec.option(first), "is_flag", False)
    if own_flag:
        said.options.setdefault(first, "")
    # a word pointing back, an option said and nothing else: a change to the last reply ("show those in glove space")
    points_back = (not read.quoted and bool(said.options) and fill.REFERS_BACK.search(read.rest) is not None
                   and not fill.REFERS_BACK.sub(" ", leftover).strip())
    if not _FOLLOW_UP.match(plain) and (not fill.only_filler(leftover) or read.quoted) and not adding \
            and not points_back and not swap and not (grown and not read.quoted) and not own_flag \
            and not (models and not read.quoted):
        return None
    texts: list[str] = []
    if adding:
        texts = before.texts + list(read.texts)
    elif read.quoted or read.lead and fill.only_filler(read.lead) and spec.texts.most != 0:
        texts = _new_texts(spec, before.texts, read)  # (or typed after a colon: "now these: a bird, a plane")
    elif (_ADDS.search(read.rest) and (target := slots.TARGET_WORD.search(read.rest) or _ADD_WORD.fullmatch(plain))
          and not spec.texts.word_first and (spec.texts.most is None or len(before.texts) < spec.texts.most)):
        texts = [*before.texts, *re.split(r"\s*,\s*(?:and\s+)?|\s+and\s+", target.group(1))]  # "add spring",
        # "add cell and match", "add the word spring too" after `contextuality bank`
    elif (spec.texts.word_first and not said.options and (alone := _WORD_ALONE.fullmatch(plain))
          and alone.group(1).lower() not in table and not fill.only_filler(alone.group(1))):
        texts = [alone.group(1), *before.texts[1:]]  # "what about queen", "and violin?" after `neighbors king`
    elif (not said.options and (listed := _WORDS_FOR.fullmatch(plain)) and fill.only_filler(listed.group(1))
          and not spec.texts.word_first and spec.texts.most != 0 and all(" " not in t for t in before.texts)):
        texts = re.split(r"\s*,\s*(?:and\s+)?|\s+and\s+", listed.group(3))
        texts = [] if not listed.group(2) and any(fill.only_filler(t) or t.lower() in table for t in texts) else texts
        # (not "for them")
    had = option_values(before, spec)
    if (not said.options and not texts and spec.texts.most == 0 and spec.option("corpus") is not None and (
            alone := _WORD_ALONE.fullmatch(plain)) and not fill.only_filler(alone.group(1)) and alone.group(1).lower()
            not in table):
        said.options["corpus"] = alone.group(1)  # "same for tickets" after `clusters --corpus reviews`
    number = numbers.number_in(read.rest) if not said.options and not texts and not any(
        spec.option((m.group(1) or m.group(2)).lower()) is None for m in _NOT_A_COUNT.finditer(read.rest)) else None
    if number is not None and (numeric := fill.number_option(had, spec, number)) is not None:
        said.options[numeric] = number  # "try 12 instead", "show ten per layer", "make it 16" after `--max-length 10`
    if (more := _MORE.search(read.rest)) is not None and (count := spoken.count_option(spec)) in said.options and (
            said.options[count] == more.group(1)) and numbers.is_number(was := had.get(count) or str(
            spec.option(count).default)):  # type: ignore[union-attr]
        said.options[count] = str(int(float(was)) + int(more.group(1)))  # "show 5 more" after 10 hits: 15
    if not said.options and not texts or spec.texts.most is not None and len(texts) > spec.texts.most:
        return None  # more texts than it takes is another question ("which tokens made #15 come up?" after a search)
    if not texts and all(had.get(name) == value for name, value in said.options.items()) and not fill.only_filler(
            fill.REFERS_BACK.sub(" ", leftover)):
        return None  # nothing changes and it asks more ("and which tokens make them close at that layer?")
    options = {spec.option(name).dest: value for name, value in said.options.items()}
    try:
        line = merged_line(previous, Invocation("again", texts, options), table, settings)
    except UserError as exc:
        return Understanding(message=f"I read this as a change to {code(previous, 80)}, but: {exc}",
                             suggestions=(previous,), follow_up=True)
    if line == previous and not fill.only_filler(fill.REFERS_BACK.sub(" ", leftover)):
        return None  # it changes nothing and asks more ("which words sit closest to 'bark' in glove?" after `static`)
    which = "an earlier command" if back is not None else "the previous command"
    return Understanding(line=line, follow_up=True, because=f"it changes {which}, {code(previous, 80)}")


def _other_choice(words: str, before: Invocation, spec: Command) -> spoken.Spoken:
    """Another choice of an option the previous line set, said alone ("back to tokens" after `--level
    sentences`: a word too common to name a choice elsewhere); or the one choice of any of its options that the
    words say with nothing but a follow-up's wrapping ("what about max?" after `why`)."""
    for name, value in option_values(before, spec).items():
        for choice in spec.option(name).choices:  # type: ignore[union-attr]
            said = re.search(rf"(?<![\w-]){re.escape(choice)}s?(?![\w-])", words, re.I)
            if choice != value and said is not None:
                return spoken.Spoken({name: choice}, words[:said.start()] + " " + words[said.end():])
    names, choices, aside = _choices(spec)
    if not names:
        return spoken.Spoken({}, words)
    words = _WHAT_IF.sub(" ", aside.sub(" ", words))  # ("and max instead of cls": the choice it leaves)
    alone = list(choices.finditer(words))  # "what about max?" after `why`
    after = words[alone[0].end():].split(None, 1) if len(alone) == 1 else []
    counted = bool(after) and numbers.is_number(after[0])  # ("show all three side by side": texts, not `--pool all`)
    if len(alone) == 1 and not counted and fill.only_filler(words[:alone[0].start()] + " " + words[alone[0].end():]):
        said = alone[0]
        return spoken.Spoken({names[said.lastindex - 1]: said.group(0).lower()},  # type: ignore[operator]
                             words[:said.start()] + " " + words[said.end():])
    return spoken.Spoken({}, words)


@functools.lru_cache(maxsize=64)
def _choices(spec: Command) -> tuple[tuple[str, ...], re.Pattern[str], re.Pattern[str]]:
    """The options of ``spec`` that have choices, every choice as one pattern (group i: a choice of option i), and
    those choices set aside ("instead of cls")."""
    options = [o for o in spec.options if o.choices]
    each = ["|".join(re.escape(c) for c in o.choices) for o in options]
    return (tuple(o.name for o in options),
            re.compile("|".join(rf"(?<![\w-])({c})(?![\w-])" for c in each) or "(?!)", re.I),
            re.compile(rf"{ASIDE}(?:{'|'.join(each) or '(?!)'})\b", re.I))


def _grown(said: Mapping[str, str], before: Invocation, spec: Command, own_model: str) -> dict[str, str]:
    """The values said for a list option, added to the previous command's: "add cls and max" after `--pool mean`
    is `--pool mean,cls,max`; a model added where none was named joins the conversation's model."""
    had = option_values(before, spec)
    out = {}
    for name, value in said.items():
        option = spec.option(name)
        if option is None or option.is_flag or "," not in option.usage():
            continue
        old = had.get(name) or (own_model if takes_models(option) else "")
        merged, place = list(dict.fromkeys([*old.split(","), *value.split(",")])), {c: i for i, c in
                                                                               enumerate(option.choices)}
        if "," in old and all(v in place for v in merged) and old.split(",") == sorted(old.split(","), key=place.get):
            merged.sort(key=place.get)  # listed in the help's order before: the one added takes its place there
        if old:
            out[name] = ",".join(merged)
    return out


def opens_like_follow_up(words: str) -> bool:
    """Whether words open the way a follow-up does ("and with bert-small?", "but at layer 2", "with seed 9")."""
    return _FOLLOW_UP.match(_POLITE.sub("", words)) is not None


def sounds_like_follow_up(question: str) -> bool:
    """Whether a question opens like a follow-up or points back at the previous reply ("compare that with X")."""
    return opens_like_follow_up(question) or _REFERS.search(question) is not None


def _new_texts(spec: Command, before: list[str], read: slots.Slots) -> list[str]:
    """New texts for the previous command (its texts ``before``): a new word replaces only the word ("try the word
    'river'")."""
    if spec.texts.word_first and read.word is not None and len(read.texts) == 1:
        return [read.word, *before[1:]]
    last_word = before[0] if before and " " not in before[0] else ""  # (`static` may have run on sentences alone)
    if spec.texts.word_first and (word := read.word_said_outside(slots.ASKING, also=last_word)):
        return [word, *read.texts]  # "now bank in 'A' and 'B'"; the word before, when each new sentence holds it
    return list(read.texts)
