"""The commands about the conversation itself: `again`, `history` and `export`.

They reach the command table through the :class:`~assistant.commands.spec.Context` they are given
(``ctx.commands``), so this module, `sharing` and `export` never import the table and
there is no import cycle: ``commands -> conversation -> export -> sharing``.
"""

from __future__ import annotations

import dataclasses

from assistant.commands.spec import Context, Invocation
from assistant.parsing import parse
from assistant.sharing.export import export_result
from assistant.sharing.links import again_note, full_turns, history_markdown, history_table, merged_line, previous_line
from tools.core.errors import UserError
from tools.core.results import Result, Table


def again(ctx: Context, inv: Invocation) -> Result:
    """``again [texts] [--option value ...]``: the previous command, re-run with these changes."""
    table = ctx.commands
    line = merged_line(previous_line(ctx.session.history, table), inv, table, ctx.settings)
    rerun = parse(line, table, ctx.settings)
    result = table[rerun.verb].run(ctx, rerun)
    ctx.session.rerun = rerun.line  # history and permalinks record the command that really ran
    return dataclasses.replace(result, text=f"{again_note(rerun.line)}\n\n{result.text}")


def history(ctx: Context, inv: Invocation) -> Result:
    """``history``: this conversation's commands, each with its permalink."""
    turns = ctx.session.turns
    if not turns:
        raise UserError("This conversation has no answered commands yet; run one, for example "
                        "`compare A cat sat. | A kitten sat.`, then `history`.")
    base = ctx.session.base_url
    where = "" if base else " (relative links: they work on the assistant's page)"
    text = (f"This conversation's {len(turns)} answered command{'s' if len(turns) != 1 else ''}, oldest first; "
            f"each link re-runs its command when opened{where}.\n\n{history_markdown(turns, base)}")
    return Result("history", text, [Table("history", history_table(turns, base))],
                  settings={"commands": len(turns)})


def export(ctx: Context, inv: Invocation) -> Result:
    """``export [--format markdown|html|both]``: the conversation as downloads."""
    turns = [t for t in ctx.session.turns if t.command != "export"]
    if not turns:
        raise UserError("There is nothing to export yet; run a command first, for example "
                        "`compare A cat sat. | A kitten sat.`, then `export`.")
    fmt = inv.options.get("format") or "both"
    formats = ["markdown", "html"] if fmt == "both" else [fmt]
    return export_result(full_turns(ctx, turns), formats, ctx.session.base_url)
