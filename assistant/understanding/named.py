"""Which corpus a question means: one it names ("on reviews"), "my corpus", "that one", the one a line before named.

The names come from the corpora this conversation may use and from its own lines (`corpus load F --name N`,
`corpus use N`, `--corpus N`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import assistant.understanding.fill as fill
import assistant.understanding.spoken as spoken
from assistant import corpora
from assistant.commands import slots
from assistant.commands.base import Command, Invocation
from assistant.commands.corpus import ACTION_WORDS, Action
from assistant.session import Session
from assistant.sharing.links import merged_line
from assistant.understanding.facts import Understanding
from assistant.understanding.words import CALLED, NOT_NAMES
from tools.core.config import Settings
from tools.core.text import code

#: A question that asks to switch models ("now switch to bert-base") is `model`, never a follow-up; one that
#: switches to another corpus alone ("go back to reviews") is `corpus use`.
SWITCH = re.compile(r"\b(?:switch|change|swap|load|go back to|back to|return to|from now on)\b", re.I)
#: "my corpus", "my own texts", "those texts": the conversation's corpus (for a command that reads other texts unless
#: told), and the lines that name one: `corpus load F --name N`, `corpus use N`, `--corpus N`.
_MY_CORPUS = re.compile(r"\b(?:(?:my|our)\s+(?:own\s+)?(?:corpus|texts|data(?:set)?|rows|file|documents)|the corpus|"
                        r"(?:those|these) texts|(?:the same|that|this) (?:corpus|data(?:set)?))\b", re.I)
_NAMED_CORPUS = re.compile(r"^corpus\s+(?:load\s.*?--name|use|info|stop)\s+(\S+)|--corpus\s+(\S+)")


def known_names(spec: Command, session: Session, settings: Settings) -> dict[str, list[str]]:
    """The corpora this conversation may use, by name, for a command that reads one (``--corpus``): a question may
    name one without the word "corpus" ("any copies in reviews?")."""
    if spec.option("corpus") is None:
        return {}
    return {"corpus": list(dict.fromkeys([*stored_corpora(session, settings), *named_corpora(session)]))}


def stored_corpora(session: Session, settings: Settings) -> list[str]:
    """The names of the corpora this conversation may use."""
    return [c.name for store in corpora.stores(settings, session.key) for c in store.corpora()]


def named_corpora(session: Session) -> list[str]:
    """The corpora the conversation's lines named (loaded, used, or read with ``--corpus``), oldest first."""
    return [m.group(1) or m.group(2) for line in session.history if (m := _NAMED_CORPUS.search(line))]


def on_corpus(spec: Command) -> bool:
    """Whether ``spec`` works on a corpus's rows (`search`, `clusters`, `map`), not on texts it would read from
    a corpus instead of its own (`probe --corpus`: its option's help says "instead of")."""
    option = spec.option("corpus")
    return option is not None and "instead of" not in option.help


def previous_corpus(spec: Command, before: Invocation | None) -> dict[str, str]:
    """The previous command's ``--corpus`` for a command without texts ("any copies in there?" after `clusters
    --corpus tweets`)."""
    option = spec.option("corpus")
    named = before.options.get(option.dest) if before is not None and option is not None else None
    return {"corpus": str(named)} if named and spec.texts.most == 0 else {}


#: "that one": the corpus the conversation named last; for `corpus` itself "drop it" and "cancel that load" too.
_THAT_ONE = re.compile(r"\b(?:that|this)\s+one\b|"
                       r"\b(?P<drop>drop|delete|remove|get rid of|forget|use|make)\b.*\b(?:it|that\s+corpus)\b|"
                       r"\b(?:use|make)\s+(?:that|this)\b|"  # ("make that the active one", "make this corpus ...")
                       r"\b(?P<halt>stop|cancel|abort|halt)\b.*\b(?:that|this|the)\s+(?:load|loading|encoding|upload)\b",
                       re.I)


#: "on it", "of it", "in there", "that corpus": the corpus the line right before named (`corpus load F --name N`,
#: `corpus use N`).
_ON_IT = re.compile(r"\b(?:on|in|over|across|for|of|with|from)\s+it\b|\bin\s+there\b|\b(?:that|this)\s+corpus\b", re.I)


def that_corpus(question: str, spec: Command, session: Session) -> dict[str, str]:
    """``--corpus`` for "the outliers in that one?" and "drop it": the corpus the conversation named last; "measure
    contextuality on it" right after a line that named one, for a command that reads other texts unless told: that
    one (a corpus command reads the one in use, unless the line right before asked about another)."""
    just = _NAMED_CORPUS.search(session.history[-1]) if session.history else None
    option = spec.option("corpus")
    if just is not None and option is not None and _ON_IT.search(question):
        if just.group(1) and ("instead of" in option.help or just.group(0).startswith("corpus info")):
            return {"corpus": just.group(1)}  # ("what topics are in it?" after `corpus info X`: X, not the one in use)
        if just.group(2) and on_corpus(spec):  # ("which texts in there talk about 'X'?" after `clusters --corpus
            return {"corpus": just.group(2)}  # support`)
    said = _THAT_ONE.search(question)
    if option is None or spec.texts.least > 0 or said is None or (
            (said["drop"] or said["halt"]) and spec.name != "corpus"):
        return {}
    named = named_corpora(session)
    return {"corpus": named[-1]} if named else {}


def own_corpus(question: str, spec: Command, session: Session, settings: Settings) -> dict[str, str]:
    """``--corpus`` for "my corpus", "my texts", "those texts" when ``spec`` reads other texts unless told (its
    option's help says "instead of"): the corpus last named in the conversation, else the one in use or the only
    one it may use."""
    option = spec.option("corpus")
    mine = re.search(r"\b(?:my|our)\s+([\w-]+)", question, re.I)  # "on my reviews": a corpus by its name
    if option is None or "instead of" not in option.help or (mine is None and not _MY_CORPUS.search(question)):
        return {}  # (the corpora on disk are listed only for a question that names one)
    named, stored = named_corpora(session), stored_corpora(session, settings)
    if mine is not None and mine.group(1) in {*named, *stored}:
        return {"corpus": mine.group(1)}
    if not _MY_CORPUS.search(question):
        return {}
    chosen = named[-1] if named else session.corpus or (stored[0] if len(stored) == 1 else "")
    return {"corpus": chosen} if chosen else {}


#: "it", "that one": the corpus the last line loaded or named.
_IT = re.compile(r"\b(?:it|that one|this one|that corpus|the new one)\b", re.I)


_CALLED = re.compile(CALLED, re.I)
#: One name picked alone ("use tweets", "ok switch to faq"): a corpus, right after the line that listed them.
_PICKED = re.compile(r"\W*(?:(?:ok|okay|now|then|and|so|please|pls)\W+)*"
                     r"(?:use|switch\s+to|pick|open|select|go\s+with)\s+(?:the\s+)?(?P<v>[\w-]+)"
                     r"(?:\s+(?:one|corpus))?(?:\s+(?:please|pls))?\W*", re.I)
#: The line that lists the corpora.
_LISTED = re.compile(r"corpus(?:\s+list)?\s*")


def corpus_switch(question: str, session: Session, table: Mapping[str, Command],
                  settings: Settings) -> Understanding | None:
    """`corpus use NAME` for a question that only switches to a corpus this conversation may use ("go back to
    reviews", "switch to the tickets corpus", "make b the active one")."""
    picked = _PICKED.fullmatch(question)
    if "corpus" not in table or not (SWITCH.search(question) or ACTION_WORDS[Action.USE].search(question) or picked):
        return None
    names = {*stored_corpora(session, settings), *named_corpora(session)}
    said = [n for n in names if re.search(rf"(?<![\w-]){re.escape(n)}(?![\w.-])", question, re.I)]
    called = _CALLED.search(question)
    if not said and called is not None and called["v"].lower() not in NOT_NAMES:
        said = [called["v"]]  # ("use the one called support": the command says which corpora there are)
    if not said and _THAT_ONE.search(question) and (last := named_corpora(session)):
        said = [last[-1]]  # ("make that the active one" after `corpus load F --name papers`)
    if (not said and picked is not None and picked["v"].lower() not in NOT_NAMES and not slots.MODEL.search(question)
            and session.history and _LISTED.fullmatch(session.history[-1])):
        said = [picked["v"]]  # ("use tweets" right after `corpus`, which lists them: it says which there are)
    if len(said) != 1:
        return None
    name = said[0]
    rest = re.sub(rf"(?<![\w-]){re.escape(name)}|\b(?:corpus|dataset|data|go|to|use|using|for|active|current|"
                  r"working|work|with|the|one|called|named|that|it|this|make|pick|open|select)\b", " ",
                  ACTION_WORDS[Action.USE].sub(" ", SWITCH.sub(" ", question)), flags=re.I)
    if not fill.only_filler(rest):
        return None
    return Understanding(line=f"corpus use {name}", because=f"it asks to switch to the corpus {code(name, 40)}")


#: The actions that need the corpus's name (`stop` and `info` work on the one in use).
_NAMING = (Action.USE, Action.DROP)


#: "the faq one": a corpus named by its name and "one" (right after `corpus`, which lists them).
_THE_ONE = re.compile(r"\bthe\s+(?!(?:first|second|third|last|other|new|old|same|previous|big|small|active|current|"
                      r"working|default|main)\b)[\w-]+\s+one\b", re.I)


def acted_on(question: str, session: Session, table: Mapping[str, Command],
             settings: Settings) -> Understanding | None:
    """`corpus use|drop NAME` for a question that only says that action of "it" right after a line that named the
    corpus ("ok switch to it", "drop it" after `corpus load F --name NAME`), or of "the NAME one", a corpus an
    earlier line named ("delete the chats one"); `corpus info NAME` of such a name ("what's in the reviews one?")."""
    action = next((a for a, words in ACTION_WORDS.items() if words.search(question)), None)
    if "corpus" not in table or action not in (*_NAMING, Action.INFO):
        return None
    named = _NAMED_CORPUS.match(session.history[-1]) if session.history else None
    listed = session.history[-1].startswith("corpus") if session.history else False  # ("the faq one" after `corpus`)
    names = dict.fromkeys([*named_corpora(session), *stored_corpora(session, settings)])
    said = next((m for n in names if (
        m := re.search(rf"(?<![\w-]){re.escape(n)}(?:\s+(?:one|corpus))?(?![\w-])", question))), None) or (
        _THE_ONE.search(question) if listed else None)
    if said is None and (action is Action.INFO or named is None or not _IT.search(question)):
        return None  # (`info` of "it" is the corpus in use, which other readings name)
    rest = question[:said.start()] + " " + question[said.end():] if said is not None else _IT.sub(" ", question)
    if not fill.only_filler(ACTION_WORDS[action].sub(" ", rest)):
        return None
    name = said.group(0).split()[-2 if said.re is _THE_ONE else 0] if said is not None else (
        named.group(1) or named.group(2))  # type: ignore[union-attr]
    asks = "describe" if action is Action.INFO else action.value
    return Understanding(line=f"corpus {action.value} {name}", because=f"it asks to {asks} the corpus "
                         f"{code(name, 40)}{'' if said is not None else ', which the last line named'}")


#: "list them", "show me all of them": right after a `corpus` line, the corpora (what `corpus` alone lists).
_LIST_THEM = re.compile(r"^\W*(?:(?:ok|okay|now|and|so|please|can you|could you)[\s,]+)*(?:list|show|see)\s+(?:me\s+)?"
                        r"(?:them|those|all(?:\s+of\s+them)?|both(?:\s+of\s+them)?|them\s+all)(?:\s+please)?\W*$", re.I)


def listed(question: str, session: Session, table: Mapping[str, Command]) -> Understanding | None:
    """`corpus`, the list of corpora, for "list them" right after a `corpus` line."""
    if "corpus" not in table or not session.history or not session.history[-1].startswith("corpus") \
            or not _LIST_THEM.match(question):
        return None
    return Understanding(line="corpus", because="it asks for a list right after a line about corpora")


#: A question that asks for the last load again with another text column (not "a map coloured by the rating column").
_RELOAD = re.compile(r"\b(?:again|reload|re-load|redo|re-do|instead|wrong|should\s+be|use|take)\b.*\bcolumn\b|"
                     r"\bcolumn\b.*\b(?:again|instead|wrong|should\s+be)\b", re.I)

#: ...and later in the conversation, one that asks to load again ("load it again but take the topic column").
_LOAD_AGAIN = re.compile(r"\b(?:load|encode|read)\b.*\bagain\b.*\bcolumn\b|\b(?:reload|redo|re-do)\b.*\bcolumn\b", re.I)
#: Right after a load, a question that says Ray: that load again on it when it says nothing else.
_RAY = re.compile(r"\bray\b", re.I)
#: Right after a load, a question that only names it ("call it tweets", "name it tweets").
_NAME_IT = re.compile(r"^\W*(?:(?:ok|okay|now|and|please|actually)[\s,]+)*(?:call|name)\s+it\s+['\"]?[\w-]+['\"]?\W*$",
                      re.I)


def reloaded(question: str, session: Session, table: Mapping[str, Command], settings: Settings) -> Understanding | None:
    """Right after `corpus load`, a question that names another text column ("load it again but take the title
    column", "the text column is wrong, it should be 'comment'") is that load again with ``--column``, and one that
    only names the corpus ("call it tweets") that load again with ``--name``; later in the
    conversation, one that asks to load again ("load it again but take the topic column") is the last load again."""
    loads = [line for line in session.history if re.match(r"corpus\s+load\s", line, re.I)]
    last = loads[-1] if loads else ""
    just = bool(session.history) and session.history[-1] == last  # (earlier, only "load it again", "reload")
    naming = just and _NAME_IT.match(question) is not None  # "call it tweets" right after the load
    on_ray = just and _RAY.search(question) is not None  # ("actually use ray for that")
    if "corpus" not in table or not last or not (
            naming or on_ray or (_RELOAD.search(question) if just else _LOAD_AGAIN.search(question))):
        return None
    read = slots.read(question)
    spoken_as = spoken.read(read.rest, table["corpus"])
    said = spoken_as.options
    if on_ray and said.get("engine") and set(said) <= {"engine", "address"} and fill.only_filler(
            re.sub(r"\b(?:cluster|load|reload|encode|again)\b", " ", spoken_as.rest)):
        line = merged_line(last, Invocation("again", [], dict(said)), table, settings)
        return Understanding(line=line, because=f"it asks for {code(last, 80)} again on Ray")
    if naming and said.get("name"):
        line = merged_line(last, Invocation("again", [], {"name": said["name"]}), table, settings)
        return Understanding(line=line, because=f"it names the corpus {code(last, 80)} loads {code(said['name'], 40)}")
    column = read.texts[0] if read.quoted and len(read.texts) == 1 else said.get("column")
    if not column:
        return None
    name = {"name": said["name"]} if said.get("name") else {}  # "load it again as mail, taking the subject column"
    line = merged_line(last, Invocation("again", [], {"column": column, **name}), table, settings)
    return Understanding(line=line, because=f"it asks for {code(last, 80)} again with the column {code(column, 40)}")


#: Words around the info words in a question about a load under way ("how's it going so far?", "any progress yet?").
_HOW_IT_GOES = frozenset({"how", "how's", "hows", "any", "yet", "so", "far", "things", "load"})


def load_asked_after(question: str, session: Session, table: Mapping[str, Command],
                     settings: Settings) -> Understanding | None:
    """`corpus info` (the corpus in use: the one the load made) for a short question about the load the last line
    started ("how is it going?", "any progress?"), in the words ``corpus`` reads as asking for its info."""
    if "corpus" not in table or not session.history or not re.match(r"corpus\s+load\s", session.history[-1]):
        return None
    words = ACTION_WORDS[Action.INFO]
    if words.search(question) is None or not fill.only_filler(_IT.sub(" ", words.sub(" ", question)), _HOW_IT_GOES):
        return None
    return Understanding(line="corpus info", because="it asks how the load the last line started is going")
