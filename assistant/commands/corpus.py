"""The corpus family: a person's own texts. ``corpus`` (load, list, use, info, drop, stop) here; the questions
asked of a loaded corpus (search, clusters, duplicates, outliers) in :mod:`assistant.commands.corpus_analysis`."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

from assistant import corpora
from assistant.commands.base import Command, Context, Texts
from assistant.commands.options import param
from assistant.commands.registry import register
from assistant.commands.slots import Slots
from tools.benchmark.files import resolve_path
from tools.core.errors import UserError
from tools.core.results import Result
from tools.corpus import replies
from tools.corpus.encode import engine_named, load_corpus
from tools.corpus.engines.base import EngineKind
from tools.corpus.folder import Corpus
from tools.corpus.read import FORMATS
from tools.encoding.pooling import Pooling

ORDER = 65
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
    Action.INFO: re.compile(r"\b(?:info|information|details?|how far|progress|status|"
                            r"how many (?:rows|texts|documents|docs|records|entries|lines|items)|columns?|"
                            r"what'?s in|(?:is|are) (?:it|they) (?:done|ready|finished)|"
                            r"describe|size|encoded yet|done yet|finished|encoding|going|refused|tell me about)\b",
                            re.I),
}


#: Words that ask to load a file, and what such a question with a file name adds to ``corpus``'s score.
LOADING = re.compile(r"\b(?:load|import|upload|open|read|ingest|encode|index|here(?:'s| is) (?:the|my) file)\b", re.I)
LOAD_BONUS = 0.3
#: A question that asks how many rows a corpus holds ("how many rows does it have?", "how many texts did it
#: load?"): `corpus info`, by as much as a file to load adds.
_ROWS_COUNTED = re.compile(r"\bhow\s+many\s+(?:rows|texts|documents|docs|records|entries|lines|items)\s+(?:are\s+there|"
                           r"(?:does|do|did)\s+(?:it|they|(?:my|the|this|that)\s+(?:corpus|file|data(?:set)?))\s+"
                           r"(?:have|hold|contain|load|keep)|(?:are|were)\s+(?:in|loaded|kept|encoded)|"
                           r"(?:did|have)\s+(?:you|i|we)\s+(?:load|loaded|keep|kept|encode|encoded))\b", re.I)


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


CORPUS_HELP = "the corpus to use (default: the one chosen with `corpus use`, or the only one)"


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
        """A question that asks to load a file of a corpus format ("import tickets.jsonl and call it tickets"), or
        how many rows a corpus has."""
        loads = LOADING.search(slots.rest) and _file_named(slots)
        return LOAD_BONUS if loads or (not slots.quoted and _ROWS_COUNTED.search(slots.rest)) else 0.0

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
