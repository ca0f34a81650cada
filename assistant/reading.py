"""Which command line a line runs: one decision for every face (and for the question sets' scores).

A question in plain English is read as the line that answers it (:mod:`assistant.understanding`). A line that
starts with a command's word is that command as typed, unless it reads as a sentence: the rules here say when
("find texts about late delivery", "compare 'a cat' and 'a dog'", "project the vocabulary", "serch for X").
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Any

from assistant.commands.base import Command
from assistant.commands.registry import TABLE
from assistant.commands.slots import ASKING, quoted_free, quoted_spans
from assistant.parsing import parse
from assistant.session import Session
from assistant.understanding import Understanding, another_model, is_question, ranks, spoken, understand
from assistant.understanding.context import opens_like_follow_up
from assistant.understanding.fill import REFERS_BACK, asking_words, only_filler
from assistant.understanding.making import Progress
from assistant.understanding.named import known_names
from tools.core.config import Settings
from tools.core.errors import UserError
from tools.models.hub import ModelHub


@dataclass(frozen=True)
class Reading:
    """What a line runs: ``ran`` (itself, or the line a question was read as, ``routed``), with ``inv`` when it
    was parsed here; or ``unclear``: a question not clear enough to act on (its sentence and suggestions)."""

    ran: str
    routed: bool = False
    inv: Any = None
    because: str = ""
    offered: tuple[str, ...] = ()
    unclear: Understanding | None = None


def read_line(line: str, session: Session, hub: ModelHub, settings: Settings,
              progress: Progress | None = None) -> Reading:
    """The command line ``line`` runs in this conversation: one decision for every face (and for the question
    sets' scores). A question in plain English is read as the line that answers it. A line that starts with a
    command's word is that command as typed, unless it reads as a sentence (see :func:`_as_sentence` for one the
    parser refuses): a parsed line without `|` or options that starts with another name of a command ("find texts
    about late delivery"), holds quotes inside words, or says its options in words, is read too, and the reading
    runs when it keeps meaning. The parser's refusal is raised as it is otherwise. Where the line is read as words,
    rows of the last reply's ranking named by their rank are their ids ("why did the first hit match?": ``#1536``);
    a typed command's texts are taken as they are."""
    def asked() -> str:  # (read when the line is read as words: a rank past the table is refused there only)
        return ranks.by_id(line, session)

    if is_question(line, TABLE):
        understood = understand(asked(), session, hub, TABLE, settings, progress=progress)
        if understood.line is None:
            return Reading(line.strip(), True, unclear=understood)
        return Reading(understood.line, True, because=understood.because, offered=understood.suggestions)
    try:
        inv = parse(line.strip(), TABLE, settings)
    except UserError as exc:
        sentence = _as_sentence(asked(), session, hub, settings, progress)
        if (fixed := _misspelt_sentence(line, exc.fixes, sentence, session, hub, settings, progress)) is not None:
            return fixed  # "serch for broken zipper": `search broken zipper`, not a text "serch for broken zipper"
        if sentence is None:
            raise
        if sentence.line is None:  # read as a follow-up that cannot run: its sentence and the way
            return Reading(line.strip(), True, unclear=sentence)
        return Reading(sentence.line, True, parse(sentence.line, TABLE, settings), sentence.because)
    alias = line.split()[0].lower() != inv.verb  # a command's other name: how sentences start
    quoted = _quoted_in_words(inv.texts, TABLE[inv.verb].texts.actions)
    framed = _framed(line, inv.verb) or _led_by_options(line, inv.verb)  # "probe these sentences for POS: A | B | C"
    plain = COMMAND_SYNTAX.search(line) is None
    pointing = plain and bool(session.history) and REFERS_BACK.fullmatch(  # "tokenize that sentence", "rollout for
        _LED_IN.sub("", " ".join(inv.texts).strip(" ?!."), count=1)) is not None  # them": this command on them
    back = pointing or plain and _POINTS_BACK.search(" ".join(inv.texts)) is not None  # "rollout on the first of those"
    given = " ".join(inv.texts)  # "project the vocabulary": a thing that exists ("attend The cat sat": a sentence)
    named = plain and _DEFINITE.match(given) is not None and not given[:1].isupper()
    led = plain and _LED_IN.match(" ".join(inv.texts)) is not None  # "help with corpus", "neighbors of bank"
    worded = plain and (alias or quoted or _says_options(line, inv.verb))
    redo = plain and inv.verb == "again" and opens_like_follow_up(" ".join(inv.texts))  # "again with seed 9"
    corpus = plain and _corpus_first(given, TABLE[inv.verb], session, settings)
    if framed or back or named or led or (alias and quoted) or worded or redo or corpus:
        # read as the command it starts with (a typed command, "neighbors bank", is not read)
        read = understand(asked(), session, hub, TABLE, settings,
                          None if alias or framed or (back and not pointing) or quoted or redo else inv.verb,
                          insist=pointing, progress=progress)
        if read.line is not None and read.line != line.strip():
            meant = parse(read.line, TABLE, settings)
            said = meant.verb == inv.verb and meant.options != inv.options  # options said in words
            inside = meant.verb == inv.verb and all(  # (a word's other form: "help with tokenizing")
                t[:max(4, len(t) - 2)].lower() in " ".join(inv.texts).lower() for t in meant.texts)
            textless = TABLE[meant.verb].texts.most == 0 or not meant.texts and only_filler(  # ("project the
                " ".join(inv.texts), asking_words(TABLE[meant.verb]))  # vocabulary": `vocab`; "probe the layers")
            if alias or said or quoted or framed or back or redo or corpus or (led and inside) or (named and textless):
                return Reading(read.line, True, meant, read.because)
    return Reading(line.strip(), False, inv)


def _misspelt_sentence(line: str, fixes: tuple[tuple[str, str], ...], read: Understanding | None, session: Session,
                       hub: ModelHub, settings: Settings, progress: Progress | None = None) -> Reading | None:
    """A sentence that starts with a misspelt command ("serch for wifi not working", "clsuter into 3"): read with the
    nearest command's name put right, when that reads as a sentence too, unless the line as typed (``read``) was read
    without the misspelt word in its texts ("head 2 in every layer for A") or as another command. A line with `|` or
    options keeps the parser's "did you mean" (a typed command: the corrected line is one click away)."""
    said = read.line if read is not None else None
    if not fixes or COMMAND_SYNTAX.search(line) or len(line.split()) < 2 or said and fixes[0][0] not in said.split():
        return None
    try:
        reading = read_line(corrected(line.strip(), fixes[:1])[0], session, hub, settings, progress)
    except UserError:
        return None
    if not reading.routed or reading.unclear is not None or said and reading.ran.split()[0] != said.split()[0]:
        return None
    because = f"`{fixes[0][0]}` read as `{fixes[0][1]}`; {reading.because}".rstrip("; ")
    return dataclasses.replace(reading, because=because)


def _framed(line: str, verb: str | None = None) -> bool:
    """Whether a line that starts with a command's name puts its texts after words that ask or say its options,
    then a colon ("word in context: rock | She threw a rock. | I love rock music.", "compare at layer three: A |
    B", "embed these: A | B"), not a text that holds a colon ("compare Q: why? | A: because")."""
    head = re.match(r"\s*\S+\s+([^|:]*):\s", line)  # ("word in context for 'crane': A | B": a quoted word too)
    words = re.findall(r"[a-z]+", head.group(1).lower()) if head else []
    if words in (["these"], ["this"], ["following"], ["the", "following"], ["for"], ["of"], ["on"], ["about"]) or (
            len(words) == 1 and len(words[0]) > 2 and verb in TABLE and words[0] in asking_words(TABLE[verb])):
        return True  # "embed these: A | B | C", "search for: late delivery", "why similar: A | B"
    return len(words) >= 2 and (any(w in ASKING for w in words) or (head is not None and verb in TABLE and (
        TABLE[verb].texts.most == 0 or bool(spoken.read(head.group(1), TABLE[verb]).options))))  # ("export the
    # vectors of: A | B": texts after a command that takes none)


def _led_by_options(line: str, verb: str) -> bool:
    """Whether a line that starts with a command's name says its options in words before "for" / "of" and its
    texts ("scatter plot of the tokens in three dimensions for A | B"), without a colon."""
    head = re.match(r"\s*\S+\s+([^|'\"]*)\s+(?:for|of|on)\s+[^|]*\|", line)
    return head is not None and bool(spoken.read(head.group(1), TABLE[verb]).options)


def _says_options(line: str, verb: str) -> bool:
    """Whether a line that starts with a command's name says options of it in words ("for dependency labels")."""
    return bool(spoken.read(quoted_free(line.split(None, 1)[1] if " " in line.strip() else ""), TABLE[verb]).options)


#: Words that point at something that exists ("the conversation", "my reviews"), not at a new text ("a text").
#: A typed command's text that starts with one names something that exists rather than giving a text ("project the
#: vocabulary"): the line is read as a sentence, and runs as read when that is a command that takes no texts (`vocab`).
_DEFINITE = re.compile(r"\b(?:the|its|my|our|this|these|those|all)\b", re.I)
#: Texts of a typed line that point at texts elsewhere ("rollout on the first of those sentences", "tokenize rows 3
#: and 4", "search my corpus for X"): the line is a sentence.
_POINTS_BACK = re.compile(r"\b(?:(?:of|on|for)\s+(?:those|these|them)(?!\s+(?:about|that|which|who|with|where)\b)|"
                          r"my\s+(?:corpus|texts|data)|(?:that|this|the\s+same)\s+(?:corpus|dataset)|rows?\s+\d+|the\s+(?:first|second|last)\s+(?:of|sentence|text)|"
                          r"(?:sentences|texts|rows)\s+(?:from|of|in)\s+it(?=\W*$))\b",  # ("with sentences from it")
                          re.I)
#: A typed command's text that starts with a word that only leads into what follows ("help with corpus",
#: "neighbors of bank"): the line is a sentence, and runs as read.
_LED_IN = re.compile(r"^(?:with|of|about|on|for)\s+", re.I)
#: What only a typed command has: texts separated by `|`, or an option.
COMMAND_SYNTAX = re.compile(r"\||(?:^|\s)--[a-z]")


#: A typed command's text that opens with a name and a word that leads into what is asked of it ("notes for a man
#: playing guitar", "in reviews about refunds", "the tickets corpus where"); group 1: the name.
_NAME_FIRST = re.compile(r"(?:(?:in|on|from|across|through)\s+)?(?:the\s+|my\s+)?(\S+)(?:\s+corpus)?\s+"
                         r"(?:for|about|with|where|that|which|mentioning)\b", re.I)


def _corpus_first(text: str, spec: Command, session: Session, settings: Settings) -> bool:
    """Whether a typed command's text opens with the name of one of the conversation's corpora and a word that leads
    into what is asked of it ("search notes for a man playing guitar"); the corpora are listed only for a text of
    that shape."""
    said = _NAME_FIRST.match(text)
    return said is not None and said.group(1).lower() in {
        c.lower() for c in known_names(spec, session, settings).get("corpus", [])}


def _quoted_in_words(texts: list[str], actions: tuple[str, ...] = ()) -> bool:
    """Whether a typed command's texts are quotes with words around them (a sentence, not texts); a command's action
    before its quoted argument is not such a word (`corpus load "my reviews.csv"`, as the page writes it)."""
    for text in texts:
        action, _, argument = text.strip().partition(" ")
        text = argument if action.lower() in actions else text
        outside, pos = [], 0
        for start, end, _ in quoted_spans(text):
            outside.append(text[pos:start])
            pos = end
        if pos and re.search(r"[A-Za-z]", "".join(outside) + text[pos:]):
            return True
    return False


#: A command's name and a word said in chat after it ("why tho", "compare pls"), or a question after it about
#: what came before ("why are there so many pieces"): a question about the last reply.
_CHAT_TAIL = re.compile(r"\s*[a-z]+\s+(?:tho|though|then|pls|plz|please|again|now)\W*|"
                        r"\s*[a-z]+\s+(?:are|is|was|were|do|does|did)\s+(?:there|they|these|those|it|its)\b.*",
                        re.I)  # ("why are there so many pieces": a question, not `why` with one text)


#: An empty quoted text ("attend ''", "compare "" | a").
_EMPTY_QUOTES = re.compile(r"(?:^|\s|\|)([\'\"])\1(?=\s|\||$)")


def _as_sentence(line: str, session: Session, hub: ModelHub, settings: Settings,
                 progress: Progress | None = None) -> Understanding | None:
    """A line the parser refused, read as a sentence, or None (the parser's sentence stands).

    "compare that with bert-small" is the last answer on a second model (``--vs``), or, when the last command
    has no side-by-side form, the sentence that says so. Otherwise the line is read once as a question, and the
    reading runs when the line is shaped like a sentence (quotes, a colon, "and", a question mark, a word pointing
    back) and reads as the command it starts with ("compare 'a cat' and 'a dog'", "why?"), or says that command's
    options in words ("cluster the reviews corpus into 8 groups"), or its command takes no texts and the words
    point at what exists ("export the conversation", not "benchmark a text"); or, for a line without `|` or
    options, when its first word is no command's name (a typo, "20 nearest neighbours of bank"), another name of
    one ("explain ...") or it holds quotes inside words. "compare only one text" keeps the parser's sentence."""
    if not line.split() or re.match(r"\s*<(?!mask>)", line, re.I):
        return None  # "<script>...": markup, not a sentence; the parser's sentence echoes it
    if _EMPTY_QUOTES.search(line):
        return None  # `attend ''`: an empty text, which the parser's sentence names, not a text of two quotes
    first = line.split()[0].lower().rstrip("?!.")  # "why?" names `why`
    typed = TABLE.get(first)
    if typed is not None and not typed.takes_vs and "--vs" in line.lower().split():
        return None  # the parser's refusal of --vs says what to use instead
    other = another_model(line, session, TABLE, settings)
    if other is not None and typed is not None:
        if other.line is None or typed.name == "compare" or other.line.split()[0] == typed.name:
            return other
    framed = _framed(line, typed.name if typed is not None else None)
    syntax = COMMAND_SYNTAX.search(line) is not None and not framed  # ("download the vectors of these: A | B")
    if "|" in line and syntax and not _quoted_in_words([line]):  # (quoted texts with words after them are a sentence)
        return None  # texts between `|`: a typed command, whose texts may hold "and" or a "?" of their own
    shaped = (any(mark in line for mark in "'\"“‘:") or re.search(r"\s(?:and|vs\.?|versus|with)\s", line) is not None
              or line.rstrip().endswith("?")
              or REFERS_BACK.search(line) is not None  # "why are they similar?"
              or _CHAT_TAIL.fullmatch(line) is not None)  # "why tho"
    if syntax and not shaped:
        return None
    read = understand(line, session, hub, TABLE, settings, typed.name if typed is not None else None,
                      progress=progress)
    if read.line is None and typed is not None and session.history and _CHAT_TAIL.fullmatch(line):
        # ("why are there so many pieces" after `tokenize`: whatever reads it, or what it could not find with the
        # likeliest lines, not `why`'s usage)
        return understand(line, session, hub, TABLE, settings, progress=progress)
    if read.line is None:
        return None
    if read.follow_up and not syntax:
        return read  # "why that answer?" after `mask`: a change to the last command, not `why`
    same = typed is not None and read.line.split()[0] == typed.name
    takes_none = typed is not None and typed.texts.most == 0
    if same and takes_none and only_filler(line.split(None, 1)[-1], asking_words(typed) - {"a", "an"}):
        return read  # "history pls", "vocab projector export for tensorboard": words that ask for it (not "a text")
    if same and (shaped or " --" in read.line or (takes_none and _DEFINITE.search(line))):
        return read  # "export the conversation": words about what exists, after a command that takes no texts
    if not syntax and (typed is None or typed.name != first or _quoted_in_words([line]) or " --" in read.line):
        return read  # (a reading with options said in words: "compare minilm and mpnet on the STS benchmark")
    if not syntax and takes_none and REFERS_BACK.search(line) is not None:
        return read  # "export the vectors for those two": texts pointed at, for a command that takes none
    if not syntax and not same and REFERS_BACK.search(line) is not None and typed is not None and typed.followed:
        return read  # "compare that to the static glove vector" after `word`: another command on the texts before
    if not syntax and takes_none and not same and not read.suggestions and (
            framed or not parse(read.line, TABLE, settings).texts):
        return read  # clearly another command's: one that takes no texts either ("export the input embedding
        # matrix for the projector"), or one that takes the texts after the colon ("export the vectors of: A | B")
    return None


def corrected(line: str, fixes: tuple[tuple[str, str], ...]) -> tuple[str, ...]:
    """The line with each misspelling put right: the verb where it starts the line, else the last place the
    wrong word stands (options come after the texts)."""
    out = []
    for wrong, meant in fixes:
        at = 0 if line.startswith(wrong) else line.rfind(wrong)
        if wrong and at >= 0:
            out.append(line[:at] + meant + line[at + len(wrong):])
    return tuple(out)
