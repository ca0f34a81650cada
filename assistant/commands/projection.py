"""The projection family: project, vocab."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from assistant.commands.base import Command, Context, Texts
from assistant.commands.options import param
from assistant.commands.registry import register
from tools.core.results import Result
from tools.encoding.pooling import Pooling
from tools.projection import maps, replies, vocab
from tools.projection.facts import Color
from tools.projection.fit import Basis, Level, Method

ORDER = 50


@register
class Project(Command[Any, Any]):
    name, aliases = "project", ("projection", "pca", "scatter")
    summary = ("a labelled, interactive map of every token (and each text's sentence vector) or of one point "
               "per text: PCA with explained variance, t-SNE or UMAP; 3-D as three linked views; --basis vocab "
               "shows each token's static and contextual position, --basis glove the words in GloVe's static space")
    texts = Texts(1, None, "one or more texts separated by `|` (3 or more with --level sentences)", "a [| b ...]")
    examples = (
        "project In 1995, the last survey, those numbers were equal. | The last time the survey was "
        "conducted, in 1995, those numbers matched.",
        "project A man plays guitar. | Someone is playing an instrument. | The stock market fell. "
        "--level sentences",
        "project The bank of the river. | The bank raised its rates. --dims 3 --method tsne",
        "project I deposited money at the bank. --basis vocab",
        "project I sat by the river bank. | I took out a bank loan. --basis glove",
    )
    phrasings = (
        'plot the tokens of "A" and "B" in 2D',
        'project the embeddings of "A" and "B" with PCA',
        'where do the tokens of "A" land on a map?',
        'draw a scatter plot of "A", "B" and "C"',
        'visualize the sentence vectors of "A", "B" and "C"',
        'one point per sentence for "A", "B" and "C"',
        'reduce the embeddings of "A" to two dimensions',
        'show a t-SNE map of "A" and "B"',
        'draw "A" and "B" with UMAP',
        'a 3D projection of "A" and "B"',
        'a PCA projection of the hidden states of "A" and "B"',
        'map the tokens of "A" in the vocabulary basis',
        'which tokens of "A" cluster together?',
        'how far does each token of "A" move from its vocabulary row to its contextual vector?',
    )

    @dataclass(frozen=True)
    class Params:
        level: str = param("a point per token (with each text's sentence vector) or per text", "tokens",
                           choices=Level)
        method: str = param("projection method (umap needs the optional umap-learn)", "pca", choices=Method)
        dims: int = param("2, or 3 for three linked pairwise views", 2, metavar="2|3")
        layer: int | None = param("hidden state to use: 0 = embeddings, the last layer by default",
                                  minimum=0, maximum=1000)
        pool: str = param("how token vectors become the sentence vector", "mean", choices=Pooling)
        basis: str = param("fit on these texts, on the input-embedding matrix (vocab), or show the texts' words "
                           "in GloVe's space (glove: static, one point per word)", "texts", choices=Basis)

    def compute(self, ctx: Context, texts: list[str], p: Params) -> Any:
        return maps.projection_map(ctx.model(), texts, p.level, p.method, p.dims, p.layer, p.pool, p.basis,
                                   ctx.progress, ctx.settings.max_chart_rows)

    def reply(self, facts: Any) -> Result:
        return replies.project(facts)


@register
class Vocab(Command[Any, Any]):
    name, aliases = "vocab", ("vocabulary", "projector")
    on_texts = "project"  # ("plot those in the input-embedding basis" after a `compare`)
    terms = ("tensorboard", "projector", "embedding matrix", "input embedding matrix")
    summary = ("the input-embedding matrix projected and coloured by word features; a TensorBoard "
               "Projector export (vectors.tsv, metadata.tsv)")
    examples = ("vocab", "vocab --n 30000 --color subword", "vocab --n 1600 --method tsne --color number",
                "vocab --color vowels --dims 3")
    phrasings = (
        'show the whole vocabulary projected',
        'plot the input embedding matrix',
        'what does the vocabulary look like in 2D?',
        'map the word embeddings of the vocabulary coloured by length',
        'export the vocabulary for the TensorBoard projector',
        'visualize the embedding table of the model',
        'colour the vocabulary map by vowel count',
        "project the model's vocabulary and colour it by numbers",
        'show the first 1000 tokens of the vocabulary with t-SNE',
    )

    @dataclass(frozen=True)
    class Params:
        n: int = param("how many rows of the matrix: the first N ([unused...] rows among them are skipped)", 4000,
                       minimum=10, maximum=10_000_000)
        method: str = param("projection method (tsne: at most 3,000 points; umap needs umap-learn)", "pca",
                            choices=Method)
        color: str = param("the label that colours the points", "length", choices=Color)
        dims: int = param("2, or 3 for three linked pairwise views", 2, metavar="2|3")

    def compute(self, ctx: Context, texts: list[str], p: Params) -> Any:
        facts = vocab.vocab_map(ctx.model(), p.n, p.method, p.color, p.dims, ctx.progress,
                                ctx.settings.max_chart_rows)
        ctx.progress(1.0, "done")
        return facts

    def reply(self, facts: Any) -> Result:
        return replies.vocab(facts)
