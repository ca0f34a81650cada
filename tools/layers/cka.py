"""Linear CKA (Kornblith et al. 2019) between every pair of hidden states, of one model or of two.

CKA(X, Y) = HSIC(K, L) / sqrt(HSIC(K, K) · HSIC(L, L)) with linear kernels K = XXᵀ, L = YYᵀ over
the same n examples. The biased estimator is HSIC = tr(KHLH) / (n-1)² (H centres); the debiased
one is the unbiased HSIC of Song et al. (2012), as in Kornblith's reference code. Both are
computed in feature space from centred features, never forming an n x n matrix.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tools.core import cancel
from tools.core.config import Settings
from tools.core.errors import UserError
from tools.core.timing import answer
from tools.encoding.encode import Encoded
from tools.layers import replies
from tools.layers.facts import CkaEstimator, CkaUnit, LayerSimilarity
from tools.layers.inputs import (
    Pool,
    Progress,
    check_sentences,
    encode_chunks,
    pick_sentences,
    report,
    truncation_note,
)
from tools.models.hub import LoadedModel, as_model

DEFAULT_SENTENCES = 100
#: The fewest sentences CKA reads.
MIN_SENTENCES = 2
#: The most token examples CKA compares (a fixed sample of the tokens beyond that).
MAX_EXAMPLES = 20_000
#: Debiased HSIC when examples are fewer than this many times the hidden size (AUTO).
DEBIAS_BELOW = 10


def _hsic_terms(x: np.ndarray) -> tuple[np.ndarray, float]:
    """Each centred row's squared norm (the diagonal of K) and their sum (tr K)."""
    rows = np.einsum("ij,ij->i", x, x)
    return rows, float(rows.sum())


def _debiased(dot: float, rows_x: np.ndarray, rows_y: np.ndarray, sq_x: float, sq_y: float, n: int) -> float:
    """n(n-3)·HSIC_unbiased for centred features, from ||XᵀY||², the diagonals and the traces.

    With centred features K1 = 0, so Song et al.'s terms become: tr(K̃L̃) = ||XᵀY||² - k·l,
    1ᵀK̃1 = -tr K, 1ᵀK̃L̃1 = k·l (K̃: K with a zero diagonal k).
    """
    return dot - n / (n - 2.0) * float(rows_x @ rows_y) + sq_x * sq_y / ((n - 1.0) * (n - 2.0))


def linear_cka(x: np.ndarray, y: np.ndarray, debiased: bool = False) -> float:
    """Linear CKA between (n, d_x) and (n, d_y) representations of the same n examples."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.shape[0] != y.shape[0]:
        raise ValueError("CKA compares two representations of the same examples")
    n = x.shape[0]
    x = x - x.mean(axis=0, keepdims=True)
    y = y - y.mean(axis=0, keepdims=True)
    xy = float(np.linalg.norm(x.T @ y) ** 2)
    xx = float(np.linalg.norm(x.T @ x) ** 2)
    yy = float(np.linalg.norm(y.T @ y) ** 2)
    if debiased:
        if n < 4:
            raise ValueError("the debiased estimator needs at least 4 examples")
        rows_x, sq_x = _hsic_terms(x)
        rows_y, sq_y = _hsic_terms(y)
        xy = _debiased(xy, rows_x, rows_y, sq_x, sq_y, n)
        xx = _debiased(xx, rows_x, rows_x, sq_x, sq_x, n)
        yy = _debiased(yy, rows_y, rows_y, sq_y, sq_y, n)
    denominator = np.sqrt(xx * yy) if xx > 0 and yy > 0 else 0.0
    return float(xy / denominator) if denominator > 0 else float("nan")


def resolve_estimator(asked: CkaEstimator, examples: int, hidden: int) -> CkaEstimator:
    """AUTO: debiased when examples are fewer than :data:`DEBIAS_BELOW` times the hidden size."""
    if asked is not CkaEstimator.AUTO:
        return asked
    return CkaEstimator.DEBIASED if examples < DEBIAS_BELOW * hidden else CkaEstimator.BIASED


def _prepared(x: np.ndarray, debiased: bool) -> tuple[np.ndarray, np.ndarray, float, float]:
    """Centred features, their row norms² and trace, and HSIC(K, K) (unnormalised) of one representation."""
    c = np.asarray(x, dtype=np.float64)
    c = c - c.mean(axis=0, keepdims=True)
    rows, sq = _hsic_terms(c)
    self_term = float(np.linalg.norm(c.T @ c) ** 2)
    if debiased:
        self_term = _debiased(self_term, rows, rows, sq, sq, len(c))
    return c, rows, sq, self_term


def cka_matrix(a: Sequence[np.ndarray], b: Sequence[np.ndarray], debiased: bool,
               progress: Progress | None = None, start: float = 0.0, span: float = 1.0) -> np.ndarray:
    """CKA between every representation in ``a`` (rows) and every one in ``b`` (columns); the same as
    :func:`linear_cka` on each pair, with each representation's own terms computed once."""
    pa = [_prepared(x, debiased) for x in a]
    pb = pa if b is a else [_prepared(y, debiased) for y in b]
    out = np.zeros((len(a), len(b)))
    for i, (x, rows_x, sq_x, xx) in enumerate(pa):
        cancel.check()
        report(progress, start + span * i / len(a), f"CKA row {i}")
        for j, (y, rows_y, sq_y, yy) in enumerate(pb):
            xy = float(np.linalg.norm(x.T @ y) ** 2)
            if debiased:
                xy = _debiased(xy, rows_x, rows_y, sq_x, sq_y, len(x))
            out[i, j] = xy / np.sqrt(xx * yy) if xx > 0 and yy > 0 else np.nan
    return out


def _same_pieces(a: Sequence[Encoded], b: Sequence[Encoded]) -> bool:
    return all(x.tokens == y.tokens for x, y in zip(a, b))


def token_states(encs: Sequence[Encoded]) -> np.ndarray:
    """(L+1, N, D): every text token's hidden states (special tokens left out), texts one after another."""
    rows = [e.hidden_states.numpy()[:, [i for i, s in enumerate(e.sequence_ids) if s is not None]] for e in encs]
    return np.concatenate(rows, axis=1)


def mean_states(encs: Sequence[Encoded]) -> np.ndarray:
    """(L+1, N, D): each text's mean over all its tokens, per hidden state (``--pool mean``)."""
    return np.stack([e.hidden_states.numpy().mean(axis=1) for e in encs], axis=1)


def layer_similarity(
    model: LoadedModel | str | None,
    texts: Sequence[str] = (),
    *,
    other: LoadedModel | str | None = None,
    sentences: int = DEFAULT_SENTENCES,
    seed: int = 0,
    estimator: CkaEstimator | str = CkaEstimator.AUTO,
    pool: Pool | None = None,
    settings: Settings | None = None,
    progress: Progress | None = None,
) -> LayerSimilarity:
    """Linear CKA (Kornblith et al. 2019) between every pair of hidden states, or against another model's.

    Args:
        model: a loaded model or its name.
        texts: the sentences (default: ``sentences`` drawn from ``pool``).
        other: compare with this model's hidden states (``--with``); when its tokenizer splits the
            sentences differently, each sentence's mean-pooled vector is one example instead of each token.
        sentences: how many sentences to draw, 2 to 1000.
        seed: the seed of the sentence sample (and of a token sample past 20,000 tokens).
        estimator: ``auto`` (debiased when examples are fewer than ten times the hidden size), ``biased``
            or ``debiased``.
        pool: the sentences to draw from (default: STS-B's training split).
        settings: where STS-B is read from (default: the environment's ``ASSISTANT_DATA_DIR``).
        progress: told the share of the work done and what runs.

    Returns:
        The facts; ``cka`` (the same call) answers with a Result:
        The CKA matrix as a heatmap and a table (also as CSV), and which estimator and examples were used.
    """
    lm = as_model(model)
    asked = CkaEstimator.parse(estimator, "--estimator")
    n = check_sentences(sentences, MIN_SENTENCES, settings)
    used, source = pick_sentences(texts, n, seed, settings, "cka", pool)
    if len(used) < MIN_SENTENCES:
        raise UserError(f"`cka` needs at least {MIN_SENTENCES} sentences.")
    second = as_model(other) if other is not None else None
    span = 0.3 if second is None else 0.15
    encs = encode_chunks(lm, used, progress, 0.0, span)
    warnings = truncation_note(lm, encs)
    other_encs = encode_chunks(second, used, progress, span, span, f"encoding with {second.name}") if second else encs
    if second is not None:
        warnings += truncation_note(second, other_encs)
    if second is None or _same_pieces(encs, other_encs):
        unit = CkaUnit.TOKENS
        a = token_states(encs)
        b = a if second is None else token_states(other_encs)
        if a.shape[1] > MAX_EXAMPLES:
            keep = np.sort(np.random.default_rng(seed).choice(a.shape[1], MAX_EXAMPLES, replace=False))
            warnings.append(f"The sentences hold {a.shape[1]:,} tokens; CKA compares a fixed sample of "
                            f"{MAX_EXAMPLES:,} of them (seed {seed}).")
            a, b = a[:, keep], (a[:, keep] if b is a else b[:, keep])
    else:
        unit = CkaUnit.SENTENCES
        a, b = mean_states(encs), mean_states(other_encs)
    examples = a.shape[1]
    if examples < 4:
        raise UserError(f"CKA needs at least 4 examples; these sentences give {examples}. Give more sentences.")
    hidden = max(a.shape[2], b.shape[2])
    chosen = resolve_estimator(asked, examples, hidden)
    rows = list(a)
    columns = rows if second is None else list(b)
    matrix = cka_matrix(rows, columns, chosen is CkaEstimator.DEBIASED, progress, 2 * span, 1 - 2 * span)
    report(progress, 1.0, "CKA done")
    return LayerSimilarity(lm.name, second.name if second else None, matrix, chosen, asked, unit, examples,
                           (a.shape[2], b.shape[2]), source, len(used), seed, warnings)


#: The one-call tool: :func:`layer_similarity` answered as a Result by the family's formatter.
cka = answer(layer_similarity, replies.cka, "cka")
