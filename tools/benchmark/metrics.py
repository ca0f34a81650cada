"""The numbers of an STS evaluation: pair cosines, shuffled-pair baselines, Spearman and
Pearson x 100, the paraphrase decision at a cosine threshold, and the pairs where the
model and the annotators disagree most.
"""

from __future__ import annotations

import warnings as pywarnings

import numpy as np
import pandas as pd

#: Edge cases shown per direction.
EDGE_CASES = 5
def pair_cosines(vectors: np.ndarray, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Cosine of each pair (``vectors[left[i]]``, ``vectors[right[i]]``); 0 where a vector is all zeros."""
    a = vectors[left].astype(np.float64)
    b = vectors[right].astype(np.float64)
    denom = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
    dots = np.einsum("ij,ij->i", a, b)
    return np.where(denom > 0, dots / np.where(denom > 0, denom, 1.0), 0.0)


def derangement(n: int, seed: int) -> np.ndarray:
    """A reproducible permutation with no fixed point: pair ``i`` meets the second sentence of pair ``p[i]``."""
    order = np.random.default_rng(seed).permutation(n)
    partner = np.empty(n, dtype=int)
    partner[order] = np.roll(order, -1)
    return partner


# --- metrics -----------------------------------------------------------------------------------------

def correlations(cosine: np.ndarray, gold: np.ndarray) -> dict[str, float]:
    """Spearman and Pearson correlation of cosine with gold, x 100 as papers report them (NaN if constant)."""
    from scipy import stats  # loaded when a benchmark first runs, not at start-up

    with pywarnings.catch_warnings():
        pywarnings.simplefilter("ignore")  # a constant input gives NaN, which the table shows as empty
        spearman = stats.spearmanr(cosine, gold).statistic
        pearson = stats.pearsonr(cosine, gold).statistic
    return {"spearman": 100 * float(spearman), "pearson": 100 * float(pearson)}


def threshold_metrics(cosine: np.ndarray, gold: np.ndarray, cut: float) -> dict[str, float]:
    """Call a pair a paraphrase when cosine >= t, against gold >= ``cut``, at the t with the best F1.

    Returns the threshold and the accuracy, precision, recall and F1 there (all NaN
    when every pair is on the same side of ``cut``).
    """
    from sklearn.metrics import accuracy_score, precision_recall_curve, precision_recall_fscore_support

    truth = gold >= cut
    if truth.all() or not truth.any():
        return dict.fromkeys(("threshold", "accuracy", "precision", "recall", "f1"), float("nan"))
    precision, recall, thresholds = precision_recall_curve(truth, cosine)
    with np.errstate(divide="ignore", invalid="ignore"):
        f1 = np.where(precision + recall > 0, 2 * precision * recall / (precision + recall), 0.0)[:-1]
    best = float(thresholds[int(np.argmax(f1))])
    predicted = cosine >= best
    p, r, f, _ = precision_recall_fscore_support(truth, predicted, average="binary", zero_division=0)
    return {"threshold": best, "accuracy": float(accuracy_score(truth, predicted)),
            "precision": float(p), "recall": float(r), "f1": float(f)}


def edge_cases(frame: pd.DataFrame, cosine: np.ndarray, k: int = EDGE_CASES) -> pd.DataFrame:
    """The ``k`` pairs the model ranks most above, and most below, where the gold score ranks them.

    Ranks are percentiles (0 = least similar, 1 = most), so ``rank gap`` = cosine
    rank - gold rank runs from -1 to 1.
    """
    from scipy import stats

    n = len(frame)
    gold_rank = (stats.rankdata(frame["score"]) - 1) / max(n - 1, 1)
    cos_rank = (stats.rankdata(cosine) - 1) / max(n - 1, 1)
    table = pd.DataFrame({
        "genre": frame["genre"], "sentence1": frame["sentence1"], "sentence2": frame["sentence2"],
        "gold": frame["score"], "cosine": np.round(cosine, 6),
        "gold rank": np.round(gold_rank, 4), "cosine rank": np.round(cos_rank, 4),
        "rank gap": np.round(cos_rank - gold_rank, 4),
    })
    over = table.nlargest(k, "rank gap").assign(direction="model says more similar")
    under = table.nsmallest(k, "rank gap").assign(direction="model says less similar")
    out = pd.concat([over, under]).reset_index(names="pair")
    return out[["direction", "pair", *table.columns]]
