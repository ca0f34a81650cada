"""The command table: one row per command. ``help`` is generated from it.

Adding a command = one tool function in ``tools/`` + one row in its family's module (or here) + its tests.
Handlers only adapt an :class:`Invocation` to the tool's arguments.
"""

from __future__ import annotations

import dataclasses

import pandas as pd

from assistant import conversation, versus
from assistant.commands.attention import ATTENTION
from assistant.commands.common import pool_option, using
from assistant.commands.options import Option
from assistant.commands.phrasings import PHRASINGS
from assistant.commands.projection import PROJECTION
from assistant.commands.similarity import SIMILARITY
from assistant.commands.spec import CommandSpec, Context, Invocation
from assistant.sharing.links import FollowUpSpec
from tools.core.errors import UserError
from tools.core.results import Result, Table
from tools.core.text import code
from tools.inspection import info, tokens


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
    text = ("Type a command, texts separated by `|`, options after `--`, or ask in plain English "
            "(\"How similar are 'A cat sat.' and 'A kitten sat.'?\"). "
            "`help <command>` shows one command's options and examples.")
    return Result("help", text, [Table("commands", frame)])


def _model(ctx: Context, inv: Invocation) -> Result:
    if inv.texts:
        loaded = ctx.model(inv.texts[0])  # raises before the conversation's model changes
        ctx.session.model = inv.texts[0].strip()
        result = info.describe(loaded)
        return dataclasses.replace(result, text=f"Switched this conversation to **{loaded.name}**. " + result.text)
    return info.describe(ctx.model())


def _mask(ctx: Context, inv: Invocation) -> Result:
    """``mask``: the conversation's model predicts, or ``--model``, or the masked-LM fallback (issue 5)."""
    from tools.inspection import masking

    options = dict(inv.options)
    name = options.pop("model", None)
    fallback = getattr(ctx.session, "mlm_model", "") or ctx.settings.mlm_model  # the page's pick, if any
    if options.pop("why", False):  # issue 18: which input tokens drove each mask's top fill
        from tools.inspection import mask_why

        return mask_why.mask_why(ctx.model(), inv.texts, mlm_model=name, fallback=fallback, hub=ctx.hub, **options)
    return masking.mask(ctx.model(), inv.texts, mlm_model=name, fallback=fallback, hub=ctx.hub, **options)


def _benchmark(ctx: Context, inv: Invocation) -> Result:
    """``benchmark`` (issue 7): models from --models through the hub, progress to the page, uploads allowed."""
    from tools.benchmark import run as benchmark

    options = dict(inv.options)
    names = [n.strip() for n in (options.pop("models", None) or "").split(",") if n.strip()]
    if len(dict.fromkeys(names)) > benchmark.MAX_MODELS:
        raise UserError(f"--models names {len(dict.fromkeys(names))} models; compare at most "
                        f"{benchmark.MAX_MODELS} at a time.")
    models = [ctx.model(n) for n in dict.fromkeys(names)] or [ctx.model()]
    return benchmark.benchmark(models[0], inv.texts, models=models, settings=ctx.settings,
                               progress=ctx.progress, uploads=getattr(ctx.session, "uploads", ()), access=ctx.access,
                               **options)


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
        using(tokens.tokenize), texts=(1, 2), texts_hint="a text, or a pair `a | b`",
        options=(
            Option("max-length", "int", "pad to / cut at this many tokens", minimum=1, maximum=100_000),
            Option("padding", "choice", "pad the encoding", choices=("longest", "max_length")),
            Option("truncation", "flag", "cut the input at --max-length (or the model's limit)", default=False),
        ),
        aliases=("tokens", "tok"),
    ),
    *SIMILARITY,
    # --- fill-mask: mask (issue 5) ---
    CommandSpec(
        "mask", "top-K fills per [MASK] with probabilities, a greedy joint filling, and what the mask attended to",
        "mask text with [MASK] [--top K] [--model name] [--why]",
        ("mask The [MASK] sat on the mat.",
         "mask Paris is the [MASK] of [MASK]. --top 10",
         "mask The <mask> sat on the mat. --model bert-small",
         "mask The [MASK] sat on the mat. --why"),
        _mask, texts=(1, 1), texts_hint="one text with `[MASK]` (or `<mask>`) where a word is missing",
        options=(
            Option("top", "int", "candidates per mask", default=5, minimum=1, maximum=50),
            Option("model", "str", "the masked-LM model to predict with (default: this conversation's model "
                                   "when it has a masked-LM head, else ASSISTANT_MLM_MODEL)"),
            Option("why", "flag", "also show which input tokens drove each mask's top fill (integrated "
                   "gradients on its logit)", default=False),
        ),
        aliases=("fill", "fill-mask", "unmask"),
    ),
    *ATTENTION,
    *PROJECTION,
    # --- benchmark (issue 7) ---
    CommandSpec(
        "benchmark", "STS evaluation: Spearman / Pearson x 100 against gold scores per model x pooling, "
        "paraphrase accuracy / F1 at the best threshold, GloVe / input-embedding / shuffled baselines, "
        "worst pairs, a chart, CSV and JSON",
        "benchmark [--data stsb-dev|stsb-test|FILE] [--sample N] [--seed S] [--models a,b] "
        "[--pool cls,mean,max,sbert] [--threshold T]",
        ("benchmark --sample 300 --pool mean,sbert",
         "benchmark --data stsb-test",
         "benchmark --data stsb-dev --sample 600 --seed 7 --pool cls,mean,max --threshold 3.5"),
        _benchmark, texts=(0, 0), texts_hint="no text: the data comes from --data",
        options=(
            Option("data", "str", "stsb-dev, stsb-test, or a .tsv (STS-B layout) / .csv / .jsonl file "
                   "(sentence1, sentence2, score) in a data folder", default="stsb-dev"),
            Option("sample", "int", "use N pairs, stratified by gold-score bins (default: all)",
                   minimum=3, maximum=1_000_000),
            Option("seed", "int", "seed of the sample and of the shuffled pairs", default=42,
                   minimum=0, maximum=2**32 - 1),
            Option("models", "str", "comma-separated models to compare (default: this conversation's)"),
            pool_option("poolings to score (default: every one the model has)", several=True),
            Option("threshold", "float", "gold score from which a pair is a paraphrase (STS-B runs 0 to 5)",
                   default=4.0),
        ),
        aliases=("bench", "sts"),
    ),
    # --- sharing: history, again, export (issue 8) ---
    FollowUpSpec(
        "again", "the previous command re-run with changed options (`--name default` drops one) or new texts",
        "again [new texts] [--option value ...]",
        ("again --layer 2", "again --layer 2 --head 3", "again --pool cls", "again --layer default"),
        conversation.again, texts=(0, None), texts_hint="optional new texts for the previous command",
        aliases=("rerun", "redo"),
    ),
    CommandSpec(
        "history", "this conversation's commands, each with its permalink (a link that re-runs it)",
        "history", ("history",), conversation.history, texts=(0, 0), aliases=("log",),
    ),
    CommandSpec(
        "export", "the whole conversation as Markdown (zip: text, pipe tables, Vega-Lite JSON, CSV) and as "
        "one self-contained HTML file (charts as images) that opens offline",
        "export [--format both|markdown|html]", ("export", "export --format html"), conversation.export, texts=(0, 0),
        options=(Option("format", "choice", "which files to make", choices=("both", "markdown", "html"),
                        default="both"),),
        aliases=("download", "save"),
    ),
]

COMMANDS = [versus.enable(spec) for spec in COMMANDS]  # --vs MODEL on the commands that take it (issue 18)
# Each row's plain-English phrasings (assistant/commands/phrasings.py), for questions routed to it.
COMMANDS = [dataclasses.replace(spec, phrasings=spec.phrasings or PHRASINGS.get(spec.name, ())) for spec in COMMANDS]

#: Verbs and aliases -> spec, as the parser looks them up.
TABLE: dict[str, CommandSpec] = {
    key: spec for spec in COMMANDS for key in (spec.name, *spec.aliases)
}
