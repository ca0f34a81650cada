"""Questions in plain English -> the command line that answers them, offline, on the conversation's model.

- ``router``: which row a question asks for (its phrasings and the questions people asked for it, embedded by the
  model: semantic search and a classifier); ``examples``: those asked questions (``asked/*.jsonl``);
  ``kept_index``: where the router's index is kept between processes; ``making``: the indexes made in this process,
  one making at a time, and how far a making has got (a question waiting for it shows that as its progress).
- ``assistant.commands.slots`` (shared with the commands' own text-shape hints): the texts a question carries.
- ``spoken``: options said in words, mapped onto the row's own options; ``words``: the word tables it reads with
  (how an option, a choice, a name, a flag or a number is said); ``numbers``: a number said in digits or words;
  ``models_said``: the model a question names for an option that takes models; ``spans``: the patterns (compiled
  once) and the spans of a question a reading cuts out.
- ``fill``: a row, texts and options -> a command line; the normal parser then runs it.
- ``context``: what a question takes from the conversation (follow-ups, "that layer", "the next head");
  ``earlier``: the earlier commands it may point back at (the last, the last on two texts, "the first pair");
  ``reset``: options a follow-up sets back to their default ("back to the last layer"); ``settings_kept``: the
  previous command's settings a question keeps ("that layer", "two layers deeper", "those same settings");
  ``beside``: the previous command on a second model ("compare that with bert-small");
  ``replaced``: one of the previous texts swapped for a new one; ``one_layer``: one layer or head asked of a command
  that takes none ("what about layer 3?" after `cka`);
  ``named``: which corpus a question means ("on reviews", "my corpus", "that one"); ``ranks``: rows of the last
  reply named by their rank ("the first hit": its id), which a line is read with (:mod:`assistant.reading`);
  ``token_asked``: what one quoted word of a text attends to (`rollout --token`);
  ``helping``: questions about the conversation itself (`help` of the last command, of one named right after
  `help X`; the default model), what a term means (`help` of it), and "show it" right after `help X` (X);
  ``facts``: :class:`Understanding`, what a question was read as.

:func:`understand` is the one entry point: it returns the line to run, or a sentence and the
likeliest command lines when the question is not clear enough to act on.

May import: ``tools``, ``assistant.commands``, ``assistant.corpora`` (the names of the corpora a conversation may
use), ``assistant.parsing``, ``assistant.sharing.links``;
never ``assistant.app`` or ``assistant.render``.
"""

from __future__ import annotations

import dataclasses
import difflib
import logging
import re
import threading
from collections.abc import Callable, Mapping

from assistant.commands import slots
from assistant.commands.base import Command, Context, Invocation
from assistant.parsing import parse
from assistant.session import Session
from assistant.sharing.links import merged_line
from assistant.understanding import (
    context,
    earlier,
    fill,
    helping,
    named,
    replaced,
    reset,
    router,
    settings_kept,
    spoken,
)
from assistant.understanding.beside import another_model
from assistant.understanding.facts import Understanding
from assistant.understanding.making import Progress
from assistant.understanding.numbers import in_digits
from assistant.understanding.one_layer import asked_of_one
from assistant.understanding.token_asked import token_asked
from tools.core.config import Settings
from tools.core.errors import UserError
from tools.core.text import code
from tools.models.hub import ModelHub

__all__ = ["Understanding", "another_model", "is_question", "prepare", "spoken", "understand"]

log = logging.getLogger(__name__)

#: Longer lines are not read as questions (typed commands take long texts).
MAX_QUESTION_CHARS = 2000
#: How far behind the best reading a reading that needs no texts may be, to run when the best needs texts the
#: question lacks.
RUNNER_UP = 0.15
#: Words that point back at the previous command's texts themselves ("that pair", "those two sentences").
_THOSE_TEXTS = re.compile(r"\bth(?:at|is|e|ose|ese)\s+(?:two\s+)?(?:pair|sentences|texts)\b", re.I)
#: Words that point back at the previous command's texts or its answer (not "it": "plot it" after a search is the
#: corpus's map).
_THEM = re.compile(rf"\b(?:they|them|those|these|both|the\s+(?:exact\s+)?(?:score|cosine|number))\b|"
                   rf"{_THOSE_TEXTS.pattern}", re.I)  # ("what's the score exactly?" after `compare`)
#: A question that asks to run the last command again ("same again but at layer 2", "redo it with cls pooling").
_AGAIN = re.compile(r"^\s*(?:(?:and|ok|now|please|could you|can you|just)\s+)*(?:(?:run|do)\s+(?:that|it|this)\s+again|"
                    r"(?:the\s+)?same\s+(?:again|command\b|thing\s+(?:as\s+before|again)\b)|again\b|redo\b|rerun\b|re-run\b|"
                    r"repeat\b|one more time\b|"
                    r"(?:does|do|would|will)\s+(?:the\s+)?same\s+(?:thing\s+)?(?:hold|happen|apply|work)\b|"
                    r"(?:run|do)\s+(?:the|that|my)\s+(?:last|previous)\s+(?:command|one)|"
                    r"(?:the\s+)?same\s+as\s+(?:the\s+|my\s+)?(?:last|previous)\s+(?:command|line|one)\b|"
                    r"(?:the|my) (?:last|previous) (?:command|line|one) (?:again|once more|one more time)\b)", re.I)
#: One of several texts named by its place ("the first sentence"): the last command that ran on two or more.
_BY_PLACE = re.compile(r"\bthe\s+(?:first|second|third)\s+(?:one|sentence|text)\b", re.I)
#: The pair of an earlier command ("explain the first pair" after two `compare`s).
_EARLIER_PAIR = re.compile(r"\bthe\s+(?:first|earlier|other|original)\s+pair\b", re.I)
#: The texts of the last commands together ("put all three in one matrix" after two pairs that share a text).
_ALL_OF = re.compile(rf"\b{fill.ALL_OF}", re.I)
#: Option names that are words linking a sentence ("with", "in"): said, they name no option.
_LINKING = slots.ASKING | {"with", "vs", "as", "at", "by"}
#: How many command lines a reply offers when it does not guess.
SUGGESTIONS = 3


def is_question(line: str, table: Mapping[str, Command]) -> bool:
    """A line whose first word is a word but not a command (nor a near-miss of one, which the parser
    answers with "did you mean")."""
    stripped = line.strip()
    if not stripped:
        return False
    first = stripped.split()[0]
    if re.match(r"word[- ]?pieces?\b", stripped, re.I):  # "word pieces of X": what `tokenize` shows, not `word`
        return True
    if first.lower() in table or not re.match(r"[A-Za-z'\"“‘`]|[23]d\b", first, re.I):
        return False
    if first.lower().rstrip(",.!") in slots.ASKING:  # "ok back to the pair": a word of a sentence, not a typo of `tok`
        return True
    if any(first.lower() in o.choices for spec in dict.fromkeys(table.values()) for o in spec.options):
        return True  # "umap scatter of ...": a choice's name (umap, pca, cls) starts a sentence, not a typo of `map`
    return not difflib.get_close_matches(first.lower(), list(table), n=1, cutoff=0.8)


def _routable(table: Mapping[str, Command]) -> list[Command]:
    """The rows a question may be routed to (`again` is reached by follow-ups only)."""
    return [s for s in dict.fromkeys(table.values()) if s.phrasings and s.name != "again"]


def prepare(hub: ModelHub, table: Mapping[str, Command], settings: Settings) -> threading.Thread:
    """Start making (or reading from ``settings.router_path``) the default model's routing index in the background,
    so the first question does not wait for it (a server calls this as it starts). A failure is logged; the first
    question then makes it and says what went wrong."""

    def work() -> None:
        try:
            router.prepare(router.routing_model(hub, settings.model), _routable(table), settings.router_path)
        except Exception:
            log.warning("The question router could not be prepared at start.", exc_info=True)

    thread = threading.Thread(target=work, name="router-index", daemon=True)
    thread.start()
    return thread


def understand(question: str, session: Session, hub: ModelHub, table: Mapping[str, Command],
               settings: Settings, typed: str | None = None, insist: bool = False,
               progress: Progress | None = None) -> Understanding:
    """The command line ``question`` asks for, read on the conversation's model; ``typed``: the command the line
    starts with, when it is read as a sentence: it runs when its reading is close behind the best ("search the
    reviews for those about X and show 15" is a `search`, not `outliers`), or whatever the ranking with ``insist``
    (its only text points back: "attend on that sentence"). ``progress`` is told how the router's index is made
    when the question waits for it (the first question after a server starts)."""
    if len(question) > MAX_QUESTION_CHARS:
        raise UserError(f"That question is {len(question):,} characters long; questions are read up to "
                        f"{MAX_QUESTION_CHARS:,} characters. Type the command instead (long texts are fine "
                        "there), for example `compare A cat sat. | A kitten sat.`.")
    rows = _routable(table)
    question = slots.ASIDE.sub("", question)  # ("quick q: similarity between tea and coffee?")
    if not question.strip():
        return Understanding(message="Type a question or a command; for example:",
                             suggestions=tuple(s.examples[0] for s in rows if s.name in ("compare", "mask", "attend")))
    if "again" in table and _AGAIN.match(question) and (again := _again(question, session, table, settings)):
        return again
    if (asked := helping.int8_asked(question, table) or helping.run_after_help(question, session, table)
            or helping.judged(question, session, table) or helping.best_layer(question, session, table)
            or helping.what_is(question, session, table)
            or helping.differ(question, table) or token_asked(question, session, table, settings)) is not None:
        return asked
    switching = named.SWITCH.search(question) is not None and slots.MODEL.search(question) is not None
    follow = None if switching else (context.handed_on(question, session, table, settings)
                                     or another_model(question, session, table, settings)
                                     or replaced.swapped_text(question, session, table, settings)
                                     or replaced.dropped_text(question, session, table, settings)
                                     or replaced.word_replaced(question, session, table, settings)
                                     or context.follow_up(question, session, table, settings)
                                     or asked_of_one(question, session, table, settings))
    if follow is not None:
        return follow
    alone = (named.reloaded(question, session, table, settings)
             or named.load_asked_after(question, session, table, settings)
             or context.named_alone(question, session, table, settings)
             or named.corpus_switch(question, session, table, settings)
             or named.acted_on(question, session, table, settings)
             or named.listed(question, session, table)
             or helping.asked_of_the_last(question, session, table, settings)
             or helping.help_next(question, session, table))
    if alone is not None:
        return alone
    lm = router.routing_model(hub, session.model or settings.model)
    routing = router.route(lm, question, rows, settings.router_path, progress)
    here = Context(session, hub, settings)

    def offered(command: Command) -> bool:  # a suggestion known to be refused here is not offered
        return command.offered(here)

    close = any(r.spec.name == typed and (insist or routing.best.score - r.score <= RUNNER_UP) for r in routing.ranked)
    typed = typed if close else None  # the command the line starts with, when its reading is close behind
    opening = routing.best.score < router.MIN_OPENING and not (  # an off-topic question: first, or one that neither
        session.history and (context.sounds_like_follow_up(question) or fill.REFERS_BACK.search(question) is not None
                             or slots.read(question).given))  # points back nor
    # carries texts ("what is the weather in Paris tomorrow?" after `word light | ...` is no `neighbors light`)
    if (not routing.found or opening) and typed is None:
        return Understanding(message=f"I could not match {code(question, 60)} to anything the assistant does (it "
                             "answers questions about the embeddings of texts you give it); pick one of these "
                             "command lines, or write the texts in quotes.",
                             suggestions=_suggest(question, routing, table, offered))
    last, before = _referred(question, session, table, settings, routing)
    spec = (table[typed] if typed is not None else _word_first(question, routing, before, _with_texts(
        question, routing, before)) if before is not None and before.texts else routing.best.spec)

    def previous_for(command: Command) -> list[str]:  # the previous command's texts as ``command`` takes them
        return fill.previous_texts(before.texts, last[1].texts.word_first, command, question) if before else []

    previous = previous_for(spec)
    shared = settings_kept.shared_options(question, before, spec, table)
    try:
        line = fill.line_for(spec, question, table, previous, own_model=session.model or settings.model,
                             carried={**named.previous_corpus(spec, before),
                                      **settings_kept.asked_again(question, before, spec, shared),
                                      **settings_kept.carried(question, spec, before, session, settings, table)},
                             shared=shared,
                             known=named.known_names(spec, session, settings))
    except fill.MissingTexts as exc:
        runner = _without_texts(question, routing, table, before)  # "compare every layer with every other": `cka`
        if runner is not None:
            return runner
        if "help" in table and (subject := helping.asked_what(question)):  # ("what does cosine similarity mean?")
            return Understanding(line=f"help {spec.name}", because=f"it asks what {code(subject, 40)} is, and "
                                 f"gives no text to run {spec.name} on")
        return Understanding(message=str(exc), suggestions=_suggest(question, routing, table, offered, previous_for))
    # a close call runs the best reading and offers the runner-up one click away
    if typed is not None:
        return Understanding(line=line, because=f"it starts with `{typed}`")
    # (another row than the one that ran, on the texts the question refers to)
    other = () if routing.clear else _suggest(question, routing, table, offered, previous_for, leaving=spec, most=1)
    return Understanding(line=line, suggestions=other, because=router.because(routing, spec))


def _again(question: str, session: Session, table: Mapping[str, Command], settings: Settings) -> Understanding | None:
    """A question that asks to run the previous command again: with no earlier command, `again` with the options it
    says (as the command that reads most of them: `again` says there is nothing to run); after one, that command
    with the options it says for it ("run the last command again at layer 2"), or None when it says none (the
    conversation reads it)."""
    last = earlier.previous_command(session, table)
    if last is None and session.history:
        return None  # (a command that is not run again in other words: `corpus load`, `help`)
    found = slots.read(question)
    texts = list(found.texts) if found.quoted else []  # ("redo it with the sentences 'A' and 'B'")

    def options(spec: Command) -> dict[str, str]:  # those it sets back ("drop the layer option"), then those it says
        back = reset.back_to_default(found.rest, spec)
        return {**back.options, **spoken.read(back.rest, spec).options}

    specs = [last[1]] if last is not None else dict.fromkeys(table.values())  # (each command once, not per alias)
    said = max((options(spec) for spec in specs), key=lambda o: (len(o), sum(  # of equals, the one whose options'
        n not in _LINKING and re.search(rf"(?:(?<=--)|(?<![\w-])){re.escape(n)}(?![\w-])", question, re.I) is not None
        for n in o)))  # names are said ("with top 10": `--top`; not "with bert-small", `--with`)
    line = fill.build(table["again"], texts, said)
    because = "it asks to run the previous command again"
    if last is None:
        return Understanding(line=line, because=because)
    if not said and not texts:
        return None
    try:
        return Understanding(line=merged_line(last[0], parse(line, table, settings), table, settings),
                             because=because, follow_up=True)
    except UserError:
        return None


def _without_texts(question: str, routing: router.Routing, table: Mapping[str, Command],
                   before: Invocation | None) -> Understanding | None:
    """When the best reading needs texts the question does not carry, the next reading close behind that needs
    none (a question without texts asks for a command that takes none), with the previous command's settings it
    points back at ("compare minilm with mpnet on that" after `benchmark --sample 300`)."""
    for ranked in routing.ranked[1:SUGGESTIONS]:
        if ranked.spec.texts.least == 0 and routing.best.score - ranked.score <= RUNNER_UP:
            line = fill.line_for(ranked.spec, question, table,
                                 shared=settings_kept.shared_options(question, before, ranked.spec, table))
            return Understanding(line=line, because=f"it carries no texts for `{routing.best.spec.name}`")
    return None


def _referred(question: str, session: Session, table: Mapping[str, Command], settings: Settings,
              routing: router.Routing) -> tuple[tuple[str, Command] | None, Invocation | None]:
    """The previous command a question refers to, parsed: the last one, or the last that ran on as many texts as
    the question points at when the last ran on fewer ("plot both sentences" after `attend` of one of them, "the
    first sentence" after a command on one, "how are those sentences tokenized?" after `benchmark`), if a command
    that takes texts reads the question then; not past a command on the corpus."""
    last = earlier.previous_command(session, table)
    before = parse(last[0], table, settings) if last is not None else None
    quoted = slots.read(question).quoted
    if before is not None and before.texts and not quoted:
        if _EARLIER_PAIR.search(question) and len(before.texts) > 2:  # (of a matrix: its first two texts)
            return last, dataclasses.replace(before, texts=before.texts[:2])
        if _EARLIER_PAIR.search(question) and (first := earlier.first_pair(session, table)):
            return first, parse(first[0], table, settings)
        many = _ALL_OF.search(question)
        if many and len(before.texts) < (count := int(in_digits(many.group(1)))) and (
                together := earlier.gathered(session, table, count)):
            return last, dataclasses.replace(before, texts=together)
    wanted = 2 if fill.BOTH.search(question) or _BY_PLACE.search(question) else 1 if _points_back(question) else 0
    if before is None or len(before.texts) >= wanted or quoted or named.on_corpus(last[1]):
        return last, before  # (after a command on the corpus, "show all of them on a map" means its rows)
    older = earlier.previous_command(session, table, texts=wanted)
    if older is None:
        return last, before
    parsed = parse(older[0], table, settings)
    return (older, parsed) if _with_texts(question, routing, parsed).texts.most != 0 else (last, before)


def _points_back(question: str) -> bool:
    """Whether a question points back at the previous texts ("those", "the two sentences", "it")."""
    return _THEM.search(question) is not None or fill.REFERS_BACK.search(question) is not None


def _word_first(question: str, routing: router.Routing, before: Invocation, spec: Command) -> Command:
    """``spec``, unless the question names a word that two of the previous texts hold and points back at them ("what
    about just the word 'code' in those"): then the likeliest reading that takes a word first; or, for a reading
    that takes a word first, unless the question names none and the previous sentences share none ("how do the
    two sentences differ in meaning"): then the likeliest close reading that sets two texts or more side by side."""
    said = slots.TARGET_WORD.search(question)
    word = said.group(1).strip("'’") if said is not None else ""  # ("the word 'code'": its closing quote too)
    if not _points_back(question):
        return spec
    if spec.texts.word_first:  # (the question read once more only here: a word-first reading is rare)
        read = slots.read(question)
        if word or read.quoted or any(" " not in t for t in before.texts) or slots.shared_word(
                read.rest, before.texts, slots.ASKING):
            return spec
        return next((r.spec for r in routing.ranked[1:SUGGESTIONS] if r.spec.texts.least >= 2 and r.spec.followed
                     and not r.spec.texts.word_first and routing.best.score - r.score <= 2 * RUNNER_UP), spec)
    if not word or sum(re.search(rf"\b{re.escape(word)}\b", t, re.I) is not None for t in before.texts) < 2:
        return spec
    return next((r.spec for r in routing.ranked[:SUGGESTIONS] if r.spec.texts.word_first), spec)


def _with_texts(question: str, routing: router.Routing, before: Invocation) -> Command:
    """The best reading, unless it takes no texts and the question points back at the previous texts ("plot
    them"): then the next reading close behind that takes texts."""
    best = routing.best
    if best.spec.texts.most != 0 or slots.read(question).quoted or not _THEM.search(question):
        return best.spec
    pointed = _THOSE_TEXTS.search(question) is not None  # "the two texts": a wider gap to a reading that takes them
    near = 2 * RUNNER_UP if pointed else RUNNER_UP
    again = next((r.spec for r in routing.ranked if r.spec.name == before.verb and r.spec.texts.most != 0
                  and best.score - r.score <= 2 * RUNNER_UP), None)
    if again is not None and pointed and spoken.read(slots.read(question).rest, again).options:
        return again  # ("all the pooling strategies for that pair" after `compare`: its option, on its texts)
    if twin := next((r.spec for r in routing.ranked if r.spec.name == best.spec.on_texts), None):
        return twin
    return next((r.spec for r in routing.ranked[1:SUGGESTIONS]
                 if r.spec.texts.most != 0 and r.spec.followed and not named.on_corpus(r.spec)  # (a query is no
                 and best.score - r.score <= near), best.spec)  # text pointed at: "links for those?" is no `search`)


def _suggest(question: str, routing: router.Routing, table: Mapping[str, Command], offered: Callable[[Command], bool],
             previous_for: Callable[[Command], list[str]] = lambda command: [], leaving: Command | None = None,
             most: int = SUGGESTIONS) -> tuple[str, ...]:
    """The likeliest rows' lines (at most ``most``; ``leaving`` out, and any row not ``offered`` here), each filled
    with the question's texts or the previous ones it refers to (``previous_for``) where they fit, else the row's
    example."""
    lines = []
    for ranked in [r for r in routing.ranked[:SUGGESTIONS] if r.spec is not leaving and offered(r.spec)][:most]:
        try:
            lines.append(fill.line_for(ranked.spec, question, table, previous_for(ranked.spec)))
        except UserError:
            lines.append(ranked.spec.examples[0])
    return tuple(dict.fromkeys(lines))


