"""`--vs MODEL`: run a command on the conversation's model and on another one, and join the answers.

Each model's answer is exactly that model's own reply (the command computes its facts twice,
once with the other model as the conversation's); the joined reply has every table once,
with a ``model`` column, each chart drawn once per model side by side (or the command's own
side-by-side charts), and the command's own sentence on where the two sets of facts differ.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Mapping
from typing import Any

import pandas as pd

from tools.charts import pairs
from tools.core.errors import UserError
from tools.core.results import Chart, Result, Table
from tools.core.text import code, md
from tools.models.names import ALIASES, EMBEDDED, FAST_SUFFIX

#: A command and its context (``assistant.commands.base``, which imports this module).
Command = Any
Context = Any


def refusal(verb: str, table: Mapping[str, Command]) -> str:
    """The sentence for ``--vs`` on a command that does not take it."""
    instead = getattr(table.get(verb), "vs_instead", "")
    if instead:
        return f"`{verb}` does not take --vs; {instead}"
    names = dict.fromkeys(c.name for c in table.values() if c.takes_vs)
    return (f"`{verb}` does not take --vs; the commands that compare two models side by side are "
            + ", ".join(f"`{v}`" for v in names) + ".")


def side_by_side(command: Command, ctx: Context, texts: list[str], params: Any, other: str) -> Result:
    """``command`` on the conversation's model and on ``other``, joined: each answer is that model's own
    reply, and the command's ``differ`` says where the two sets of facts differ."""
    first = ctx.model()
    second = _load(ctx, other)
    if second is first:
        others = [m for m in ("minilm", "minilm:int8", "bert-small") if m != first.name][:2]
        raise UserError(f"--vs {code(other, 40)} is the model this conversation already uses ({first.name}); "
                        f"name another one, like `{others[0]}` or `{others[1]}`.")
    facts = command.compute(ctx, texts, params), command.compute(ctx.on(other), texts, params)
    a, b = command.reply(facts[0]), command.reply(facts[1])
    names = (a.model or "model 1", b.model or "model 2")
    if names[0] == names[1]:
        names = (f"{names[0]} (1)", f"{names[1]} (2)")
    charts = command.versus_charts(*facts, names)
    return join(a, b, names, command.differ(*facts, names), charts)


def _load(ctx: Context, name: str) -> Any:
    """The ``--vs`` model, or its loading sentence with a did-you-mean among the names that work offline."""
    try:
        return ctx.model(name)
    except UserError as exc:
        known = [*EMBEDDED, *ALIASES, *(f"{n}{FAST_SUFFIX}" for n in EMBEDDED)]
        close = [c for c in difflib.get_close_matches(name.lower(), known, n=2, cutoff=0.6) if c != name.lower()]
        hint = (" Did you mean " + " or ".join(f"`{c}`" for c in close) + "?") if close else ""
        raise UserError(f"--vs: {str(exc).rstrip()}{hint}") from exc


# --- joining two replies ------------------------------------------------------------------

def join(a: Result, b: Result, names: tuple[str, str], differ: str,
         charts: list[Chart] | None = None) -> Result:
    """One reply from two models' replies to the same command: every table once with a ``model`` column,
    each chart side by side (or the command's own ``charts``), each model's drawings one after the other
    (their titles name the model), and the sentence on where they differ."""
    tables = _tables(a, b, names)
    charts = pairs.side_by_side(a.charts, b.charts, names) if charts is None else charts
    text = (f"**{md(names[0])}** vs **{md(names[1])}**: {differ}\n\n"
            f"**{md(names[0])}**: {a.text}\n\n**{md(names[1])}**: {b.text}")
    warnings = [f"{names[0]}: {w}" for w in a.warnings] + [f"{names[1]}: {w}" for w in b.warnings]
    settings = {**a.settings, "vs": names[1], "models": f"{names[0]}, {names[1]}"}
    return Result(a.command, text, tables, charts, warnings, a.model, settings=settings,
                  artifacts=[dataclasses.replace(x, filename=f"{_slug(n)}-{x.filename}")
                             for n, r in zip(names, (a, b)) for x in r.artifacts],
                  drawings=[dataclasses.replace(d, name=f"{n}: {d.name}")
                            for n, r in zip(names, (a, b)) for d in r.drawings])


def _slug(name: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in name)


def _tables(a: Result, b: Result, names: tuple[str, str]) -> list[Table]:
    theirs = {t.name: t.frame for t in b.tables}
    out: list[Table] = []
    for t in a.tables:
        other = theirs.pop(t.name, None)
        if other is not None and list(other.columns) == list(t.frame.columns):
            out.append(Table(t.name, pd.concat([t.frame.assign(model=names[0]), other.assign(model=names[1])],
                                               ignore_index=True)[["model", *t.frame.columns]]))
        else:
            out.append(Table(f"{t.name} ({names[0]})", t.frame.assign(model=names[0])[["model", *t.frame.columns]]))
            if other is not None:
                out.append(Table(f"{t.name} ({names[1]})", other.assign(model=names[1])[["model", *other.columns]]))
    out += [Table(f"{n} ({names[1]})", f.assign(model=names[1])[["model", *f.columns]]) for n, f in theirs.items()]
    return out
