"""The command table: one row per command. ``help`` is generated from it.

Adding a command = one tool function in ``tools/`` + one row here + its tests.
Handlers only adapt an :class:`Invocation` to the tool's arguments.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import pandas as pd

from assistant import conversation, versus
from assistant.options import Option
from assistant.phrasings import PHRASINGS
from assistant.sharing import FollowUpSpec
from assistant.spec import CommandSpec, Context, Invocation
from tools import attention, info, neighbors, projection, selfattn, similarity, static, syntax, tokens, words
from tools import embed as embed_tool
from tools import why as why_tool
from tools import vocab as vocab_tool
from tools.errors import UserError
from tools.results import Result, Table
from tools.text import code
from tools.vectors import Pooling

#: The poolings a command may be asked for: the toolkit's own enum, read once here.
POOLINGS = tuple(p.value for p in Pooling)


def pool_option(help: str = "how token vectors become the sentence vector", *, extra: tuple[str, ...] = (),
                several: bool = False) -> Option:
    """The ``--pool`` option: one pooling (default mean), or several (``several``: default every one)."""
    if several:
        return Option("pool", "choices", help, choices=POOLINGS + extra)
    return Option("pool", "choice", help, choices=POOLINGS + extra, default="mean")


POOL = pool_option("how token vectors become a sentence vector", extra=("all",))
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


def using(tool: Callable[..., Result], progress: bool = False,
          samples: bool = False) -> Callable[[Context, Invocation], Result]:
    """The usual handler: ``tool(conversation model, texts, **options)``, plus the page's progress bar
    for long tools, and the chart's row limit for tools that sample their maps (``samples``)."""

    def handler(ctx: Context, inv: Invocation) -> Result:
        extra = {"progress": ctx.progress} if progress else {}
        if samples:
            extra["chart_rows"] = ctx.settings.max_chart_rows
        return tool(ctx.model(), inv.texts, **extra, **inv.options)

    handler.__name__ = f"using_{tool.__name__}"
    return handler


def _mask(ctx: Context, inv: Invocation) -> Result:
    """``mask``: the conversation's model predicts, or ``--model``, or the masked-LM fallback (issue 5)."""
    from tools import masking

    options = dict(inv.options)
    name = options.pop("model", None)
    fallback = getattr(ctx.session, "mlm_model", "") or ctx.settings.mlm_model  # the page's pick, if any
    if options.pop("why", False):  # issue 18: which input tokens drove each mask's top fill
        from tools import mask_why

        return mask_why.mask_why(ctx.model(), inv.texts, mlm_model=name, fallback=fallback, hub=ctx.hub, **options)
    return masking.mask(ctx.model(), inv.texts, mlm_model=name, fallback=fallback, hub=ctx.hub, **options)


def _benchmark(ctx: Context, inv: Invocation) -> Result:
    """``benchmark`` (issue 7): models from --models through the hub, progress to the page, uploads allowed."""
    from tools import benchmark

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
    CommandSpec(
        "compare", "cosine similarity of sentence vectors; a matrix and heatmap for 3+ texts",
        "compare a | b [| c ...] [--pool cls|mean|max|sbert|all] [--layer N]",
        ("compare In 1995, the last survey, those numbers were equal. | The last time the survey was "
         "conducted, in 1995, those numbers matched. --pool all",
         "compare A man plays guitar. | Someone is playing an instrument. | The stock market fell."),
        using(similarity.compare), texts=(2, None), texts_hint="at least two texts separated by `|`",
        options=(POOL, LAYER), aliases=("similarity", "sim"),
    ),
    # --- why: token attribution of a similarity (issue 18) ---
    CommandSpec(
        "why", "which tokens make two texts similar: for mean pooling the exact token-pair contributions that "
        "add up to the cosine; for cls / max pooling integrated gradients with a completeness check",
        "why a | b [--pool mean|cls|max|sbert] [--layer N]",
        ("why A man plays guitar. | Someone is playing an instrument.",
         "why In 1995, the last survey, those numbers were equal. | The last time the survey was conducted, "
         "in 1995, those numbers matched. --pool cls",
         "why A cat sat on the mat. | A kitten sat on the rug. --vs minilm:int8"),
        using(why_tool.why), texts=(2, 2), texts_hint="two texts separated by `|`",
        options=(
            pool_option("mean: exact pair contributions; cls, max: integrated gradients; sbert: the model's "
                        "recipe (exact when it is a mean)"),
            LAYER,
        ),
        aliases=("explain", "attribute"),
    ),
    # --- words in context: word, embed, static, neighbors (issue 3) ---
    CommandSpec(
        "word", "one word's vector in each sentence (pieces averaged), cosine between every pair of occurrences "
        "per layer strategy, against baselines",
        "word w | s1 | s2 [| ...] [--strategy first|last|sum-all|sum-last4|concat-last4|mean-last4|all] [--seed N]",
        ("word bank | We sat on the river bank. | The boat drifted to the bank of the river. | "
         "I deposited money at the bank.",
         "word code | I write code and my code compiles. | Coding is fun, and code is art. --strategy concat-last4",
         "word embeddings | Embeddings are vectors. | BERT makes contextual embeddings. --strategy last"),
        using(words.word), texts=(2, None), texts_hint="a word, then sentences that contain it: `w | s1 | s2`",
        options=(
            Option("strategy", "choice", "how layers make the word's vector (all: one row per strategy)",
                   choices=("first", "last", "sum-all", "sum-last4", "concat-last4", "mean-last4", "all"),
                   default="all"),
            Option("seed", "int", "seed of the random-token baseline", default=0, minimum=0, maximum=2**32 - 1),
        ),
        aliases=("word-in-context", "wic"),
    ),
    CommandSpec(
        "embed", "every hidden state's shape, each token's vector norm, the pooled sentence vector; "
        "downloads as .npy, .safetensors and CSV",
        "embed text [| text2 ...] [--layer N] [--pool cls|mean|max|sbert]",
        ("embed BERT provides contextual embeddings.", "embed A cat sat. | A kitten sat. --layer 3 --pool cls"),
        using(embed_tool.embed), texts=(1, None), texts_hint="a text (or several separated by `|`)",
        options=(
            Option("layer", "int", "hidden state of the token and sentence vectors: 0 = embeddings, last by default",
                   minimum=0, maximum=1000),
            pool_option(),
        ),
        aliases=("embedding", "embeddings"),
    ),
    CommandSpec(
        "static", "GloVe 6B 50d (one vector per word, context-blind) beside the model's contextual vectors",
        "static w | s1 | s2 [| ...]  or  static a | b [| ...] [--strategy S] [--pool P] [--mode auto|word|sentences]",
        ("static bank | We sat on the river bank. | I deposited money at the bank.",
         "static A man plays guitar. | Someone is playing an instrument."),
        using(static.static), texts=(2, None),
        texts_hint="a word and sentences (`w | s1 | s2`) or two sentences (`a | b`)",
        options=(
            Option("strategy", "choice", "layer strategy of the word's contextual vector (word mode)",
                   choices=("first", "last", "sum-all", "sum-last4", "concat-last4", "mean-last4"), default="last"),
            pool_option("the model's sentence pooling (sentence mode)"),
            Option("mode", "choice", "auto: a single word then 2+ sentences is word mode",
                   choices=("auto", "word", "sentences"), default="auto"),
        ),
        aliases=("glove",),
    ),
    CommandSpec(
        "neighbors", "nearest words by cosine in the model's input embeddings or in GloVe",
        "neighbors w [--space model|glove] [--k K]",
        ("neighbors bank", "neighbors bank --space glove --k 20"),
        using(neighbors.neighbors), texts=(1, 1), texts_hint="one word",
        options=(
            Option("space", "choice", "model: the input-embedding matrix; glove: GloVe 6B 50d",
                   choices=("model", "glove"), default="model"),
            Option("k", "int", "how many neighbours", default=10, minimum=1, maximum=100),
        ),
        aliases=("neighbours", "nearest"),
    ),
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
    # --- attention: attend, selfattn, syntax (issue 4) ---
    CommandSpec(
        "attend", "attention maps (one head, one layer's heads, or every layer x head) and what each head does: "
        "attends to itself, the previous / next token, [CLS], [SEP]",
        "attend text [| pair] [--layer L] [--head H]",
        ("attend The cat sat on the mat",
         "attend The cat sat on the mat --layer 2 --head 5",
         "attend The cat sat on the mat --layer 1",
         "attend Where is the bank? | By the river."),
        using(attention.attend), texts=(1, 2), texts_hint="a text, or a pair `a | b`",
        options=(
            Option("layer", "int", "attention layer, numbered from 1 (default: every layer)"),
            Option("head", "int", "head within a layer, numbered from 1 (default: every head)"),
        ),
        aliases=("attention", "heads"),
    ),
    CommandSpec(
        "selfattn", "self-attention rebuilt by hand from a layer's own query/key/value weights, shown equal "
        "to the model's; --causal mask; --heads N toy with random projections",
        "selfattn text [--layer L] [--head H] [--causal] [--heads N]",
        ("selfattn The cat sat on the mat",
         "selfattn The police is chasing a criminal on the run. --layer 1 --causal",
         "selfattn The cat sat on the mat --heads 8"),
        using(selfattn.selfattn), texts=(1, 1), texts_hint="one text",
        options=(
            Option("layer", "int", "attention layer to rebuild, numbered from 1 (it reads hidden state L-1; "
                   "default: the last layer)"),
            Option("head", "int", "head drawn in the chart, numbered from 1 (default 1)"),
            Option("causal", "flag", "also apply the lower-triangular (decoder) mask", default=False),
            Option("heads", "int", "a toy with this many heads and random projections (must divide the "
                   "hidden size)"),
        ),
        aliases=("self-attention", "scratch"),
    ),
    CommandSpec(
        "syntax", "the dependency parse (spaCy) and each head's agreement with syntactic arcs and tree distance",
        "syntax text",
        ("syntax The cat sat on the mat",
         "syntax The police is chasing a criminal on the run."),
        using(syntax.syntax), texts=(1, 1), texts_hint="one English text",
        aliases=("dependency", "deps"),
    ),
    # --- projection: project, vocab (issue 6) ---
    CommandSpec(
        "project", "a labelled, interactive map of every token (and each text's sentence vector) or of one point "
        "per text: PCA with explained variance, t-SNE or UMAP; 3-D as three linked views; --basis vocab shows "
        "each token's static and contextual position, --basis glove the words in GloVe's static space",
        "project a [| b ...] [--level tokens|sentences] [--method pca|tsne|umap] [--dims 2|3] [--layer N] "
        "[--pool cls|mean|max|sbert] [--basis texts|vocab|glove]",
        ("project In 1995, the last survey, those numbers were equal. | The last time the survey was "
         "conducted, in 1995, those numbers matched.",
         "project A man plays guitar. | Someone is playing an instrument. | The stock market fell. "
         "--level sentences",
         "project The bank of the river. | The bank raised its rates. --dims 3 --method tsne",
         "project I deposited money at the bank. --basis vocab",
         "project I sat by the river bank. | I took out a bank loan. --basis glove"),
        using(projection.project, progress=True, samples=True),
        texts=(1, None), texts_hint="one or more texts separated by `|` (3 or more with --level sentences)",
        options=(
            Option("level", "choice", "a point per token (with each text's sentence vector) or per text",
                   choices=("tokens", "sentences"), default="tokens"),
            Option("method", "choice", "projection method (umap needs the optional umap-learn)",
                   choices=("pca", "tsne", "umap"), default="pca"),
            Option("dims", "int", "2, or 3 for three linked pairwise views", default=2),
            LAYER,
            pool_option(),
            Option("basis", "choice", "fit on these texts, on the input-embedding matrix (vocab), or show the "
                   "texts' words in GloVe's space (glove: static, one point per word)",
                   choices=("texts", "vocab", "glove"), default="texts"),
        ),
        aliases=("projection", "pca", "scatter"),
    ),
    CommandSpec(
        "vocab", "the input-embedding matrix projected and coloured by word features; a TensorBoard "
        "Projector export (vectors.tsv, metadata.tsv)",
        "vocab [--n N] [--method pca|tsne|umap] [--color length|vowels|number|subword|special] [--dims 2|3]",
        ("vocab", "vocab --n 30000 --color subword", "vocab --n 1600 --method tsne --color number",
         "vocab --color vowels --dims 3"),
        using(vocab_tool.vocab, progress=True, samples=True),
        texts=(0, 0),
        options=(
            Option("n", "int", "the first N rows of the matrix ([unused...] rows among them are skipped)",
                   default=4000, minimum=10, maximum=10_000_000),
            Option("method", "choice", "projection method (tsne: at most 3,000 points; umap needs umap-learn)",
                   choices=("pca", "tsne", "umap"), default="pca"),
            Option("color", "choice", "the label that colours the points",
                   choices=("length", "vowels", "number", "subword", "special"), default="length"),
            Option("dims", "int", "2, or 3 for three linked pairwise views", default=2),
        ),
        aliases=("vocabulary", "projector"),
    ),
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
# Each row's plain-English phrasings (assistant/phrasings.py), for questions routed to it.
COMMANDS = [dataclasses.replace(spec, phrasings=spec.phrasings or PHRASINGS.get(spec.name, ())) for spec in COMMANDS]

#: Verbs and aliases -> spec, as the parser looks them up.
TABLE: dict[str, CommandSpec] = {
    key: spec for spec in COMMANDS for key in (spec.name, *spec.aliases)
}
