"""Questions about the conversation itself, answered by `help` or `model`: "how does that command work?" (`help` of
the last command), "and for why?" right after `help compare` (`help why`), "back to the default model", "use the
int8 fast path", "is that good?" (the last command again: its reply opens with its verdict), "which layer is the
best?" after a command that shows every layer (that command again); what a term means
("what is the logit lens?": `help logit lens`); and, right after `help X`, "show it for 30 sentences" (X)."""

from __future__ import annotations

import re
from collections.abc import Mapping

import assistant.understanding.earlier as earlier
import assistant.understanding.fill as fill
from assistant.commands import slots
from assistant.commands.about import asked_of_help
from assistant.commands.base import Command
from assistant.parsing import parse
from assistant.session import Session
from assistant.understanding.facts import Understanding
from assistant.understanding.models_said import takes_models
from assistant.understanding.spans import without_terms
from tools.core.config import Settings
from tools.core.text import code

#: "back to the default model", "use the original model again".
_DEFAULT_MODEL = re.compile(r"\b(?:back to|switch to|go back to|return to|use|reset to)\s+(?:the\s+)?(?:default|"
                            r"original|usual|starting)\s+model\b", re.I)
#: "switch to that model for good", "use that model from now on": `model` with the one the last line compared with.
_THAT_MODEL = re.compile(r"\b(?:switch|change|move|go|stick)\s+(?:over\s+)?(?:to|with)\s+(?:that|the\s+other)\s+"
                         r"(?:model|one)\b|\buse\s+(?:that|the\s+other)\s+model\b", re.I)
#: A question that only asks for the conversation's model on its int8 path ("let's use the int8 fast path").
_TO_INT8 = re.compile(r"\W*(?:(?:ok|okay|now|so|then|let'?s|please|pls|can you|could you|i want to)\W+)*"
                      r"(?:use|switch\s+(?:over\s+)?to|go\s+with|move\s+to|turn\s+on|enable|try|run\s+on)\s+(?:the\s+)?"
                      r"int8(?:\s+(?:fast\s+path|model|version|path|copy|one))?(?:\s+(?:please|now|instead|from\s+now\s+on))?"
                      r"\W*", re.I)
#: "how does that command work?", "what options does this command take?", "what options can I pass to it?": `help` of
#: the last command.
_THAT_COMMAND = re.compile(r"\b(?:how\s+does|options?|usage|help|flags?|settings|parameters|arguments|what\s+else|"
                           r"(?:what|which)\s+other)\b.*\b(?:that|this|the\s+"
                           r"(?:last|previous))\s+(?:command|one)\b|\b(?:that|this)\s+(?:command|one)\W+(?:how|options?|"
                           r"usage)\b|\bhow\s+(?:does|do)\s+(?:that|this)\s+(?:one\s+)?work\b|"
                           r"\b(?:show|give|see|read)\s+(?:me\s+)?its\s+(?:help|usage|options|flags)\b|"
                           r"\bhow\s+(?:am\s+i|do\s+i|should\s+i)\s+(?:supposed\s+to\s+)?use\s+(?:this|that|it)\b|"
                           r"\b(?:what|which)\s+(?:other\s+|more\s+)?(?:options|flags|settings|parameters|arguments|choices|strategies)\s+"
                           r"(?:can|could|does|do|should|may)\s+(?:i\s+|you\s+)?(?:\w+\s+){0,2}(?:it|this|that)\b",
                           re.I)
#: A question that asks how to read the last result ("is that good?", "is that a high score?", "what does that
#: number mean?", "how should I read this?"): the last command again, whose reply opens with its verdict.
_JUDGED = re.compile(
    r"\W*(?:(?:and|so|ok|okay|but|hmm|well|then|sorry)\W+)*(?:"
    r"(?:is|was|are|were)\s+(?:that|this|it|th[eo]se|the\s+(?:score|result|number|cosine|value|similarity))\s+"
    r"(?:(?:a|an|really|very|pretty|quite)\s+)*(?:good|high|low|bad|big|small|large|strong|weak|significant|normal|"
    r"typical|expected|reasonable|decent|ok|okay|meaningful|lot|much)(?:\s+(?:one|score|number|value|result|cosine|"
    r"similarity|correlation))?(?:\s+or\s+(?:not|bad|good|low|high))?"
    r"|how\s+(?:good|high|low|bad|strong|significant|meaningful)\s+is\s+(?:that|this|it)(?:\s+(?:score|number|value|"
    r"result))?"
    r"|what\s+does\s+(?:(?:that|this|it|the|an?)(?:\s+(?:score|number|value|result|cosine)(?:\s+of)?)?|"
    r"(?:an?\s+)?(?:(?:score|cosine|similarity|value)\s+(?:of\s+)?)?[-+]?\d*\.?\d+)\s+(?:mean|tell\s+(?:me|us))"
    r"|how\s+(?:should|do|can|would)\s+(?:i|we)\s+(?:read|interpret|understand)\s+(?:that|this|it|the\s+(?:score|"
    r"result|number|cosine))"
    r")(?:\s+(?:then|here|now|really|exactly|actually))?\W*", re.I)
#: Right after `help X`, a line that only names another command ("and for why?", "what about search?").
_HELP_NEXT = re.compile(r"\W*(?:(?:and|now|ok|okay|so|then|also)\W+)*(?:(?:what|how)\s+about\s+|(?:same\s+)?for\s+)?"
                        r"(?:the\s+)?`?([a-z-]+)`?(?:\s+command)?\s*[?!.]*\s*", re.I)


#: A question that asks which layer (or head) stands out ("which layer is the best?", "which layers are most
#: alike?", "what's the peak layer?", "where does it peak?") and nothing else.
_WHICH_LAYER = re.compile(
    r"\W*(?:(?:and|so|ok|okay|but|then|well|hmm)\W+)*(?:"
    r"(?:which|what)\s+(?:layers?|heads?)\s+(?:is|are|was|were|does|do|did|comes?|scores?|peaks?|wins?|looks?)"
    r"(?:\s+(?:the\s+)?(?:best|worst|highest|lowest|top|strongest|weakest|peak|(?:most|least)(?:\s+[a-z-]+)?|closest|"
    r"furthest|out\s+on\s+top|better|worse))?"
    r"|(?:which|what)(?:\s+is|'s|’s)\s+the\s+(?:best|worst|top|peak|strongest|weakest)\s+(?:layer|head)"
    r"|where\s+(?:does|did)\s+(?:it|that|this)\s+peak"
    r")(?:\s+(?:one|ones|here|there|then|now|overall|again))?\W*", re.I)


#: A question that asks what something is ("what is the logit lens?", "what does selectivity mean?", "define CKA",
#: "explain attention rollout", "what are outliers?"; not "what are the outliers?", which asks for them): the
#: thing asked about is its one group that matched.
_WHAT_IS = re.compile(
    r"\W*(?:(?:ok|okay|so|and|then|but|hey|sorry|quick\s+question)\W+)*(?:"
    r"what\s*(?:is|'s|’s|s)\s+(?:an?\s+)?(.+?)"
    r"|what\s+are\s+(?!the\b|th[eo]se\b|my\b|your\b)(.+?)"
    r"|what\s+(?:does|do)\s+(?:an?\s+|the\s+)?(.+?)\s+(?:mean|stand\s+for|refer\s+to)"
    r"|what\s+(?:do\s+you|does\s+it|does\s+this)\s+mean\s+by\s+(.+?)|what\s+is\s+meant\s+by\s+(.+?)"
    r"|(?:define|explain|describe)\s+(?:an?\s+|the\s+)?(?:(?:term|idea|notion|concept)\s+(?:of\s+)?)?(.+?)"
    r"|(?:the\s+)?(?:meaning|definition)\s+of\s+(.+?)"
    r")(?:\s+(?:exactly|again|here|there|please|actually|mean|means))?\W*", re.I)
#: Words said around a measure's name that ask nothing more of it ("selectivity in probing", "the logit lens
#: method", "attention rollout"; not "its", which asks for it on the previous texts: "what's its dependency parse?").
_AROUND_TERM = frozenset("""a an the in of for on with by and or term word idea notion
concept measure metric score method technique thing so-called called attention linear layer layers model models
embedding embeddings vector vectors transformer transformers bert nlp""".split())
#: "the" before what is asked about ("what is the logit lens?").
_THE = re.compile(r"the\s+", re.I)


#: A question that asks how two things differ ("what's the difference between rollout and flow?", "how does CLS
#: pooling differ from mean pooling?", "how is mean different from max pooling?"): the two, in its groups.
_DIFFER = re.compile(
    r"\W*(?:(?:ok|okay|so|and|but|hey|quick\s+question)\W+)*(?:"
    r"what(?:'s|’s|\s+is|\s+are)\s+the\s+differences?\s+between\s+(.+?)\s+and\s+(.+?)"
    r"|how\s+(?:do|does|did)\s+(.+?)\s+(?:and\s+(.+?)\s+differ|differ\s+from\s+(.+?))"
    r"|how\s+(?:is|are)\s+(.+?)\s+different\s+from\s+(.+?)"
    r")(?:\s+(?:exactly|again|here|there|please|actually))?\W*", re.I)


def _term_said(said: str, table: Mapping[str, Command]) -> Command | None:
    """The first command one of whose terms ``said`` says, with only words around it ("the logit lens method")."""
    for spec in dict.fromkeys(table.values()):
        rest = without_terms(spec.named_terms(), said)
        if rest != said and set(re.findall(r"[\w'-]+", rest.lower())) <= _AROUND_TERM:
            return spec
    return None


def _term_of(said: str, table: Mapping[str, Command]) -> Command | None:
    """The command one of whose names or terms ``said`` is, with only words around it ("the flow method"), or None."""
    words = said.strip().lower()
    return table[words] if words in table else _term_said(said, table)


def differ(question: str, table: Mapping[str, Command]) -> Understanding | None:
    """`help` of the command two terms belong to, for a question that asks how they differ ("what's the difference
    between rollout and flow?": `help rollout`, which says what each is); "mean and max pooling": "mean pooling". Of
    two commands (or the terms of two), the first one's help, the other's offered beside it."""
    asked = _DIFFER.fullmatch(question)
    if "help" not in table or asked is None or slots.read(question).quoted:
        return None
    first, second = [g for g in asked.groups() if g is not None]
    if " " not in first.strip() and len(second.split()) > 1:  # ("mean and max pooling": "mean pooling")
        first = f"{first} {second.split()[-1]}" if _term_of(first, table) is None else first
    one, other = _term_of(first, table), _term_of(second, table)
    if one is None or other is None or "help" in (one.name, other.name):
        return None
    if one is not other:  # ("how do probe and cka differ?"): the first one's help, the other's one click away
        return Understanding(line=f"help {one.name}", suggestions=(f"help {other.name}",),
                             because=f"it asks how {code(first, 30)} ({one.name}) and {code(second, 30)} "
                             f"({other.name}) differ: each one's help says what it measures")
    return Understanding(line=f"help {one.name}", because=f"it asks how {code(first, 30)} and {code(second, 30)} "
                         f"differ, both terms of {one.name}, whose help says what each is")


def what_is(question: str, session: Session, table: Mapping[str, Command]) -> Understanding | None:
    """`help` of the term (or of the command) whose meaning a question asks and nothing else ("what is the logit
    lens?", "what does selectivity mean?"): its meaning, not a run on example texts (or, for a command that needs
    texts, a refusal for want of them). After a command, "what's the dependency parse?" asks for the parse of its
    texts: there "the" asks what a term is only of a term with a meaning ("what is the logit lens?")."""
    subject = asked_what(question)
    if "help" not in table or subject is None or slots.read(question).quoted:
        return None
    the = _THE.match(subject)
    if (spec := _term_said(subject, table)) is None:
        return None
    meaning = spec.meaning_said(subject)  # ("help logit lens")
    if meaning is None and the and earlier.previous_command(session, table) is not None:
        return None
    asked = subject[the.end():] if the else subject
    return Understanding(line=f"help {meaning.term if meaning else spec.name}",
                         because=f"it asks what {code(asked, 40)} is, a term of {spec.name}")


def asked_what(question: str) -> str | None:
    """What a question asks the meaning of ("what does cosine similarity mean?": ``cosine similarity``), or None
    when it asks something else."""
    asked = _WHAT_IS.fullmatch(question)
    return None if asked is None else next(g for g in asked.groups() if g is not None).strip()


#: A line that asks to run something named before ("show it for 30 sentences", "run one on 40 sentences", "try it").
_RUN_IT = re.compile(r"\b(?:run|show|try|do|give|compute|measure|make|draw|plot|apply)\b(?:\s+me)?\s+"
                     r"(?:it|one|that|this)\b", re.I)


def run_after_help(question: str, session: Session, table: Mapping[str, Command]) -> Understanding | None:
    """Right after `help X` (a command or one of its terms), a question that asks to run "it" runs X with the options
    it says ("show it for 30 sentences" after `help CKA`: `cka --sentences 30`), not the command before the help."""
    shown = _help_shown(session)
    if shown is None or _RUN_IT.search(question) is None or slots.read(question).quoted:
        return None
    _, spec = asked_of_help(shown, table)
    if spec is None or spec.name == "help":
        return None
    try:
        line = fill.line_for(spec, question, table)
    except fill.MissingTexts:  # ("try it" after `help lens`): what it needs, and its examples one click away
        them = "it" if spec.texts.most == 1 else "them"
        return Understanding(message=f"`{spec.name}` needs {spec.texts_hint}: write {them} in quotes after your "
                             "question, or run one of its examples:", suggestions=spec.examples[:3])
    return Understanding(line=line, because=f"it asks to run {spec.name}, whose help came just before")


def int8_asked(question: str, table: Mapping[str, Command]) -> Understanding | None:
    """`model int8` for a question that only asks for the conversation's model on its int8 fast path."""
    if "model" in table and _TO_INT8.fullmatch(question):
        return Understanding(line="model int8", because="it asks for this model's int8 fast path")
    return None


def asked_of_the_last(question: str, session: Session, table: Mapping[str, Command],
                      settings: Settings) -> Understanding | None:
    """What a question asks of the conversation's own state: "how does that command work?" is `help` of the last
    command; "back to the default model" is `model` with the one this assistant starts on."""
    if "model" in table and _DEFAULT_MODEL.search(question):
        return Understanding(line=f"model {settings.model}", because="it asks for the default model")
    last = earlier.previous_command(session, table)
    if "model" in table and last is not None and _THAT_MODEL.search(question) and (other := _compared_with(last[0],
                                                                                                     table)):
        return Understanding(line=f"model {other}", because=f"it asks for the model the last line compared with, "
                             f"{code(other, 40)}")
    if "help" in table and last is not None and _THAT_COMMAND.search(question):
        return Understanding(line=f"help {last[1].name}", because=f"it asks about the last command, {last[1].name}")
    return None


def judged(question: str, session: Session, table: Mapping[str, Command]) -> Understanding | None:
    """"Is that good?", "what does 0.7 mean?" (no pooling "mean"): the last command again, whose reply opens with its
    verdict."""
    if not _JUDGED.fullmatch(question) or (last := earlier.previous_command(session, table)) is None:
        return None
    return Understanding(line=last[0], because="it asks how to read the last result, which the reply's first "
                         "sentence judges (against the model's own references, where it has them)")


def best_layer(question: str, session: Session, table: Mapping[str, Command]) -> Understanding | None:
    """"Which layer is the best?", "which layers are most alike?" after a command that measures every layer at once:
    that command again, with its settings, whose reply shows every layer and names the one that stands out."""
    if not _WHICH_LAYER.fullmatch(question) or (last := earlier.previous_command(session, table)) is None:
        return None
    line, spec = last
    if not spec.every_layer:
        return None
    return Understanding(line=line, because=f"it asks which layer stands out in the last result, and {spec.name} "
                         f"shows them all ({spec.every_layer})")


def _compared_with(line: str, table: Mapping[str, Command]) -> str | None:
    """The one model a command line names for an option that takes a model (`--vs bert-base`), or None."""
    inv = parse(line, table)
    named = [str(v) for name, v in inv.options.items() if (o := table[inv.verb].option(name)) is not None
             and takes_models(o) and v and "," not in str(v)]
    return named[0] if len(named) == 1 else None


def help_next(question: str, session: Session, table: Mapping[str, Command]) -> Understanding | None:
    """Right after `help X`, a question that only names another command is `help` of it ("and for why?")."""
    said = _HELP_NEXT.fullmatch(question)
    shown = _help_shown(session)
    if "help" not in table or said is None or shown is None:
        return None
    spec = table.get(said.group(1).lower())
    if spec is None or spec.name == "help":
        return None
    return Understanding(line=f"help {spec.name}", because=f"it names another command right after "
                         f"{code(session.history[-1], 40)}")


def _help_shown(session: Session) -> str | None:
    """What the conversation's last line asked `help` about (``cka`` after `help cka`), or None after another line."""
    last = session.history[-1] if session.history else ""
    shown = re.match(r"help\s+(\S.*)", last, re.I)
    return shown.group(1) if shown else None
