"""The commands about the conversation itself: again, history and export.

They reach the command table through the :class:`~assistant.commands.base.Context` they are given
(``ctx.commands``), so this module never imports the registry's families.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

from assistant.commands.base import Command, Context, Invocation, Texts
from assistant.commands.options import TEXT, Option, param
from assistant.commands.registry import register
from assistant.parsing import parse
from assistant.sharing.export import export_result
from assistant.sharing.links import (
    HISTORY_SHOWN,
    again_note,
    full_turns,
    history_markdown,
    history_table,
    merged_line,
    previous_line,
)
from tools.core.errors import UserError
from tools.core.results import Result, Table

ORDER = 90


class Format(str, Enum):
    """Which files ``export`` makes."""

    BOTH = "both"
    MARKDOWN = "markdown"
    HTML = "html"


@dataclass(frozen=True)
class PassThrough(Option):
    """An option typed after `again`: kept raw (a flag has no value), converted by the re-run command."""

    def convert(self, raw: str | None) -> Any:
        return raw


@register
class Again(Command[Any, Result]):
    name, aliases = "again", ("rerun", "redo")
    summary = "the previous command re-run with changed options (`--name default` drops one) or new texts"
    texts = Texts(0, None, "optional new texts for the previous command", "[new texts]")
    examples = ("again --layer 2", "again --layer 2 --head 3", "again --pool cls", "again --layer default")

    @property
    def usage(self) -> str:
        return "again [new texts] [--option value ...]"

    def option(self, name: str) -> Option | None:
        """Any ``--name [value]``: kept raw, checked later by the re-run command's own options."""
        return PassThrough(name, TEXT, "an option of the previous command")

    def params(self, options: Mapping[str, Any]) -> Any:
        return dict(options)

    def run(self, ctx: Context, inv: Invocation) -> Result:
        table = ctx.commands
        line = merged_line(previous_line(ctx.session.history, table), inv, table, ctx.settings)
        rerun = parse(line, table, ctx.settings)
        result = table[rerun.verb].run(ctx, rerun)
        ctx.ran = rerun.line  # history and permalinks record the command that really ran
        return dataclasses.replace(result, text=f"{again_note(rerun.line)}\n\n{result.text}")


@register
class History(Command[Any, Result]):
    name, aliases = "history", ("log", "hist")
    terms = ("permalinks?", r"(?:commands|lines|steps|questions)\s+(?:(?:i|we)\s+(?:ran|typed|asked|did)\s+)?so\s+far",
             r"links?\s+(?:to|for|of)\s+(?:those|these|them|the\s+(?:last|previous|earlier)|my|each|all|both)")
    summary = "this conversation's commands, each with its permalink (a link that re-runs it)"
    examples = ("history",)
    phrasings = (
        'what have I run so far?',
        'show my previous commands',
        "list this conversation's history",
        'give me links to my earlier answers',
        'what did I ask before?',
        "which commands have I run in this conversation?",
        "what commands did I use so far?",
    )

    def compute(self, ctx: Context, texts: list[str], params: Any) -> Result:
        turns = ctx.session.turns
        if not turns:
            raise UserError("This conversation has no answered commands yet; run one, for example "
                            "`compare A cat sat. | A kitten sat.`, then `history`.")
        base = ctx.session.base_url
        where = "" if base else " (relative links: they work on the assistant's page)"
        n = len(turns)
        which = (f"The last {HISTORY_SHOWN} of this conversation's {n} answered commands (all {n} are in the "
                 "`history` table)" if n > HISTORY_SHOWN else
                 f"This conversation's {n} answered command{'s' if n != 1 else ''}")
        text = (f"{which}, oldest first; each link re-runs its command when opened{where}."
                f"\n\n{history_markdown(turns, base)}")
        return Result("history", text, [Table("history", history_table(turns, base))],
                      settings={"commands": len(turns)})


@register
class Export(Command[Any, Result]):
    name, aliases = "export", ("download", "save")
    summary = ("the whole conversation as Markdown (zip: text, pipe tables, Vega-Lite JSON, CSV) and as "
               "one self-contained HTML file (charts as images) that opens offline")
    examples = ("export", "export --format html")
    phrasings = (
        'export this conversation',
        'download the whole chat as markdown',
        'save the conversation as an HTML file',
        'can I keep a copy of these answers offline?',
        'give me a zip of everything we did',
    )

    @dataclass(frozen=True)
    class Params:
        format: str = param("which files to make", "both", choices=Format)

    def compute(self, ctx: Context, texts: list[str], p: Params) -> Result:
        turns = [t for t in ctx.session.turns if t.command != "export"]
        if not turns:
            raise UserError("There is nothing to export yet; run a command first, for example "
                            "`compare A cat sat. | A kitten sat.`, then `export`.")
        formats = ["markdown", "html"] if p.format == Format.BOTH else [p.format]
        return export_result(full_turns(ctx, turns), formats, ctx.session.base_url)
