"""The corpus family: a person's own texts. corpus (load, list, use, info, drop, stop), search, clusters,
duplicates, outliers."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

from assistant import corpora
from assistant.commands.base import Command, Context, Invocation, Texts
from assistant.commands.options import param
from assistant.commands.registry import register
from assistant.commands.slots import ROW_ID, Slots
from assistant.maps import rows_among
from tools.benchmark.files import resolve_path
from tools.core.errors import UserError
from tools.core.results import Result
from tools.core.text import code
from tools.corpus import clusters, duplicates, outliers, replies, search
from tools.corpus.encode import engine_named, load_corpus
from tools.corpus.engines.base import EngineKind
from tools.corpus.folder import Corpus
from tools.corpus.read import FORMATS
from tools.encoding.pooling import Pooling

ORDER = 65
#: Where a question says its texts are ("in my file", "from my corpus"): not part of a search query.
YOURS = re.compile(r"\b(?:in|from|among|across|of)\s+(?:my|our|the)\s+(?:own\s+)?(?:file|files|corpus|corpora|data|"
                   r"dataset|texts|documents|reviews|csv)\b", re.I)
#: What an unquoted query says before its subject ("the ones about", "texts similar to", "top 5 hits for").
ABOUT = re.compile(r"^.*?\b(?:about|mentioning|mention|regarding|similar to|related to|concerning|"
                   r"(?:hits|results|matches|texts|rows|entries|documents)\s+for|"
                   r"(?:look|search|hunt|check|through)\w*\s+(?:\w+\s+){0,4}?for)\s+", re.I)
#: What a text with a blank to fill costs `search`.
BLANK_PENALTY = 0.15
#: How long `corpus load` follows its job on the page before answering that it goes on: this share of the time
#: limit, and at least a second less than the limit.
FOLLOW_SHARE = 0.8


class Action(str, Enum):
    """What ``corpus`` does with its first word."""

    LIST = "list"
    LOAD = "load"
    USE = "use"
    INFO = "info"
    DROP = "drop"
    STOP = "stop"


#: The words that ask ``corpus`` for an action other than the list, the first that matches wins.
ACTION_WORDS = {
    Action.DROP: re.compile(r"\b(?:delete|drop|remove|forget|discard|erase|get rid of)\b", re.I),
    Action.STOP: re.compile(r"\b(?:stop|cancel|abort|halt|pause)\b", re.I),
    Action.USE: re.compile(r"\b(?:switch|use|select|choose|change|activate|work (?:on|with)|go to|"
                           r"make (?:\S+ ){1,2}?(?:the )?(?:active|current)|"
                           r"make \S+ the one (?:i'?m|i am|we'?re) using)\b",
                           re.I),
    Action.INFO: re.compile(r"\b(?:info|information|details?|how far|progress|status|how many (?:rows|texts)|columns?|"
                            r"what'?s in|(?:is|are) (?:it|they) (?:done|ready|finished)|"
                            r"describe|size|encoded yet|done yet|finished|encoding|going|refused|tell me about)\b",
                            re.I),
}


#: Words that ask to load a file, and what such a question with a file name adds to ``corpus``'s score.
LOADING = re.compile(r"\b(?:load|import|upload|open|read|ingest|encode|index|here(?:'s| is) (?:the|my) file)\b", re.I)
LOAD_BONUS = 0.3


def _file_named(slots: Slots) -> str | None:
    """The file of a corpus format a question names (quoted or not: a quoted name is taken whole, spaces and all),
    if any."""
    suffixes = "|".join(re.escape(s) for s in FORMATS)
    quoted = [t.strip() for t in slots.texts] if slots.quoted else []
    if whole := next((t for t in quoted if t.lower().endswith(tuple(FORMATS))), None):
        return whole  # ("load 'my reviews.csv' as a corpus")
    named = re.search(rf"[\w./~-]+(?:{suffixes})\b", " ".join([*slots.texts, slots.rest]) if slots.quoted
                      else slots.rest, re.I)
    return named.group(0) if named else None


def _corpus(ctx: Context, named: str | None) -> Corpus:
    """The corpus a command works on; it becomes the one in use, so `#12` in the next line is a row of the table
    this command shows."""
    corpus = corpora.in_use(ctx.settings, ctx.session.key, ctx.session.corpus, named)
    ctx.session.corpus = corpus.name
    return corpus


def _model_for(ctx: Context, corpus: Corpus) -> Any:
    """The corpus's own model: queries are encoded as its rows were, whatever the conversation's model is."""
    return ctx.model(corpus.manifest.model)


CORPUS_HELP = "the corpus to use (default: the one chosen with `corpus use`, or the only one)"
IN_HELP = "only these rows: `selection` (the lasso on a `map`) or row ids and ranges like 3,8,10-20"


@register
class CorpusCommand(Command[Any, Result]):
    name, aliases = "corpus", ("corpora", "dataset")
    followed = False
    summary = ("your own texts: `corpus load FILE` (CSV, TSV, JSONL, Parquet, TXT) encodes them once, in the "
               "background, resumable; `corpus` lists them; `use`, `info`, `drop`, `stop`")
    texts = Texts(0, 1, "an action: list, load FILE, use NAME, info [NAME], drop NAME or stop [NAME]",
                  "[list | load FILE | use NAME | info [NAME] | drop NAME | stop [NAME]]",
                  actions=tuple(action.value for action in Action))
    examples = ("corpus", "corpus load reviews.csv --name reviews", "corpus use reviews", "corpus info")
    phrasings = (
        "load my file of texts",
        "which corpora do I have?",
        "list my datasets",
        "upload my own data",
        "how far is the encoding of my corpus?",
        "switch to my other corpus",
        "delete my corpus",
        "tell me about my corpus",
        "how many rows were refused when my file was loaded?",
        "is it done encoding yet?",
    )

    @dataclass(frozen=True)
    class Params:
        name: str | None = param("the name to give a loaded corpus (default: the file's name)", metavar="NAME")
        column: str | None = param("the text column (default: the string column with the longest texts)",
                                   metavar="COLUMN")
        pool: str | None = param("sentence pooling of the corpus (default: the model's own recipe, else mean)",
                                 choices=(Pooling.SBERT.value, Pooling.MEAN.value))
        corpus: str | None = param(CORPUS_HELP, metavar="NAME")
        engine: str = param("who encodes a loaded corpus: local (this process) or ray (a Ray cluster: a local one "
                            "started for the job, or --address)", EngineKind.LOCAL.value, choices=EngineKind)
        address: str | None = param("the running Ray cluster `--engine ray` uses: ray://HOST:10001 or auto "
                                    "(command line only)", metavar="ADDR")

    def fit(self, slots: Slots) -> float:
        """A question that asks to load a file of a corpus format ("import tickets.jsonl and call it tickets")."""
        return LOAD_BONUS if LOADING.search(slots.rest) and _file_named(slots) else 0.0

    def question_texts(self, slots: Slots, table: Mapping[str, Command[Any, Any]]) -> list[str] | None:
        """A file the question names is loaded ("load reviews.csv as a corpus"); else the action its words ask
        for (``drop``, ``stop``, ``use``, ``info``; the name comes with the options), or the list."""
        named = _file_named(slots)
        if named:
            return [f"load {named}"]
        action = next((action.value for action, words in ACTION_WORDS.items() if words.search(slots.rest)), "list")
        return [] if action == Action.LIST.value else [action]  # the list is `corpus` alone

    def question_options(self, texts: list[str], options: dict[str, str]) -> tuple[list[str], dict[str, str]]:
        """The corpus a question names goes with the action that takes it ("delete the reviews corpus": ``corpus
        drop reviews``); a name alone asks about that corpus."""
        action = texts[0] if texts else Action.LIST.value
        if action == Action.LOAD.value or action.startswith(f"{Action.LOAD.value} "):
            return texts, options
        rest = dict(options)
        name = rest.pop("corpus", None) or rest.pop("name", None)
        if name is None:  # "use" without a name: the list to choose from
            return ([Action.LIST.value] if action == Action.USE.value else texts), options
        return [f"{Action.INFO.value if action == Action.LIST.value else action} {name}"], rest

    def compute(self, ctx: Context, texts: list[str], p: Params) -> Result:
        word, _, rest = (texts[0].strip() if texts else "list").partition(" ")
        action = Action(word.lower())  # (the parser refused any other word)
        rest = rest.strip()
        if len(rest) > 1 and rest[0] == rest[-1] and rest[0] in "\"'":  # `corpus load "my reviews.csv"`
            rest = rest[1:-1]
        settings, key = ctx.settings, ctx.session.key
        if action is Action.LIST:
            listed = [c for s in corpora.stores(settings, key) for c in s.list().corpora]
            own = corpora.own_store(settings, key).list()
            return replies.listing(type(own)(tuple(listed), own.bytes_on_disk, own.disk_limit_bytes))
        if action is Action.LOAD:
            return self._load(ctx, rest, p)
        if action is Action.USE:
            corpus = corpora.open_corpus(settings, key, rest or p.corpus or "")
            ctx.session.corpus = corpus.name
            result = replies.info(corpus.info())
            return Result(result.command, f"This conversation now uses corpus **{corpus.name}**. {result.text}",
                          result.tables, result.charts, result.warnings, result.model, settings=result.settings,
                          artifacts=result.artifacts)
        if action is Action.DROP:
            if not rest:
                raise UserError("Name the corpus to drop: `corpus drop NAME` (`corpus` lists them).")
            store = corpora.own_store(settings, key)
            gone = store.drop(rest)
            if ctx.session.corpus == gone.name:
                ctx.session.corpus = ""
            return replies.dropped(gone)
        corpus = _corpus(ctx, rest or p.corpus)
        if action is Action.STOP:
            stopped = ctx.jobs.stop(corpus.key)
            note = ("Encoding stops after the chunk in flight; `corpus load` resumes it from there."
                    if stopped else "Nothing is being encoded for it now.")
            result = replies.info(corpus.info())
            return Result(result.command, f"{note} {result.text}", result.tables, result.charts, result.warnings,
                          result.model, settings=result.settings, artifacts=result.artifacts)
        job = ctx.jobs.running(corpus.key)
        result = replies.info(corpus.info())
        if job is not None:
            return Result(result.command, f"{result.text} Encoding now: {job.message} ({job.fraction:.0%}).",
                          result.tables, result.charts, result.warnings, result.model, settings=result.settings,
                          artifacts=result.artifacts)
        return result

    def _load(self, ctx: Context, raw: str, p: Params) -> Result:
        if not raw:
            raise UserError("Name the file to load: `corpus load reviews.csv` (CSV, TSV, JSONL, Parquet or TXT).")
        if p.address and not ctx.access.local_files:
            raise UserError("Only the command line may name a Ray cluster: drop --address here (`--engine ray` "
                            "alone encodes on a local Ray started for the job).")
        path = _readable(ctx, raw)
        engine = engine_named(p.engine, p.address)  # refuses at once when Ray is not installed
        lm = ctx.model()
        store = corpora.own_store(ctx.settings, ctx.session.key)
        settings = ctx.settings

        def work(progress: Any) -> Any:
            return load_corpus(store, path, lm, settings, column=p.column, name=p.name, pool=p.pool,
                               engine=engine, progress=progress, shown_name=Path(raw).name)

        job = ctx.jobs.start(f"{store.root}:{path}:{lm.name}:{p.column}:{p.pool}", p.name or Path(raw).stem, work)
        limit = ctx.settings.time_limit_s
        follow = None if not ctx.background or not limit else max(0.0, min(limit * FOLLOW_SHARE, limit - 1.0))
        if not corpora.wait(job, follow, ctx.progress):
            return Result("corpus", f"Encoding **{job.name}** goes on in the background: {job.message} "
                          f"({job.fraction:.0%}). Keep working meanwhile; `corpus info --corpus {job.name}` shows "
                          "how far it got, and every corpus command works on it once it is done.",
                          settings={"corpus": job.name, "progress": round(job.fraction, 3)})
        if job.error is not None:
            raise job.error
        read, report = job.result
        ctx.session.corpus = report.info.name
        return replies.loaded(read.report, report)


def _readable(ctx: Context, raw: str) -> Path:
    """The file ``raw`` names, as this face may read it: any file of the user's on the command line; the data
    folders and this conversation's uploads on the web."""
    local = ctx.access.local_file(raw)
    if local is not None:
        return local
    if ctx.access.local_files:
        raise ctx.access.missing(raw)
    return resolve_path(raw, ctx.settings.data_dir_paths, getattr(ctx.session, "uploads", ()))


@register
class Search(Command[Any, Any]):
    name, aliases = "search", ("find",)
    summary = "the texts of your corpus closest to a query, best first, with their scores and metadata"
    texts = Texts(1, 1, "a query", "QUERY")
    examples = ("search late delivery", "search refund not received --k 20 --corpus reviews")
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
        """A text with a blank to fill is for `mask`, not a query."""
        return -BLANK_PENALTY if slots.has_mask else 0.0

    def handed_on(self, question: str, before: Invocation) -> str | None:
        """"How come #17 is the top hit?": `why` of the query and that row; "how close is #5?": `compare`."""
        if ROW_ID.search(question) and re.search(r"\b(?:why|how\s+come|what\s+made|explain)\b", question, re.I):
            return "why"
        similar = re.search(r"\b(?:how\s+(?:similar|close)|similarity|cosine)\b", question, re.I)
        return "compare" if similar and len(ROW_ID.findall(question)) == 1 else None

    def question_texts(self, slots: Slots, table: Mapping[str, Command[Any, Any]]) -> list[str] | None:
        """The query without where it is looked for ("... in my file")."""
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
    summary = ("groups of your texts (k-means on their vectors) with sizes, c-TF-IDF label words, three "
               "representative texts each, and every row's group")
    examples = ("clusters", "clusters --k 8", "clusters --corpus reviews --seed 3")
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

    def compute(self, ctx: Context, texts: list[str], p: Params) -> Any:
        k: int | str = p.k.strip().lower()
        if k != "auto":
            if not str(k).isdigit() or not 2 <= int(k) <= clusters.MAX_K:
                raise UserError(f"--k takes auto or a whole number from 2 to {clusters.MAX_K}; got {code(p.k, 20)}.")
            k = int(k)
        corpus = _corpus(ctx, p.corpus)
        among = rows_among(ctx.maps, ctx.session.page_key, corpus, p.among, ctx.session.key)
        return clusters.clusters(corpus, k, p.seed, among)

    def reply(self, facts: Any) -> Result:
        return replies.clusters(facts)


@register
class Duplicates(Command[Any, Any]):
    name, aliases = "duplicates", ("dupes", "near-duplicates")
    terms = ("duplicates?", "near-duplicates?", "dupes", "dedupe", "basically the same", "copies")
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

    def reply(self, facts: Any) -> Result:
        return replies.outliers(facts)
