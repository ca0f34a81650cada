"""The attention family: attend, selfattn, syntax."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from assistant.commands.base import Command, Context, Invocation, Texts
from assistant.commands.options import param
from assistant.commands.registry import register
from tools.attention import attend, replies, selfattn, syntax
from tools.attention.facts import AttentionMaps
from tools.core.results import Chart, Result

ORDER = 40
#: The attention the model itself computes, asked for after its copy rebuilt by hand ("what does the model's real
#: attention look like at layer 2?", "show me the model's own attention maps").
_THE_MODELS_OWN = re.compile(r"\b(?:the\s+model['’]?s|its)\s+(?:own|real|actual|original|trained|true)\s+attention\b"
                             r"|\b(?:real|actual)\s+attention\b", re.I)


@register
class Attend(Command[Any, AttentionMaps]):
    name, aliases = "attend", ("attention", "heads")
    terms = (r"attends?\s+to", r"attending\s+to", r"attended\s+to")
    summary = ("attention maps (one head, one layer's heads, or every layer x head) and what each head does: "
               "attends to itself, the previous / next token, [CLS], [SEP]")
    texts = Texts(1, 2, "a text, or a pair `a | b`", "text [| pair]")
    examples = ("attend The cat sat on the mat",
                "attend The cat sat on the mat --layer 2 --head 5",
                "attend The cat sat on the mat --layer 1",
                "attend Where is the bank? | By the river.")
    phrasings = (
        'show the attention of "A"',
        'which words does each token attend to in "A"?',
        'draw the attention heatmap of "A"',
        'which heads look at the previous word in "A"?',
        'what do the attention heads do in "A"?',
        'visualize attention weights for "A"',
        'what does head 3 of layer 2 look at in "A"?',
        'the raw per-head attention weights of "A"',
        'a bertviz-style head view of "A"',
    )

    @dataclass(frozen=True)
    class Params:
        layer: int | None = param("attention layer, numbered from 1 (default: every layer)", metavar="L")
        head: int | None = param("head within a layer, numbered from 1 (default: every head)", metavar="H")

    def compute(self, ctx: Context, texts: list[str], p: Params) -> AttentionMaps:
        return attend.attention_maps(ctx.model(), texts, p.layer, p.head)

    def reply(self, facts: AttentionMaps) -> Result:
        return replies.attend(facts)

    def differ(self, a: AttentionMaps, b: AttentionMaps, names: tuple[str, str]) -> str:
        return replies.attend_difference(a, b, names)

    def versus_charts(self, a: AttentionMaps, b: AttentionMaps, names: tuple[str, str]) -> list[Chart] | None:
        return replies.attend_versus_charts(a, b, names)


@register
class SelfAttention(Command[Any, Any]):
    name, aliases = "selfattn", ("self-attention", "scratch")
    terms = ("from[- ]scratch", "by[- ]hand", "recompute", "rebuil[dt]", "hand[- ]rebuil[dt]", "re-derive",
             "manual(?:ly)?")
    summary = ("self-attention rebuilt by hand from a layer's own query/key/value weights, shown equal "
               "to the model's; --causal mask; --heads N toy with random projections")
    texts = Texts(1, 1, "one text", "text")
    examples = ("selfattn The cat sat on the mat",
                "selfattn The police is chasing a criminal on the run. --layer 1 --causal",
                "selfattn The cat sat on the mat --heads 8")
    phrasings = (
        'compute self-attention by hand for "A"',
        'rebuild attention from the query key and value weights for "A"',
        'show the causal mask of self-attention on "A"',
        'how is self-attention calculated from scratch for "A"?',
        'multi-head attention with random projections on "A"',
        'do the query, key, value matrices reproduce the attention of "A"?',
        'derive the attention scores by hand from the weights for "A"',
        'the softmax of Q times K transposed for "A"',
    )

    @dataclass(frozen=True)
    class Params:
        layer: int | None = param("attention layer to rebuild, numbered from 1 (it reads hidden state L-1; "
                                  "default: the last layer)", metavar="L")
        head: int | None = param("head drawn in the chart, numbered from 1 (default 1)", metavar="H")
        causal: bool = param("also apply the lower-triangular (decoder) mask", False)
        heads: int | None = param("a toy with this many heads and random projections (must divide the "
                                  "hidden size)")

    def compute(self, ctx: Context, texts: list[str], p: Params) -> Any:
        return selfattn.rebuilt_attention(ctx.model(), texts, p.layer, p.head, p.causal, p.heads)

    def reply(self, facts: Any) -> Result:
        return replies.selfattn(facts)

    def handed_on(self, question: str, before: Invocation) -> str | None:
        """"The model's real attention", "its own attention maps": the model's attention itself, `attend`."""
        return "attend" if _THE_MODELS_OWN.search(question) else None


@register
class Syntax(Command[Any, Any]):
    name, aliases = "syntax", ("dependency", "deps")
    every_layer = "it scores every head of every layer at once, a row per head in its table"
    terms = ("dependency parse", "parse tree", "spacy",
             r"heads?\b[\w\s',-]*?\b(?:line\s+up|align|agree|match)\w*\s+with\s+(?:the\s+)?(?:syntax|syntactic|grammar)",
             r"heads?\b[\w\s',-]*?\b(?:track|follow|capture|reflect|mirror)\w*\s+(?:the\s+)?(?:syntax|syntactic|grammar"
             r"|dependenc)")
    summary = "the dependency parse (spaCy) and each head's agreement with syntactic arcs and tree distance"
    texts = Texts(1, 1, "one English text", "text")
    examples = ("syntax The cat sat on the mat",
                "syntax The police is chasing a criminal on the run.")
    phrasings = (
        'parse the dependencies of "A"',
        'do attention heads follow syntax in "A"?',
        'show the dependency tree of "A"',
        'which heads agree with the grammatical structure of "A"?',
        'does attention track syntactic distance in "A"?',
        'what is the parse of "A"?',
        'spaCy dependency parse of "A" next to its word pieces',
    )

    def compute(self, ctx: Context, texts: list[str], params: Any) -> Any:
        return syntax.syntax_agreement(ctx.model(), texts)

    def reply(self, facts: Any) -> Result:
        return replies.syntax(facts)
