"""How contextual each hidden state is: Ethayarajh's (2019) self-similarity, intra-sentence
similarity and maximum explainable variance, each beside its anisotropy baseline.

A word is a run of letters and digits (lower-cased); its vector is the mean of its word pieces'
vectors; a word counts once per sentence (its first occurrence there), so its occurrences are
its different contexts. Special tokens are never words.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

import numpy as np

from tools.core import cancel
from tools.core.config import Settings
from tools.core.errors import UserError
from tools.core.timing import answer
from tools.layers import replies
from tools.layers.facts import Contextuality
from tools.layers.inputs import (
    WORD,
    Pool,
    Progress,
    check_count,
    check_sentences,
    encode_chunks,
    given_texts,
    most_sentences,
    pieces_of,
    pool_or_stsb,
    report,
    sample,
    truncation_note,
    word_vectors,
    words_of,
)
from tools.models.hub import LoadedModel, as_model

DEFAULT_SENTENCES = 200
#: The fewest sentences a word can be compared across.
MIN_SENTENCES = 2
#: The most words one command measures (given or picked).
MAX_WORDS = 30
#: The fewest sentences a picked word must occur in (Ethayarajh used 5).
MIN_CONTEXTS = 5
#: Random occurrence pairs behind the anisotropy baseline, by default and at most.
DEFAULT_PAIRS = 1000
MAX_PAIRS = 20_000


# --- the measures, on plain arrays -------------------------------------------------------------

def _unit(vectors: np.ndarray) -> np.ndarray:
    v = np.asarray(vectors, dtype=np.float64)
    return v / np.maximum(np.linalg.norm(v, axis=-1, keepdims=True), 1e-12)


def self_similarity(occurrences: np.ndarray) -> float:
    """Mean cosine over the pairs of distinct rows of an (n, D) occurrence matrix (n >= 2)."""
    u = _unit(occurrences)
    n = len(u)
    total = u.sum(axis=0)
    return float((total @ total - (u * u).sum()) / (n * (n - 1)))


def max_explainable_variance(occurrences: np.ndarray) -> float:
    """σ_1² / Σ σ_i² of the (n, D) occurrence matrix (not centred, as in the paper)."""
    s = np.linalg.svd(np.asarray(occurrences, dtype=np.float64), compute_uv=False)
    return float(s[0] ** 2 / np.sum(s ** 2))


def intra_sentence_similarity(words: np.ndarray) -> float:
    """Mean cosine between each (W, D) word vector and the sentence's mean vector."""
    w = np.asarray(words, dtype=np.float64)
    return float((_unit(w) @ _unit(w.mean(axis=0))).mean())


# --- sentences and occurrences -----------------------------------------------------------------

def _normalise_words(words: Sequence[str]) -> list[str]:
    out = []
    for w in words:
        w = str(w).strip().lower()
        if not WORD.fullmatch(w):
            raise UserError(f"{w!r} is not one word; give words of letters or digits, like `contextuality bank "
                            "play`.")
        if w not in out:
            out.append(w)
    if len(out) > MAX_WORDS:
        raise UserError(f"`contextuality` measures at most {MAX_WORDS} words at once; got {len(out)}.")
    return out


def sentences_with(pool: Sequence[str], words: Sequence[str], n: int, seed: int) -> list[str]:
    """Up to ``n`` sentences of ``pool``: for each word an equal share of the sentences holding it, drawn with
    ``seed``, in the pool's order."""
    quota = max(1, n // max(1, len(words)))
    picked: set[int] = set()
    for k, word in enumerate(words):
        pattern = re.compile(rf"(?<![^\W_]){re.escape(word)}(?![^\W_])", re.IGNORECASE)
        holding = [i for i, s in enumerate(pool) if pattern.search(s)]
        rng = np.random.default_rng([seed, k])
        picked.update(holding if len(holding) <= quota else rng.choice(holding, quota, replace=False).tolist())
    return [pool[i] for i in sorted(picked)]


def frequent_words(texts: Sequence[str], least: int, most: int) -> list[str]:
    """The ``most`` words found in the most sentences (at least ``least``), ties alphabetical."""
    counts = Counter(w for t in texts for w in {w for _, _, w in words_of(t)})
    ranked = sorted((w for w, c in counts.items() if c >= least), key=lambda w: (-counts[w], w))
    return ranked[:most]


def contextuality_measures(
    model: LoadedModel | str | None,
    words: Sequence[str] = (),
    *,
    texts: Sequence[str] = (),
    sentences: int = DEFAULT_SENTENCES,
    seed: int = 0,
    pairs: int = DEFAULT_PAIRS,
    pool: Pool | None = None,
    settings: Settings | None = None,
    progress: Progress | None = None,
) -> Contextuality:
    """How contextual each hidden state is (Ethayarajh 2019): self-similarity, intra-sentence similarity and
    maximum explainable variance, beside and adjusted for the anisotropy baseline.

    Args:
        model: a loaded model or its name.
        words: the words to measure (default: up to 30 words found in at least 5 sentences).
        texts: the sentences to read (default: drawn from ``pool``; with words, those holding them).
        sentences: how many sentences to draw, 2 to 1000.
        seed: the seed of the sentence sample, the random pairs and the random matrices of the baselines.
        pairs: random occurrence pairs behind the anisotropy baseline, 10 to 20000.
        pool: the sentences to draw from (default: STS-B's training split).
        settings: where STS-B is read from (default: the environment's ``ASSISTANT_DATA_DIR``).
        progress: told the share of the work done and what runs.

    Returns:
        The facts; ``contextuality`` (the same call) answers with a Result:
        The three measures per hidden state with their baselines and adjusted values, a chart of the
        curves, per-word self-similarity and MEV, and the most context-specific words; tables also as CSV.
    """
    lm = as_model(model)
    n = check_sentences(sentences, MIN_SENTENCES, settings)
    n_pairs = check_count(pairs, "--pairs", 10, MAX_PAIRS)
    asked = _normalise_words(words)
    if texts:
        used, source = given_texts(texts, most_sentences(settings), "contextuality"), "texts"
    else:
        drawn = pool_or_stsb(pool, settings)
        used = sentences_with(drawn.sentences, asked, n, seed) if asked else sample(drawn.sentences, n, seed)
        source = drawn.source
    targets = asked or frequent_words(used, MIN_CONTEXTS, MAX_WORDS)
    if not targets:
        raise UserError(f"No word occurs in {MIN_CONTEXTS} or more of the {len(used)} sentences; give more "
                        "sentences or name the words.")
    encs = encode_chunks(lm, used, progress, 0.0, 0.6)
    warnings = truncation_note(lm, encs)
    index = {w: k for k, w in enumerate(targets)}
    occurrences: list[list[np.ndarray]] = [[] for _ in targets]
    every: list[np.ndarray] = []  # every word occurrence, (L+1, D) each
    every_sentence: list[int] = []
    intra = []
    for s, enc in enumerate(encs):
        spans = words_of(enc.text)
        pieces = pieces_of([(a, b) for a, b, _ in spans], enc.offsets, enc.sequence_ids)
        kept = [k for k, p in enumerate(pieces) if p]
        if not kept:
            continue
        vectors = word_vectors(enc, [pieces[k] for k in kept])  # (L+1, W, D) float32
        if len(kept) >= 2:
            intra.append([intra_sentence_similarity(vectors[layer]) for layer in range(len(vectors))])
        seen: set[str] = set()
        for j, k in enumerate(kept):
            word = spans[k][2]
            every.append(vectors[:, j])
            every_sentence.append(s)
            if word in index and word not in seen:
                seen.add(word)
                occurrences[index[word]].append(vectors[:, j])
    report(progress, 0.7, "measuring")
    found = [k for k, occ in enumerate(occurrences) if len(occ) >= 2]
    missing = [targets[k] for k in range(len(targets)) if k not in found]
    if missing:
        warnings.append(f"Left out (fewer than 2 sentences hold them): {', '.join(missing)}.")
    if not found:
        raise UserError("None of the words occurs in two or more sentences, so none has a self-similarity; "
                        "give more sentences or other words.")
    layers = lm.num_layers + 1
    self_sim = np.zeros((len(found), layers))
    mev = np.zeros((len(found), layers))
    for row, k in enumerate(found):
        cancel.check()
        occ = np.stack(occurrences[k])  # (n, L+1, D)
        for layer in range(layers):
            self_sim[row, layer] = self_similarity(occ[:, layer])
            mev[row, layer] = max_explainable_variance(occ[:, layer])
    everything = np.stack(every)  # (N, L+1, D)
    owners = np.asarray(every_sentence)
    rng = np.random.default_rng(seed)
    baseline = random_pair_baseline(everything, owners, n_pairs, rng)
    mev_base = random_mev_baseline(everything, [len(occurrences[k]) for k in found], rng)
    report(progress, 1.0, "contextuality done")
    if not intra:
        intra = [[np.nan] * layers]
    return Contextuality(lm.name, lm.num_layers, source, len(used), tuple(targets[k] for k in found),
                         tuple(len(occurrences[k]) for k in found), not asked, self_sim, mev,
                         np.asarray(intra).mean(axis=0), baseline, mev_base, n_pairs, len(every), seed, warnings)


def random_pair_baseline(pool: np.ndarray, owners: np.ndarray, pairs: int, rng: np.random.Generator) -> np.ndarray:
    """(L+1,) mean cosine between ``pairs`` random occurrences from different sentences, drawn with ``rng``."""
    if len(np.unique(owners)) < 2:
        return np.full(pool.shape[1], np.nan)
    first: list[int] = []
    second: list[int] = []
    while len(first) < pairs:
        a = rng.integers(0, len(pool), pairs)
        b = rng.integers(0, len(pool), pairs)
        ok = owners[a] != owners[b]
        first.extend(a[ok].tolist())
        second.extend(b[ok].tolist())
    a, b = np.asarray(first[:pairs]), np.asarray(second[:pairs])
    return (_unit(pool[a]) * _unit(pool[b])).sum(axis=-1).mean(axis=0)


def random_mev_baseline(pool: np.ndarray, sizes: Sequence[int], rng: np.random.Generator) -> np.ndarray:
    """(L+1,) the mean MEV of random occurrence matrices, one of each size in ``sizes``, drawn with ``rng``."""
    out = np.zeros(pool.shape[1])
    for size in sizes:
        rows = rng.choice(len(pool), min(size, len(pool)), replace=False)
        out += [max_explainable_variance(pool[rows, layer]) for layer in range(pool.shape[1])]
    return out / len(sizes)


#: The one-call tool: :func:`contextuality_measures` answered as a Result by the family's formatter.
contextuality = answer(contextuality_measures, replies.contextuality, "contextuality")
