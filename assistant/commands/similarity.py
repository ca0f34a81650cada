"""Rows of the similarity family: compare, why, word, embed, static, neighbors."""

from __future__ import annotations

from assistant.commands.common import LAYER, POOL, pool_option, using
from assistant.commands.options import Option
from assistant.commands.spec import CommandSpec
from tools.similarity import compare as similarity
from tools.similarity import embed as embed_tool
from tools.similarity import neighbors, static, words
from tools.similarity import why as why_tool

SIMILARITY: list[CommandSpec] = [
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
]
