"""A command is one object: its parameters, how it computes its facts, how it replies, and how people ask for it.

In the spirit of a transformers pipeline, a command's parameters are sanitised once (the parser converts
them into its :attr:`Command.Params` dataclass), :meth:`Command.compute` turns texts and parameters into
the toolkit's facts, and :meth:`Command.reply` turns facts into a :class:`~tools.core.results.Result`
(the family's ``replies`` module writes the words). A command that can answer on two models side by side
defines :meth:`Command.differ`, and gets ``--vs MODEL``. The usage line, ``help``, the README's table,
the parser's options, the router's phrasings and text-shape hints, the MCP tools and ``--vs`` are all
read from these objects: a new command is one class in one module, registered with
:func:`assistant.commands.registry.register`.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

from assistant.commands.options import TEXT, Option, options_of
from assistant.corpora import Jobs
from assistant.maps import Maps
from assistant.session import Session
from assistant.versus import side_by_side
from tools.benchmark.access import WEB, DataAccess
from tools.core.config import Settings
from tools.core.results import Result
from tools.core.text import code
from tools.encoding import unknown
from tools.encoding.replies import unknown_warnings
from tools.models.hub import LoadedModel, ModelHub

if TYPE_CHECKING:
    from assistant.commands.slots import Slots

P = TypeVar("P")
F = TypeVar("F")


@dataclass(frozen=True)
class Invocation:
    """A parsed command line: the verb, its texts and its converted options."""

    verb: str
    texts: list[str]
    options: dict[str, Any]
    line: str = ""


@dataclass
class Context:
    """What a command may use: this conversation, the app's hub and settings, progress, file access.

    The hub and settings are the app's own (``ModelHub(settings)``), never a process-wide default.
    """

    session: Session
    hub: ModelHub
    settings: Settings
    progress: Callable[[float, str], None] = field(default=lambda fraction, message: None)
    #: The command table, for commands that run other commands (`again`, `export`); given by dispatch.
    commands: Mapping[str, Command[Any, Any]] = field(default_factory=dict)
    access: DataAccess = WEB  # which files `--data` may read: the web faces' limits unless the CLI says otherwise
    #: The process's background encoding jobs (the app's own; one-shot faces get their own).
    jobs: Jobs = field(default_factory=Jobs)
    #: The app's servable corpus maps and each conversation's selection on them (one-shot faces get their own).
    maps: Maps = field(default_factory=Maps)
    #: Whether long jobs may go on after the command answers (the page, HTTP); the command line waits for them.
    background: bool = True
    #: The command line that really ran, when a command runs another (`again`): history records it.
    ran: str = ""

    def model(self, name: str | None = None) -> LoadedModel:
        """The named model, or this conversation's model."""
        return self.hub.get(name or self.session.model or self.settings.model)

    def on(self, model: str) -> Context:
        """The same context with ``model`` as the conversation's model (a copy; the session is not changed)."""
        return dataclasses.replace(self, session=dataclasses.replace(self.session, model=model))


@dataclass(frozen=True)
class Texts:
    """What texts a command takes.

    Attributes:
        least, most: how many (``most`` None: up to the configured limit, ASSISTANT_MAX_TEXTS).
        hint: what the texts are, for the sentence that asks for them.
        grammar: how they are written in the usage line (``a | b [| c ...]``).
        word_first: the first text is one word (``word``, ``static``, ``neighbors``): a follow-up that names
            a new word replaces only it.
        actions: the words the text starts with, where it names one of a few actions (``corpus load FILE``):
            the parser refuses another.
    """

    least: int = 0
    most: int | None = 0
    hint: str = ""
    grammar: str = ""
    word_first: bool = False
    actions: tuple[str, ...] = ()


@dataclass(frozen=True)
class NoParams:
    """A command without options."""


@dataclass(frozen=True)
class Meaning:
    """What one of a command's terms means, as `help` says it (`help selectivity`, "what is the logit lens?").

    Attributes:
        term: the term as written ("selectivity"). One of the command's ``terms`` says it when the term asks for the
            command itself; a term it shares with other commands ("mean pooling", "cosine similarity" of `compare`)
            is no term of its routing, only read when a question asks what it is.
        text: what it is, in a sentence or two, with its paper.
    """

    term: str
    text: str

    def said_in(self, text: str) -> bool:
        """Whether ``text`` says the term as written, or its plural ("help near-duplicates")."""
        return re.search(rf"(?<![\w-]){re.escape(self.term)}s?(?![\w-])", text, re.I) is not None


@functools.lru_cache(maxsize=128)
def terms_pattern(terms: tuple[str, ...]) -> re.Pattern[str]:
    """A command's ``terms`` as one pattern: each a whole word or phrase ("CKA-style" says `cka`)."""
    return re.compile(r"(?<![\w-])(?:" + "|".join(terms) + r")(?:(?![\w-])|(?=-(?:style|like|type)\b))", re.I)


#: A refusal's example line is shown whole up to this many characters (the longest, `compare`'s, has 144).
EXAMPLE_WIDTH = 200

VS = Option("vs", TEXT, "also answer with this model, side by side (minilm:int8, bert-small, a local folder)",
            metavar="MODEL")


class Command(Generic[P, F]):
    """One command. Subclasses set the class attributes and define :meth:`compute` (and :meth:`reply`).

    Attributes:
        name: the verb.
        summary: one line for the command list.
        texts: what texts it takes (:class:`Texts`).
        examples: full command lines that work (the first one is the page's example).
        aliases: other verbs that mean the same.
        phrasings: questions in plain English it answers (``"A"``, ``"w"`` stand for quoted texts); the
            router compares a question with them.
        terms: words that name this command's measure and nothing else (its paper's authors, the measure's
            own names): a question that says one outside quotes asks for this command.
        meanings: what its main terms mean (:class:`Meaning`), shown by `help`; "what is X?" of one is `help X`.
        Params: the parameter dataclass; its fields are the ``--options``.
    """

    name: ClassVar[str]
    summary: ClassVar[str]
    texts: ClassVar[Texts] = Texts()
    examples: ClassVar[tuple[str, ...]] = ()
    aliases: ClassVar[tuple[str, ...]] = ()
    phrasings: ClassVar[tuple[str, ...]] = ()
    terms: ClassVar[tuple[str, ...]] = ()
    meanings: ClassVar[tuple[Meaning, ...]] = ()

    @classmethod
    def meaning_said(cls, text: str) -> Meaning | None:
        """The meaning whose term ``text`` says, the longest term first ("mean pooling" before "pooling")."""
        return max((m for m in cls.meanings if m.said_in(text)), key=lambda m: len(m.term), default=None)

    @classmethod
    def named_terms(cls) -> tuple[str, ...]:
        """Its ``terms`` and its meanings' terms (each with its plural), as patterns: what "what is X?" may ask."""
        return cls.terms + tuple(re.escape(m.term) + "s?" for m in cls.meanings)
    #: Whether a question can refer back to this command's reply ("give me 3 of them", "why are they similar?"):
    #: not for commands about the tool, its model or the corpora themselves, whose texts are names.
    followed: ClassVar[bool] = True
    #: Whether a follow-up after this command still refers to the command before it ("switch to bert-base",
    #: then "now the same comparison on this model").
    passes_through: ClassVar[bool] = False
    #: For a command that takes no texts, the one that does the same on texts: a question that points at the
    #: previous texts runs it ("plot those on a map" after a `compare` is `project`, not the corpus's `map`).
    on_texts: ClassVar[str] = ""
    #: Whether a text ``#N`` reaches :meth:`compute` as corpus row N's text (False: as ``#N``, for a command that
    #: reads the row itself, as `search` takes the row's stored vector and leaves the row out of its hits).
    rows_as_texts: ClassVar[bool] = True
    #: For a command that measures every layer (or head) at once and so takes no ``--layer``: where its reply shows
    #: them, said when a follow-up asks it for one layer ("what about layer 3?" after `cka`).
    every_layer: ClassVar[str] = ""
    Params: ClassVar[type] = NoParams

    def compute(self, ctx: Context, texts: list[str], params: P) -> F:
        """The facts: numbers and choices, no words."""
        raise NotImplementedError

    def reply(self, facts: F) -> Result:
        """The words, tables and charts of the facts (the family's ``replies``); a Result is its own reply."""
        assert isinstance(facts, Result), f"{type(self).__name__} must define reply()"
        return facts

    #: Defined by commands that answer on two models side by side: the sentence on where two answers differ.
    differ: ClassVar[Callable[..., str] | None] = None
    #: For a command that compares models its own way: what to use instead, said when ``--vs`` is refused.
    vs_instead: ClassVar[str] = ""

    def versus_charts(self, a: F, b: F, names: tuple[str, str]) -> list[Any] | None:
        """Charts for a side-by-side reply, when two single charts side by side would not do (None: those)."""
        return None

    # --- what the router reads ----------------------------------------------------------------

    def offered(self, ctx: Context) -> bool:
        """Whether a question's suggestions may offer this command here: False only where it is known already that
        it would be refused (a masked-LM head known to be missing); nothing is loaded to find out."""
        return True

    def fit(self, slots: Slots) -> float:
        """How well a question's texts suit this command, beyond its phrasings (a small bonus, 0 by default)."""
        return 0.0

    def question_texts(self, slots: Slots, table: Mapping[str, Command[Any, Any]]) -> list[str] | None:
        """The texts this command takes from a question's slots, when its shape is special (None: the usual)."""
        return None

    def handed_on(self, question: str, before: Invocation) -> str | None:
        """The command a follow-up to ``before`` (a line of this command) asks for when it asks for what another
        command shows on the same texts (None, by default: none)."""
        return None

    def question_options(self, texts: list[str], options: dict[str, str]) -> tuple[list[str], dict[str, str]]:
        """The texts and options a question's reading runs with, when this command takes a value said as an
        option as one of its texts ("drop the reviews corpus": ``corpus drop reviews``). Both as read, by default."""
        return texts, options

    # --- generated -------------------------------------------------------------------------

    @property
    def takes_vs(self) -> bool:
        return self.differ is not None

    @property
    def options(self) -> tuple[Option, ...]:
        own = options_of(self.Params)
        return (*own, VS) if self.takes_vs else own

    @property
    def usage(self) -> str:
        parts = [self.name, self.texts.grammar, *(f"[{o.usage()}]" for o in self.options)]
        return " ".join(p for p in parts if p)

    @property
    def texts_hint(self) -> str:
        return self.texts.hint

    @property
    def for_example(self) -> str:
        """"for example `LINE`." with its first example whole (a refusal shows it as a line that works: a cut one
        would not), the sentence's full stop left out after a line that ends in one."""
        line = self.examples[0] if self.examples else self.usage
        return f"for example {code(line, EXAMPLE_WIDTH)}" + ("" if line.rstrip().endswith((".", "?", "!")) else ".")

    def option(self, name: str) -> Option | None:
        return next((o for o in self.options if o.name == name), None)

    def params(self, options: Mapping[str, Any]) -> P:
        """The parameter dataclass from the parser's converted options (``--vs`` is not a parameter)."""
        return self.Params(**{k: v for k, v in options.items() if k != "vs"})

    def run(self, ctx: Context, inv: Invocation) -> Result:
        """Compute and reply; with ``--vs``, on both models, the answers joined side by side. Texts with tokens
        the vocabulary lacks, wherever they were tokenized, add their warnings to the reply."""
        other = (inv.options.get("vs") or "").strip() if self.takes_vs else ""
        params = self.params(inv.options)
        with unknown.watch() as seen:
            if not other:
                result = self.reply(self.compute(ctx, inv.texts, params))
            else:
                result = side_by_side(self, ctx, inv.texts, params, other)
        if not seen:
            return result
        return dataclasses.replace(result, warnings=[*result.warnings, *unknown_warnings(seen.values())])
