"""The corpus family's questions of a loaded corpus: search, clusters, duplicates, outliers (the ``corpus`` command
itself, which loads, lists and picks corpora, is in :mod:`assistant.commands.corpus`)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from assistant.commands.base import Command, Context, Invocation, Meaning, Texts
from assistant.commands.corpus import CORPUS_HELP, _corpus
from assistant.commands.options import param
from assistant.commands.registry import register
from assistant.commands.slots import ROW_ID, Slots
from assistant.maps import rows_among
from tools.core.errors import UserError
from tools.core.results import Result
from tools.core.text import code
from tools.corpus import clusters, duplicates, outliers, replies, search
from tools.corpus.folder import Corpus

ORDER = 65  # (after `corpus`, whose module's name comes first)

#: Where a question says its texts are ("in my file", "from my corpus"): not part of a search query.
YOURS = re.compile(r"\b(?:in|from|among|across|of)\s+(?:my|our|the)\s+(?:own\s+)?(?:file|files|corpus|corpora|data|"
                   r"dataset|texts|documents|reviews|csv)\b", re.I)
#: What an unquoted query says before its subject ("the ones about", "texts similar to", "top 5 hits for").
ABOUT = re.compile(r"^.*?\b(?:about|mentioning|mention|regarding|similar to|related to|concerning|"
                   r"(?:hits|results|matches|texts|rows|entries|documents)\s+for|"
                   r"(?:look|search|hunt|check|through)\w*\s+(?:\w+\s+){0,4}?for)\s+", re.I)
#: Words that ask for the texts nearest something ("the neighbours of #17", "what is near #12").
NEAR = re.compile(r"\b(?:neighbou?rs?|nearest|closest|near)\b", re.I)
#: What naming one corpus row beside such a word adds to `search` (`neighbors` takes words, never a row).
ROW_BONUS = 0.2
#: What a text with a blank to fill costs `search`.
BLANK_PENALTY = 0.15
#: The help of the ``--in`` option of the commands that can work on some rows only.
IN_HELP = "only these rows: `selection` (the lasso on a `map`) or row ids and ranges like 3,8,10-20"


def _model_for(ctx: Context, corpus: Corpus) -> Any:
    """The corpus's own model: queries are encoded as its rows were, whatever the conversation's model is."""
    return ctx.model(corpus.manifest.model)


@register
class Search(Command[Any, Any]):
    name, aliases = "search", ("find",)
    summary = "the texts of your corpus closest to a query (or to row #N), best first, with their scores and metadata"
    texts = Texts(1, 1, "a query", "QUERY")
    examples = ("search late delivery", "search refund not received --k 20 --corpus reviews")
    rows_as_texts = False  # `search #17`: that row's neighbours, by its stored vector
    phrasings = (
        "find texts about \"A\" in my file",
        "search my corpus for \"A\"",
        "which of my texts talk about \"A\"?",
        "find reviews about \"A\"",
        "look up \"A\" in my data",
        "semantic search in my documents for \"A\"",
        "find the reviews about X",  # (an unquoted query as X: a phrasing's words are never a query's)
        "which texts mention X?",
        "show me the texts talking about X",
        "the 5 nearest texts to \"A\"",
        "top 20 matches for \"A\"",
        "the rows closest to \"A\" in my corpus",
        "find the ones about \"A\"",
    )

    @dataclass(frozen=True)
    class Params:
        k: int = param("how many texts", 10, minimum=1, maximum=search.MAX_K, metavar="K")
        corpus: str | None = param(CORPUS_HELP, metavar="NAME")
        among: str | None = param(IN_HELP, metavar="selection|IDS", name="in")

    def compute(self, ctx: Context, texts: list[str], p: Params) -> Any:
        corpus = _corpus(ctx, p.corpus)
        among = rows_among(ctx.maps, ctx.session.page_key, corpus, p.among, ctx.session.key)
        return search.search(_model_for(ctx, corpus), corpus, texts, p.k, among)

    def fit(self, slots: Slots) -> float:
        """A text with a blank to fill is for `mask`, not a query; the texts nearest one corpus row ("what are the
        neighbours of #17?") are this command's."""
        if slots.has_mask:
            return -BLANK_PENALTY
        return ROW_BONUS if len(ROW_ID.findall(slots.question)) == 1 and NEAR.search(slots.question) else 0.0

    def handed_on(self, question: str, before: Invocation) -> str | None:
        """"How come #17 is the top hit?": `why` of the query and that row; "how close is #5?": `compare`; "what are
        the neighbours of #17?": `search` of that row."""
        if ROW_ID.search(question) and re.search(r"\b(?:why|how\s+come|what\s+made|explain)\b", question, re.I):
            return "why"
        if len(ROW_ID.findall(question)) == 1 and NEAR.search(question):
            return "search"
        similar = re.search(r"\b(?:how\s+(?:similar|close)|similarity|cosine)\b", question, re.I)
        return "compare" if similar and len(ROW_ID.findall(question)) == 1 else None

    def question_texts(self, slots: Slots, table: Mapping[str, Command[Any, Any]]) -> list[str] | None:
        """The query without where it is looked for ("... in my file"); a row named alone ("the texts nearest #17")
        is the query."""
        rows = ROW_ID.findall(slots.question)
        if not slots.quoted and len(rows) == 1:
            return rows
        query = YOURS.sub(" ", slots.texts[0] if slots.quoted and slots.texts else slots.payload)
        if not slots.quoted:  # "the complaints about late delivery": what they are about
            query = ABOUT.sub("", query, count=1)
        query = re.sub(r"\s+", " ", query).strip(" ?.!")
        return [query] if query else []

    def reply(self, facts: Any) -> Result:
        return replies.search(facts)


@register
class Clusters(Command[Any, Any]):
    name, aliases = "clusters", ("topics", "cluster")
    terms = ("k-means", "kmeans", "c-tf-idf", r"topic[- ]?model(?:s|l?ing)?",
             r"(?:group|split|divide|sort|bucket|organi[sz]e)\w*(?:\s+\S+){0,5}?\s+(?:into\s+)?(?:\S+\s+)?"
             r"(?:topics|clusters|themes)\b")  # ("group the whole corpus into 7 topics")
    meanings = (
        Meaning("c-TF-IDF", "TF-IDF with each group's texts joined into one document (Grootendorst 2022, BERTopic): "
                "a word's share of the group's words times log(1 + mean words per group / its count in all "
                "groups), so a group's top words are frequent in it and rare elsewhere."),
    )
    summary = ("groups of your texts (k-means on their vectors) with sizes, c-TF-IDF label words, three "
               "representative texts each, and every row's group")
    examples = ("clusters", "clusters --k 8", "clusters --group largest", "clusters --corpus reviews --seed 3")
    phrasings = (
        "group my texts into topics",
        "cluster my corpus",
        "what topics are in my data?",
        "find the main themes of my file",
        "split my texts into groups",
        "which kinds of texts are in my dataset?",
    )

    @dataclass(frozen=True)
    class Params:
        k: str = param("how many groups, or auto (chosen by silhouette on a sample)", "auto", metavar="N|auto")
        seed: int = param("seed of k-means and of the silhouette sample", 0, minimum=0, maximum=2**32 - 1)
        corpus: str | None = param(CORPUS_HELP, metavar="NAME")
        among: str | None = param(IN_HELP, metavar="selection|IDS", name="in")
        group: str | None = param("list one cluster's rows, closest to its centre first: its number, largest or "
                                  "smallest", metavar="N|largest|smallest", view=True)

    def compute(self, ctx: Context, texts: list[str], p: Params) -> Any:
        k: int | str = p.k.strip().lower()
        if k != "auto":
            if not str(k).isdigit() or not 2 <= int(k) <= clusters.MAX_K:
                raise UserError(f"--k takes auto or a whole number from 2 to {clusters.MAX_K}; got {code(p.k, 20)}.")
            k = int(k)
        corpus = _corpus(ctx, p.corpus)
        among = rows_among(ctx.maps, ctx.session.page_key, corpus, p.among, ctx.session.key)
        return clusters.clusters(corpus, k, p.seed, among, p.group)

    def reply(self, facts: Any) -> Result:
        return replies.clusters(facts)


@register
class Duplicates(Command[Any, Any]):
    name, aliases = "duplicates", ("dupes", "near-duplicates")
    terms = ("duplicates?", "near-duplicates?", "dupes", "dedupe", "basically the same", "copies")
    meanings = (
        Meaning("near-duplicate", "two rows whose vectors' cosine reaches the threshold (0.95 by default), each row "
                "compared with its nearest neighbours; pairs that share rows are joined into groups."),
    )
    summary = "groups of near-duplicate texts in your corpus, with their scores, and every pair found"
    examples = ("duplicates", "duplicates --threshold 0.9")
    phrasings = (
        "are there duplicates in my data?",
        "find near-duplicate texts in my corpus",
        "which of my texts are repeated?",
        "show me texts that say the same thing in my file",
        "detect duplicated rows in my dataset",
        "dedupe my texts",
        "which pairs of my texts are paraphrases of each other?",
        "which of my texts are near copies of each other?",
    )

    @dataclass(frozen=True)
    class Params:
        threshold: float = param("cosine from which two texts count as near-duplicates", 0.95, minimum=0.5,
                                 maximum=1.0, metavar="T")
        corpus: str | None = param(CORPUS_HELP, metavar="NAME")

    def compute(self, ctx: Context, texts: list[str], p: Params) -> Any:
        return duplicates.duplicates(_corpus(ctx, p.corpus), p.threshold)

    def reply(self, facts: Any) -> Result:
        return replies.duplicates(facts)


@register
class Outliers(Command[Any, Any]):
    name, aliases = "outliers", ("unusual", "odd-ones-out")
    terms = ("outliers?", "odd ones? out", "anomal(?:y|ies|ous)")
    meanings = (
        Meaning("outlier", "a row whose mean cosine distance (1 - cosine) to its k nearest other rows is among the "
                "largest of the corpus."),
    )
    summary = "the texts of your corpus farthest from their nearest neighbours"
    examples = ("outliers", "outliers --top 10 --k 5")
    phrasings = (
        "which of my texts are unusual?",
        "find the odd ones out in my data",
        "show outliers in my corpus",
        "which texts don't fit with the rest of my file?",
        "anomalies in my dataset",
        "the most unusual texts in my corpus",
        "which texts are farthest from all the others?",
        "the strangest entries in my data",
    )

    @dataclass(frozen=True)
    class Params:
        top: int = param("how many texts", 20, minimum=1, maximum=1000, metavar="N")
        k: int = param("neighbours each text is measured against", 10, minimum=1, maximum=100, metavar="K")
        corpus: str | None = param(CORPUS_HELP, metavar="NAME")

    def compute(self, ctx: Context, texts: list[str], p: Params) -> Any:
        return outliers.outliers(_corpus(ctx, p.corpus), p.top, p.k)

    def handed_on(self, question: str, before: Invocation) -> str | None:
        """"Why is #17 an outlier?", "what are the neighbours of #17?": `search` of that row (its nearest texts, each
        with its cosine, show how far it stands from them)."""
        asks = re.search(r"\b(?:why|how\s+come|what\s+makes|explain|neighbou?rs?|nearest|closest|near|similar|like)\b",
                         question, re.I)
        return "search" if asks and len(ROW_ID.findall(question)) == 1 else None

    def reply(self, facts: Any) -> Result:
        return replies.outliers(facts)
