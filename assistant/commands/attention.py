"""Rows of the attention family: attend, selfattn, syntax."""

from __future__ import annotations

from assistant.commands.common import using
from assistant.commands.options import Option
from assistant.commands.spec import CommandSpec
from tools.attention import attend as attention
from tools.attention import selfattn, syntax

ATTENTION: list[CommandSpec] = [
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
]
