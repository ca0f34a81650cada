"""What the layer measures share: checking sizes, picking sentences, encoding them in chunks
(cancellable, with progress) and turning word pieces into word vectors.

Sentences come from the caller (``texts``: a user's own list), or are drawn from a :class:`Pool`:
a caller's (a corpus's texts) or, by default, STS-B's training split, read from the data folders
(``ASSISTANT_DATA_DIR``) by :func:`tools.benchmark.data.load_split`, never copied into the project.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from tools.benchmark.data import Split, load_split
from tools.core import cancel
from tools.core.config import Settings
from tools.core.errors import UserError
from tools.encoding.encode import Encoded, encode
from tools.models.hub import LoadedModel

#: A callback told the share of the work done (0..1) and what is running.
Progress = Callable[[float, str], None]
#: Where sentences come from when no texts are given.
STSB_SOURCE = Split.TRAIN.value
#: The source named when the caller gave the texts.
TEXTS_SOURCE = "texts"
#: How the source of a corpus's sentences starts (``corpus reviews``).
CORPUS_SOURCE = "corpus "
#: Sentences encoded per chunk between cancellation checks and progress reports.
CHUNK = 64
#: A word for ``contextuality`` and the words it counts: letters, digits, apostrophes inside.
WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)*")


def report(progress: Progress | None, done: float, what: str) -> None:
    """Tell ``progress`` (when there is one) how far the work is."""
    if progress is not None:
        progress(min(1.0, max(0.0, float(done))), what)


def check_count(value: int, option: str, least: int, most: int) -> int:
    """An integer option from ``least`` to ``most``, or one sentence naming the range."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not least <= value <= most:
        raise UserError(f"{option} must be a whole number from {least} to {most}; got `{value}`.")
    return int(value)


def check_share(value: float, option: str, least: float, most: float) -> float:
    """A fraction option strictly between ``least`` and ``most``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not least < value < most:
        raise UserError(f"{option} must be a number between {least:g} and {most:g}; got `{value}`.")
    return float(value)


# --- sentences ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Pool:
    """Sentences a measure draws its sample from when no texts are given, and the source it names."""

    source: str
    sentences: tuple[str, ...]


def distinct(texts: Iterable[object]) -> tuple[str, ...]:
    """The texts with their spaces collapsed, blank and repeated ones left out, in order."""
    return tuple(dict.fromkeys(" ".join(str(s).split()) for s in texts if str(s).strip()))


def corpus_pool(name: str, texts: Iterable[object]) -> Pool:
    """A corpus's distinct texts as the pool a measure draws from."""
    return Pool(CORPUS_SOURCE + name, distinct(texts))


@lru_cache(maxsize=4)
def _stsb_sentences(settings: Settings) -> tuple[str, ...]:
    frame = load_split(Split.TRAIN, settings).frame
    return distinct(s for row in zip(frame["sentence1"], frame["sentence2"]) for s in row)


def stsb_sentences(settings: Settings | None) -> tuple[str, ...]:
    """STS-B's distinct training sentences, in file order (read once per data folder)."""
    return _stsb_sentences(settings or Settings.from_env())


def pool_or_stsb(pool: Pool | None, settings: Settings | None) -> Pool:
    """``pool``, or STS-B's training sentences."""
    return pool or Pool(STSB_SOURCE, stsb_sentences(settings))


#: The setting that bounds how many sentences a layer measure reads (named in refusals).
SENTENCES_SETTING = "ASSISTANT_LAYERS_MAX_SENTENCES"


def most_sentences(settings: Settings | None) -> int:
    """How many sentences a layer measure may read here (``ASSISTANT_LAYERS_MAX_SENTENCES``)."""
    return (settings or Settings.from_env()).layers_max_sentences


def check_sentences(value: int, least: int, settings: Settings | None) -> int:
    """``--sentences`` from ``least`` to this server's limit, or one sentence naming the range and the setting."""
    most = most_sentences(settings)
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not least <= value <= most:
        raise UserError(f"--sentences must be a whole number from {least} to {most} ({SENTENCES_SETTING}); "
                        f"got `{value}`.")
    return int(value)


def given_texts(texts: Sequence[str], most: int, verb: str) -> list[str]:
    """The caller's texts, blank ones left out, at most ``most``."""
    kept = [" ".join(str(t).split()) for t in texts if str(t).strip()]
    if len(kept) > most:
        raise UserError(f"`{verb}` reads at most {most:,} sentences ({SENTENCES_SETTING}); got {len(kept):,}. "
                        "Pass fewer texts.")
    return kept


def sample(pool: Sequence[str], n: int, seed: int) -> list[str]:
    """``n`` sentences of ``pool`` drawn with ``seed`` (all when it has fewer), in the pool's order."""
    if n >= len(pool):
        return list(pool)
    picked = np.sort(np.random.default_rng(seed).choice(len(pool), n, replace=False))
    return [pool[i] for i in picked]


def pick_sentences(texts: Sequence[str], n: int, seed: int, settings: Settings | None,
                   verb: str, pool: Pool | None = None) -> tuple[list[str], str]:
    """The caller's texts when given, else ``n`` sentences of ``pool`` (default STS-B train) drawn with ``seed``;
    and the source."""
    if texts:
        kept = given_texts(texts, most_sentences(settings), verb)
        if kept:
            return kept, TEXTS_SOURCE
    drawn = pool_or_stsb(pool, settings)
    return sample(drawn.sentences, n, seed), drawn.source


# --- encoding ----------------------------------------------------------------------------------

def encode_chunks(lm: LoadedModel, texts: Sequence[str], progress: Progress | None = None,
                  start: float = 0.0, span: float = 1.0, what: str = "encoding") -> list[Encoded]:
    """Every hidden state of every text, encoded ``CHUNK`` texts at a time (cancellable; progress told)."""
    out: list[Encoded] = []
    for i in range(0, len(texts), CHUNK):
        cancel.check()
        report(progress, start + span * i / max(1, len(texts)), f"{what} {i}/{len(texts)} sentences")
        out.extend(encode(lm, list(texts[i:i + CHUNK])))
    report(progress, start + span, f"{what}: done")
    return out


def truncation_note(lm: LoadedModel, encs: Sequence[Encoded]) -> list[str]:
    """One sentence when some texts were cut at the model's limit."""
    cut = sum(1 for e in encs if e.dropped)
    if not cut:
        return []
    return [f"{cut} text{'s were' if cut > 1 else ' was'} longer than {lm.name}'s {lm.max_tokens} tokens and "
            "cut there; words past the cut are left out."]


# --- words and word pieces ---------------------------------------------------------------------

def words_of(text: str) -> list[tuple[int, int, str]]:
    """The words of ``text`` as (start, end, lower-case form)."""
    return [(m.start(), m.end(), m.group(0).lower()) for m in WORD.finditer(text)]


def pieces_of(spans: Sequence[tuple[int, int]], offsets: Sequence[tuple[int, int]],
              sequence_ids: Sequence[int | None]) -> list[list[int]]:
    """For each character span, the positions of the word pieces that overlap it ([] when cut off)."""
    found: list[list[int]] = [[] for _ in spans]
    starts = np.array([s for s, _ in spans])
    ends = np.array([e for _, e in spans])
    for position, ((a, b), seq) in enumerate(zip(offsets, sequence_ids)):
        if seq is None or b <= a:
            continue
        hit = np.nonzero((starts < b) & (ends > a))[0]
        if hit.size:
            found[int(hit[0])].append(position)
    return found


def word_vectors(enc: Encoded, pieces: Sequence[Sequence[int]]) -> np.ndarray:
    """(L+1, W, D): each word's vector per hidden state, the mean of its word pieces' vectors."""
    hidden = enc.hidden_states.numpy()
    if not pieces:
        return np.zeros((hidden.shape[0], 0, hidden.shape[2]), dtype=np.float32)
    return np.stack([hidden[:, list(p)].mean(axis=1) for p in pieces], axis=1)
