"""Which command a question asks for, decided by an embedding model's full-precision vectors and the words.

Routing always reads full-precision vectors (the conversation's model, or the embedded
default when that model has no sentence pooling), never an int8 path: int8 kernels round
differently on different CPUs, and routing margins are a few hundredths of a cosine, so the
same question must be read the same way on every machine. Each row's phrasings are embedded
once per model (the router keeps them, keyed by the model) and a question goes to the row whose best
phrasing is most similar,
found with sentence-transformers' ``util`` (unit vectors, ``dot_score``: the cosine). Beside that nearest
phrasing, a logistic regression (scikit-learn) trained on the same phrasings when the index is built, on their
vectors and their words (TF-IDF of words and word pairs), adds its probability of each row: one nearest
phrasing decides by a single example, while the classifier weighs every phrasing of a row and the words that
set rows apart ("GloVe", "heads", "layer"). The router does not guess when the best phrasing is far from the
question; when the runner-up is close the caller offers it beside the best.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
import torch
from scipy.sparse import csr_matrix, hstack
from scipy.special import softmax

import assistant.understanding.kept_index as kept_index
import assistant.understanding.spoken as spoken
from assistant.commands.base import Command
from assistant.commands.slots import ASKING, MODEL, PLACEHOLDER, Slots, quoted_spans, read
from assistant.understanding.examples import examples
from assistant.understanding.making import Making, Progress, made
from assistant.understanding.spans import says_term
from assistant.understanding.words import OPENING, RUN_ON
from tools.encoding.pooling import Pooling, bulk_vectors
from tools.models.hub import LoadedModel, ModelHub
from tools.models.names import file_name, split_fast
from tools.models.threads import threads_for

if TYPE_CHECKING:  # scikit-learn is imported when an index is made or read, not by a process that only runs commands
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression

#: What the router sees in place of a model's name.
MODEL_PLACEHOLDER = "MODEL"
#: Below this cosine the best phrasing is too far from the question to act on it.
MIN_SCORE = 0.3
#: Below this score (cosine, the command's own bonuses and half the classifier's probability) the best row is not
#: acted on either: with every question people asked as an example, an off-topic question finds one that shares a
#: word ("what is the weather in Paris?" scored 0.48 by "nearest neighbors of paris ...", "what's the capital of
#: France?" 0.45, "tell me a joke" 0.44); the lowest right reading of the held-out and fresh sets' questions asked
#: without a conversation before them scored 0.88. (0.6 lost three of fresh12's questions, seen only as its rate.)
MIN_TOTAL = 0.5
#: The same bar for a question that opens a conversation (nothing earlier it could point at), or that neither points
#: back nor carries texts of its own later in one (``understand``): "what is the weather
#: in Paris tomorrow?" scored 0.53 by the asked "neighbours of paris pls", then 0.551 by "closest words to paris"
#: (0.56 changed no reading of any committed set). For every question, 0.55 lost ten follow-ups of the learnt sets
#: ("what drives it", "ok use that one"), which lean on the conversation.
MIN_OPENING = 0.56
#: The best row must beat the runner-up by this much to be clear; closer than that, the best one runs and the
#: runner-up is offered beside it (asking instead lost more questions than it saved on every question set).
MIN_MARGIN = 0.015
#: What quoted texts a command cannot take cost it (a command's own bonuses are its ``fit``).
FIT_PENALTY = 0.08
#: What each option a command declares and the question says in words adds to that command's score ("with 12
#: neighbours" speaks for `neighbors`, "at layer 6" for `attend` over `rollout`), for the best few rows.
OPTION_FIT = 0.03
OPTION_ROWS = 4
#: What a question that says one of a command's ``terms`` adds to that command's score.
TERM_BONUS = 0.2
#: What a question that starts with a command's own name, or with one of its hyphenated names that no sentence
#: starts with otherwise ("word-in-context for light: ..."), adds to that command's score ("search the selection
#: for refunds", "compare 'A' and 'B' with every pooling"; not "find ...", "explain ...": common verbs).
FIRST_WORD_BONUS = 0.1
#: What the classifier's probability of a row adds to that row's score (a probability of 1 counts as half a
#: cosine), and its inverse regularisation. Chosen on the tuning, held-out and fresh sets;
#: ``questions_fresh2.jsonl`` was written before and never used to choose them.
CLASSIFIER_WEIGHT = 0.5
CLASSIFIER_C = 10.0
#: What a phrasing loses against a question that quotes texts when it holds another number of them ("is 'w' in 'A' the
#: same as in 'B'?" for a question with two quoted sentences): the shape is part of what it asks.
SHAPE_PENALTY = 0.05
#: The model that routes when the conversation's model has no sentence-transformers pooling.
FALLBACK_MODEL = "minilm"


@dataclass(frozen=True)
class Ranked:
    """One row's score for a question: the cosine of its most similar phrasing (``similarity``), with what the
    question's texts, its options in words and the classifier add to it (``score``)."""

    spec: Command
    score: float
    phrasing: str
    similarity: float
    #: The command's own bonus for the question's shape (``Command.fit``).
    fit: float = 0.0


@dataclass(frozen=True)
class Routing:
    """The rows ranked for one question, best first, and whether the best one is clear."""

    ranked: list[Ranked]
    model: str
    #: The question's words that spoke most for the best row in the classifier, strongest first.
    words: tuple[str, ...] = ()

    @property
    def best(self) -> Ranked:
        return self.ranked[0]

    @property
    def margin(self) -> float:
        return self.ranked[0].score - self.ranked[1].score if len(self.ranked) > 1 else 1.0

    @property
    def found(self) -> bool:
        """Whether the best row's phrasing is near enough to the question to act on, or its shape says it is that
        command's (a command's name asked about for `help`, a file to load for `corpus`)."""
        return self.best.similarity + max(0.0, self.best.fit) >= MIN_SCORE and self.best.score >= MIN_TOTAL

    @property
    def clear(self) -> bool:
        """Whether the best row beats the runner-up plainly."""
        return self.margin >= MIN_MARGIN


class Said(NamedTuple):
    """A question's TF-IDF row: the vocabulary columns of the words it says, in column order, and their weights."""

    columns: np.ndarray
    weights: np.ndarray


@dataclass(frozen=True)
class _Index:
    """The phrasings of a table and the questions people asked for its rows (:mod:`.examples`), embedded by one
    model: (rows, the row of each, vectors), and the classifier trained on them."""

    specs: tuple[Command, ...]
    owner: tuple[int, ...]
    phrasings: tuple[str, ...]
    vectors: torch.Tensor
    words: TfidfVectorizer
    terms: tuple[str, ...]  # the words' feature names, in column order
    classifier: LogisticRegression

    def __post_init__(self) -> None:  # (N, D) with each column contiguous: a question's cosines are one product of
        # its vector with the (D, N) matrix ``vectors.t()``, 0.5-1.3 ms faster a question than ``torch.mv`` on the
        # rows (its median ``understand``, 40 questions x 5 alternated, AMD EPYC 25/1), the same cosines within 5e-7
        object.__setattr__(self, "vectors", self.vectors.t().contiguous().t())

    @staticmethod
    def build(specs: tuple[Command, ...], lm: LoadedModel, folder: Path | None = None,
              making: Making | None = None) -> _Index:
        """Embed and learn the rows' phrasings and asked questions, or read them from ``folder``, where an index of
        the same texts, rows, model files and libraries was kept (it is kept there once built); ``making`` is told
        how far it has got."""
        making = making or Making()
        table = {name: s for s in specs for name in (s.name, *s.aliases)}
        row_of = {s.name: i for i, s in enumerate(specs)}
        said = [(p, i) for i, s in enumerate(specs) for p in s.phrasings]
        said += [(e.question, row_of[table[e.command].name]) for e in examples(table)]
        framed = [(frame(p), i) for p, i in said]
        made = [str(CLASSIFIER_C), *(f"{specs[i].name}\t{p}" for p, i in framed)]
        # a phrasing said again for the same row (a quarter of the asked questions, once framed) is searched once:
        # its cosine is the same; the classifier still learns each time it was said
        kinds = dict.fromkeys(framed)
        phrasings, owner = tuple(p for p, _ in kinds), tuple(i for _, i in kinds)
        path = folder / f"{file_name(lm.name)}-{kept_index.key(lm, made)}.pickle" if folder else None
        kept = kept_index.read(path) if path is not None else None
        if kept is not None:
            return _Index(specs, owner, phrasings, *kept)
        vectors = kept_index.embedded(kept_index.vectors_path(folder, lm) if folder else None, phrasings,
                                      functools.partial(embed, lm, progress=making.embedded))
        from sklearn.feature_extraction.text import TfidfVectorizer
        from sklearn.linear_model import LogisticRegression

        words = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True).fit([p for p, _ in framed])
        classifier = LogisticRegression(C=CLASSIFIER_C, max_iter=3000)
        position = {kind: n for n, kind in enumerate(kinds)}
        every = [position[kind] for kind in framed]
        features = _features(vectors.numpy()[every], words.transform([p for p, _ in framed]))
        making.fit_begins()
        with threads_for(0):  # (float32: float64's readings but 1 in 7,836, 5.2 s against 8.4 s, Xeon 6/207)
            classifier.fit(features.astype(np.float32), [i for _, i in framed])
        terms = tuple(str(t) for t in words.get_feature_names_out())
        if path is not None:
            kept_index.write(path, (vectors, words, terms, classifier))
        return _Index(specs, owner, phrasings, vectors, words, terms, classifier)

    @functools.cached_property
    def placeholders(self) -> np.ndarray:
        """How many quoted texts each example holds (its ``"X"`` placeholders)."""
        return np.asarray([p.count(PLACEHOLDER) for p in self.phrasings])

    def shaped(self, cosines: np.ndarray, framed: str) -> np.ndarray:
        """The cosines less :data:`SHAPE_PENALTY` for each example that quotes texts when the question does too, but
        another number of them."""
        quoted = framed.count(PLACEHOLDER)
        if not quoted:
            return cosines
        return cosines - SHAPE_PENALTY * ((self.placeholders > 0) & (self.placeholders != quoted))

    @functools.cached_property
    def rows(self) -> np.ndarray:
        """:attr:`owner` as an array (each question groups the examples' cosines by it)."""
        return np.asarray(self.owner)

    @functools.cached_property
    def _groups(self) -> tuple[np.ndarray, np.ndarray]:
        """The examples in row order (each row's in their own order) and where each row's start."""
        order = np.argsort(self.rows, kind="stable")
        return order, np.r_[0, np.flatnonzero(np.diff(self.rows[order])) + 1]

    def nearest(self, cosines: np.ndarray) -> np.ndarray:
        """For each row, in row order, the example most similar to a question (``cosines``: one per example; the
        earliest of equals)."""
        order, starts = self._groups
        grouped = cosines[order]
        top = np.maximum.reduceat(grouped, starts)
        hits = np.flatnonzero(grouped == np.repeat(top, np.diff(np.r_[starts, len(grouped)])))
        return order[hits[np.searchsorted(hits, starts)]]

    def deciding_words(self, row: int, said: Said, most: int = 3) -> tuple[str, ...]:
        """The words (or word pairs) of a question's TF-IDF row ``said`` that raised ``row``'s probability most,
        strongest first."""
        n = self.vectors.shape[1]
        pull = said.weights * self.classifier.coef_[row, n + said.columns]
        pulling = np.flatnonzero(pull > 0)  # (the question's own words: a handful of the vocabulary)
        telling = [said.columns[i] for i in pulling[np.argsort(-pull[pulling], kind="stable")]
                   if not set(self.terms[said.columns[i]].split()) <= _UNTELLING]
        return tuple(self.terms[i] for i in telling[:most])

    def probabilities(self, vector: torch.Tensor, said: Said) -> np.ndarray:
        """The classifier's probability of each row (in ``specs`` order) for one question: its vector and its
        TF-IDF row ``said``. The classifier's own ``predict_proba`` (the softmax of its multinomial logits) from its
        weights: scikit-learn's checks of one row cost twenty times the product."""
        coef, n = self.classifier.coef_, vector.shape[0]
        logits = coef[:, :n] @ vector.numpy() + coef[:, n + said.columns] @ said.weights + self.classifier.intercept_
        return softmax(logits)

    def said(self, text: str) -> Said:
        """``text``'s TF-IDF row, as ``words.transform`` makes it (sublinear counts of the vocabulary's words and
        word pairs, times their idf, unit length), from the vectorizer's own analyzer, vocabulary and idf: the
        transform's checks of one text cost five times the sum, and building and multiplying it as a one-row sparse
        matrix 1.1 ms a question against these arrays' 0.3 ms (cProfile, 40 questions x 5, Xeon 6/207)."""
        vocabulary = self.words.vocabulary_
        counts = Counter(t for t in self._analyse(text) if t in vocabulary)
        columns = np.fromiter((vocabulary[t] for t in counts), dtype=np.int64, count=len(counts))
        weights = (1 + np.log(np.fromiter(counts.values(), dtype=np.float64, count=len(counts)))) \
            * self.words.idf_[columns]
        norm = np.sqrt(weights @ weights)
        order = np.argsort(columns)  # (in column order, as the sparse row keeps them)
        return Said(columns[order], (weights / norm if norm else weights)[order])

    @functools.cached_property
    def _analyse(self) -> Callable[[str], list[str]]:
        return self.words.build_analyzer()


#: Words that say nothing about a command on their own ("are", "and", the placeholders): never named as deciding.
_UNTELLING = frozenset(ASKING | {"x", "model", "a", "an", "me", "my", "with", "to", "from", "by", "as", "at"})


def _features(vectors: np.ndarray, words: csr_matrix) -> csr_matrix:
    """A phrasing's or question's vector beside its words' TF-IDF weights."""
    return hstack([csr_matrix(vectors), words]).tocsr()


def routing_model(hub: ModelHub, name: str) -> LoadedModel:
    """The full-precision form of the conversation's model when it has sentence pooling, else the embedded
    default's: ``minilm:int8`` routes on ``minilm``, so a question reads the same on every CPU."""
    lm = hub.get(split_fast(name)[0])
    return lm if lm.sentence_config() is not None else hub.get(FALLBACK_MODEL)


def frame(question: str) -> str:
    """What the router compares: the question with its quoted texts replaced by ``"X"`` (without quotes, the
    texts after a colon: "compare these: a, b" -> ``compare these: "X"``) and the models it names by ``MODEL``
    ("switch to bert-base" and "switch to mpnet" ask the same)."""
    out, pos = [], 0
    for start, end, _ in quoted_spans(question):
        out += [question[pos:start], PLACEHOLDER]
        pos = end
    if not out and ": " in question:  # a colon that introduces texts, not the one in ``minilm:int8``
        return MODEL.sub(MODEL_PLACEHOLDER, question.split(": ", 1)[0].strip()) + ": " + PLACEHOLDER
    out.append(question[pos:])
    return MODEL.sub(MODEL_PLACEHOLDER, "".join(out).strip())


def embed(lm: LoadedModel, texts: Sequence[str], progress: Callable[[int, int], None] | None = None
          ) -> torch.Tensor:
    """Sentence vectors as the model's own sentence-transformers recipe makes them, unit length: pooled batch by
    batch where the passes ran, without keeping each text's states (an index's thousands of phrasings: 7,523 in
    13.8-15.0 s against 17.4-17.9 s through the commands' path on a 2-core Xeon 6/207; a question's states are not
    kept either: nothing reads them again); ``progress`` is told how many are done, of how many."""
    vectors = torch.from_numpy(bulk_vectors(lm, texts, Pooling.SBERT, progress))
    with threads_for(0):
        return torch.nn.functional.normalize(vectors, p=2, dim=-1)  # sentence-transformers' own normalize


def _index(lm: LoadedModel, specs: Sequence[Command], folder: Path | None = None,
           progress: Progress | None = None) -> _Index:
    def build(making: Making) -> _Index:
        with kept_index.making(folder):  # another process making the same index: wait, then read its file
            return _Index.build(tuple(specs), lm, folder, making)

    return made(lm, tuple((s.name, len(s.phrasings)) for s in specs), build, progress)


def prepare(lm: LoadedModel, specs: Sequence[Command], folder: Path | None = None) -> None:
    """Build (or read) the routing index of ``lm`` before the first question needs it."""
    _index(lm, [s for s in specs if s.phrasings], folder)


def route(lm: LoadedModel, question: str, specs: Sequence[Command], folder: Path | None = None,
          progress: Progress | None = None) -> Routing:
    """Rank ``specs`` (rows with phrasings) for ``question`` on the model ``lm`` (``folder``: where routing indexes
    are kept between processes; ``progress``: told how the index's making goes when the question waits for it)."""
    index = _index(lm, [s for s in specs if s.phrasings], folder, progress)
    framed = frame(question)
    queries_vectors = embed(lm, [framed])  # (with the question without its options as a second query: no better)
    with threads_for(0):  # a (1 x a few thousand) product: one thread (two wait on each other, and on the encoder's)
        raw, owner = (queries_vectors[0] @ index.vectors.t()).numpy(), index.rows  # unit vectors: the cosine
    cosines = index.shaped(raw, framed)
    slots = read(question)
    said_words = index.said(framed)
    likely = index.probabilities(queries_vectors[0], said_words)
    ranked = []
    for i in index.nearest(cosines):  # each row's nearest example, in row order (the earlier of equal scores first)
        row = int(owner[i])
        fits = fit(index.specs[row], slots)
        ranked.append(Ranked(index.specs[row], float(cosines[i]) + fits + CLASSIFIER_WEIGHT * float(likely[row]),
                             index.phrasings[i], float(raw[i]), fits))
    ranked.sort(key=lambda r: -r.score)
    said = [replace(r, score=r.score + OPTION_FIT * len(spoken.read(slots.rest, r.spec).options))
            for r in ranked[:OPTION_ROWS]]
    order = sorted(said, key=lambda r: -r.score) + ranked[OPTION_ROWS:]
    return Routing(order, lm.name, index.deciding_words(index.specs.index(order[0].spec), said_words))


def because(routing: Routing, spec: Command | None = None) -> str:
    """Why a question was read as its best row: the nearest phrasing and the words that spoke for the row; or, when
    it was read as another row ``spec`` (one that takes the previous texts it points at), that row's own nearest
    phrasing beside the best's."""
    best = routing.best
    chosen = next((r for r in routing.ranked if r.spec is spec), best)
    if chosen is not best:
        return (f"it points back at the previous texts, which {best.spec.name} (its nearest example question "
                f"\u201c{best.phrasing}\u201d, cosine {best.similarity:.2f}) does not take this way; the nearest for "
                f"{chosen.spec.name} is \u201c{chosen.phrasing}\u201d (cosine {chosen.similarity:.2f})")
    words = f"; the words that spoke most for {best.spec.name}: {', '.join(routing.words)}" if routing.words else ""
    return f"its nearest example question is \u201c{best.phrasing}\u201d (cosine {best.similarity:.2f}){words}"


def fit(spec: Command, slots: Slots) -> float:
    """How the question's texts suit the command: its own bonus for a shape it asks for (a blank asks for
    `mask`, a word then sentences for `word` / `static`, a command named for `help`, a file for `corpus`), less a
    penalty when it cannot take that many quoted texts; a bonus when it says one of the command's ``terms`` or
    starts with its name."""
    first = _first_word(slots.question)
    own = (spec.fit(slots) + (TERM_BONUS if says_term(spec.terms, slots.rest) else 0.0)
           + (FIRST_WORD_BONUS if first == spec.name or (first in spec.aliases and "-" in first) else 0.0))
    if slots.has_mask or slots.word_first or not slots.quoted:
        return own
    n = len(slots.texts)
    least, most = spec.texts.least, spec.texts.most
    if most == 0:  # quoted texts for a command that takes none ("heatmap of similarities: 'a', 'b', 'c'")
        return own - 2 * FIT_PENALTY
    if n < least or (most is not None and n > most):
        return own - FIT_PENALTY
    return own


_RUN = re.compile(RUN_ON, re.I)


@functools.lru_cache(maxsize=64)
def _first_word(question: str) -> str:
    """The question's first word past its opening ("ok, now compare a red car with a red truck"), or the command it
    asks to run ("run static on light | ..."): read once per question, not once per row."""
    opening = OPENING.sub("", question)
    if (run := _RUN.match(opening)) is not None:
        return run.group(1).lower()
    return opening.split(None, 1)[0].lower() if opening.strip() else ""
