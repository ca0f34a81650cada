"""CommandSpec, Invocation and Context: the shapes the command table is made of."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from assistant.commands.options import Option
from assistant.session import MAX_TURNS, FullTurn, Session, Turn  # noqa: F401 - the conversation's shapes
from tools.benchmark.access import WEB, DataAccess
from tools.core.config import Settings
from tools.core.results import Result
from tools.models.hub import LoadedModel, ModelHub


@dataclass(frozen=True)
class Invocation:
    """A parsed command line: the verb, its texts and its converted options."""

    verb: str
    texts: list[str]
    options: dict[str, Any]
    line: str = ""


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
