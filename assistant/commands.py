"""The command table: one row per command. ``help`` is generated from it.

Adding a command = one tool function in ``tools/`` + one row here + its tests.
Handlers only adapt an :class:`Invocation` to the tool's arguments.
"""

from __future__ import annotations

import dataclasses

import pandas as pd

from assistant.options import Option
from assistant.spec import CommandSpec, Context, Invocation
from tools import info, similarity, tokens
from tools.errors import UserError
from tools.results import Result, Table
from tools.text import code

POOL = Option("pool", "choice", "how token vectors become a sentence vector",
              choices=("cls", "mean", "max", "sbert", "all"), default="mean")
LAYER = Option("layer", "int", "hidden state to use: 0 = embeddings, the last layer by default",
               minimum=0, maximum=1000)


def _help(ctx: Context, inv: Invocation) -> Result:
    if inv.texts:
        spec = TABLE.get(inv.texts[0].lower().strip())
        if spec is None:
            raise UserError(f"There is no command {code(inv.texts[0], 30)}; type `help` for the list.")
        rows = [{"option": o.usage(), "what it does": o.help,
                 "default": "" if o.default is None else str(o.default)} for o in spec.options]
        frame = pd.DataFrame(rows, columns=["option", "what it does", "default"])
        examples = "\n".join(f"- `{e}`" for e in spec.examples)
        aliases = f" (also: {', '.join(spec.aliases)})" if spec.aliases else ""
        text = f"**{spec.name}**{aliases}: {spec.summary}\n\nUsage: `{spec.usage}`\n\nExamples:\n{examples}"
        return Result("help", text, [Table(f"{spec.name} options", frame)])
    frame = pd.DataFrame([{"command": s.name, "usage": s.usage, "what you get": s.summary} for s in COMMANDS])
    text = ("Type a command, texts separated by `|`, options after `--`. "
            "`help <command>` shows one command's options and examples.")
    return Result("help", text, [Table("commands", frame)])


def _model(ctx: Context, inv: Invocation) -> Result:
    if inv.texts:
        loaded = ctx.model(inv.texts[0])  # raises before the conversation's model changes
        ctx.session.model = inv.texts[0].strip()
        result = info.describe(loaded)
        return dataclasses.replace(result, text=f"Switched this conversation to **{loaded.name}**. " + result.text)
    return info.describe(ctx.model())


def _tokenize(ctx: Context, inv: Invocation) -> Result:
    return tokens.tokenize(ctx.model(), inv.texts, **inv.options)


def _compare(ctx: Context, inv: Invocation) -> Result:
    return similarity.compare(ctx.model(), inv.texts, **inv.options)


COMMANDS: list[CommandSpec] = [
    CommandSpec(
        "help", "the command list, or one command's usage and examples", "help [command]",
        ("help", "help compare"), _help, texts=(0, 1), aliases=("?", "commands"),
    ),
    CommandSpec(
        "model", "the model's facts (layers, heads, sizes, parameters, device); with a name, switch to it",
        "model [name]", ("model", "model minilm"), _model, texts=(0, 1), texts_hint="a model name",
    ),
    CommandSpec(
        "tokenize", "a row per token: word pieces, special tokens, ids, masks, token types; the decoded round trip",
        "tokenize text [| text2] [--max-length N] [--padding longest|max_length] [--truncation]",
        ("tokenize BERT provides contextual embeddings.",
         "tokenize Where is the bank? | By the river. --padding max_length --max-length 16"),
        _tokenize, texts=(1, 2), texts_hint="a text, or a pair `a | b`",
        options=(
            Option("max-length", "int", "pad to / cut at this many tokens", minimum=1, maximum=100_000),
            Option("padding", "choice", "pad the encoding", choices=("longest", "max_length")),
            Option("truncation", "flag", "cut the input at --max-length (or the model's limit)", default=False),
        ),
        aliases=("tokens", "tok"),
    ),
    CommandSpec(
        "compare", "cosine similarity of sentence vectors; a matrix and heatmap for 3+ texts",
        "compare a | b [| c ...] [--pool cls|mean|max|sbert|all] [--layer N]",
        ("compare In 1995, the last survey, those numbers were equal. | The last time the survey was "
         "conducted, in 1995, those numbers matched. --pool all",
         "compare A man plays guitar. | Someone is playing an instrument. | The stock market fell."),
        _compare, texts=(2, None), texts_hint="at least two texts separated by `|`",
        options=(POOL, LAYER), aliases=("similarity", "sim"),
    ),
]

#: Verbs and aliases -> spec, as the parser looks them up.
TABLE: dict[str, CommandSpec] = {
    key: spec for spec in COMMANDS for key in (spec.name, *spec.aliases)
}
