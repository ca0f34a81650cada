"""CommandSpec, Invocation and Context: the shapes the command table is made of."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from assistant.options import Option
from tools.access import WEB, DataAccess
from tools.config import Settings
from tools.hub import LoadedModel, ModelHub
from tools.results import Result


@dataclass(frozen=True)
class Invocation:
    """A parsed command line: the verb, its texts and its converted options."""

    verb: str
    texts: list[str]
    options: dict[str, Any]
    line: str = ""


#: How many replies a conversation keeps for `history` and `export` (older ones are dropped).
MAX_TURNS = 50


@dataclass(frozen=True)
class Turn:
    """One answered command of a conversation: the line that ran, the conversation's model, the result."""

    line: str
    model: str
    result: Result


@dataclass
class Session:
    """One conversation's own state; never shared between users."""

    model: str = ""
    mlm_model: str = ""  # the page's masked-LM pick for `mask` ("" = ASSISTANT_MLM_MODEL)
    uploads: tuple[str, ...] = ()  # files this visitor uploaded (benchmark data)
    history: list[str] = field(default_factory=list)
    last: Result | None = None
    # --- sharing (issue 8) ---
    turns: list[Turn] = field(default_factory=list)  # the answered commands, for `history` and `export`
    base_url: str = ""  # the address the page was opened at, for permalinks ("" = relative links)
    rerun: str = ""  # set by `again`: the line it really ran, remembered in its place

    def remember(self, line: str, result: Result) -> None:
        """Record an answered command (``again`` records the command line it re-ran)."""
        line, self.rerun = self.rerun or line, ""
        self.history.append(line)
        self.last = result
        self.turns.append(Turn(line, self.model, result))
        del self.turns[:-MAX_TURNS]


@dataclass
class Context:
    """What a command handler may use: this conversation, the shared hub, the settings."""

    session: Session
    hub: ModelHub
    settings: Settings
    progress: Callable[[float, str], None] = field(default=lambda fraction, message: None)
    #: The command table, for commands that run other commands (`again`); given by dispatch.
    commands: Mapping[str, CommandSpec] = field(default_factory=dict)
    access: DataAccess = WEB  # which files `--data` may read: the web faces' limits unless the CLI says otherwise

    def model(self, name: str | None = None) -> LoadedModel:
        """The named model, or this conversation's model."""
        return self.hub.get(name or self.session.model or self.settings.model)


Handler = Callable[[Context, Invocation], Result]


@dataclass(frozen=True)
class CommandSpec:
    """One row of the command table.

    Attributes:
        name: the verb.
        summary: one line for the command list.
        usage: the grammar, as shown by ``help``.
        examples: full command lines that work (the first one is the page's example).
        run: the handler that calls the tool.
        texts: the least and most texts the command takes (None: the configured limit).
        texts_hint: what the texts are, for error messages.
        options: the ``--options`` it accepts.
        aliases: other verbs that mean the same.
        phrasings: questions in plain English this command answers (``X`` / ``"A"`` stand for texts);
            the router (``assistant.understanding``) compares a question with them.
    """

    name: str
    summary: str
    usage: str
    examples: tuple[str, ...]
    run: Handler
    texts: tuple[int, int | None] = (0, 0)
    texts_hint: str = ""
    options: tuple[Option, ...] = ()
    aliases: tuple[str, ...] = ()
    phrasings: tuple[str, ...] = ()

    def option(self, name: str) -> Option | None:
        return next((o for o in self.options if o.name == name), None)
