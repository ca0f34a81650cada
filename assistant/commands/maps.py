"""The corpus map: `map` puts every row of a corpus on one WebGL scatter the page draws from binary coordinates."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from assistant.commands.base import Command, Context
from assistant.commands.corpus import CORPUS_HELP, _corpus
from assistant.commands.options import param
from assistant.commands.registry import register
from assistant.sharing.mapfile import offline_artifact
from tools.core.results import Result
from tools.corpus import maps, replies
from tools.corpus.facts import CorpusMap
from tools.corpus.layout import Method

ORDER = 66


@register
class Map(Command[Any, CorpusMap]):
    name, aliases = "map", ("atlas",)
    summary = ("every row of your corpus on one map (PCA or UMAP, fitted once and kept): zoom, pan, hover a point "
               "for its text, lasso points to list them and to search or cluster only them (`--in selection`)")
    examples = ("map", "map --color length")
    on_texts = "project"
    terms = (r"(?:show|put|plot|draw|see|place|lay)\s+(?:[\w-]+\s+){0,3}?(?:on|onto)\s+(?:a|the|one)\s+"
             r"(?:2d\s+|3d\s+)?map",)
    phrasings = (
        "show my whole corpus on a map",
        "plot all my texts in 2D",
        "draw a map of my data",
        "visualize my dataset as a scatter plot",
        "where do my texts lie?",
        "colour the map of my corpus by a column",
        "plot every text of my corpus",
        "a UMAP layout of my corpus",
    )

    @dataclass(frozen=True)
    class Params:
        method: str = param("how the map is laid out (umap needs the optional umap-learn)", Method.PCA.value,
                            choices=Method)
        color: str = param("what colours the points: cluster (the last `clusters`, else a quick k-means), length, "
                           "or a metadata column", "cluster", metavar="cluster|length|COLUMN")
        corpus: str | None = param(CORPUS_HELP, metavar="NAME")

    def compute(self, ctx: Context, texts: list[str], p: Params) -> CorpusMap:
        corpus = _corpus(ctx, p.corpus)
        facts = maps.corpus_map(corpus, Method(p.method), p.color.strip() or "cluster", ctx.progress)
        return dataclasses.replace(facts, map_id=ctx.maps.issue(ctx.session.page_key, corpus, facts, ctx.session.key))

    def reply(self, facts: CorpusMap) -> Result:
        result = replies.corpus_map(facts)
        return dataclasses.replace(result, artifacts=[*result.artifacts, offline_artifact(facts)])
