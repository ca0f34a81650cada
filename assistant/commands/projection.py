"""Rows of the projection family: project, vocab."""

from __future__ import annotations

from assistant.commands.common import LAYER, pool_option, using
from assistant.commands.options import Option
from assistant.commands.spec import CommandSpec
from tools import projection
from tools.projection import vocab as vocab_tool

PROJECTION: list[CommandSpec] = [
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
]
