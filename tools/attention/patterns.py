"""What each head does, and its weights as tidy chart rows.

``pattern_scores`` measures every head against named patterns (self, previous, next,
[CLS], [SEP], broad); ``chart_data`` turns attention matrices into one frame under the
chart-row limit: exact, top-k per query, or block-averaged, and says which. The pattern
names and the chart-row type are in :mod:`~tools.attention.facts`; the sentences that
describe the heads are in :mod:`~tools.attention.replies`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from tools import charts
from tools.attention.facts import ENTROPY, ChartData, Pattern
from tools.attention.inputs import Positions

#: Top-k aggregation keeps at least this many keys per query; below that, blocks are averaged.
MIN_TOP_K = 3


# --- pattern scores --------------------------------------------------------------------------

def pattern_scores(attn: np.ndarray, pos: Positions) -> pd.DataFrame:
    """One row per head: how much of each query's attention follows each pattern.

    Args:
        attn: attention weights (layers, heads, T, T), rows summing to 1.
        pos: special-token and text positions.

    Returns:
        Columns ``layer``, ``head`` (both 1-based), one column per :class:`Pattern`
        (mean weight over queries: on the diagonal, on position i-1, on i+1, summed
        over [CLS] / [SEP] keys, and the [CLS] row's total on text tokens), and the
        mean row entropy in bits (0 = every query looks at one key; log2 T = uniform).
    """
    n_layers, n_heads, t, _ = attn.shape
    idx = np.arange(t)
    scores = {
        Pattern.SELF: attn[..., idx, idx].mean(-1),
        Pattern.PREVIOUS: attn[..., idx[1:], idx[:-1]].mean(-1) if t > 1 else np.zeros((n_layers, n_heads)),
        Pattern.NEXT: attn[..., idx[:-1], idx[1:]].mean(-1) if t > 1 else np.zeros((n_layers, n_heads)),
        Pattern.CLS: attn[..., pos.cls].sum(-1).mean(-1) if pos.cls else np.zeros((n_layers, n_heads)),
        Pattern.SEP: attn[..., pos.sep].sum(-1).mean(-1) if pos.sep else np.zeros((n_layers, n_heads)),
        Pattern.CLS_READS: (attn[..., pos.cls[0], :][..., pos.text].sum(-1)
                            if pos.cls and pos.text else np.zeros((n_layers, n_heads))),
    }
    p = np.clip(attn, 1e-30, 1.0)
    entropy = -(attn * np.log2(p)).sum(-1).mean(-1)
    layer, head = np.meshgrid(np.arange(1, n_layers + 1), np.arange(1, n_heads + 1), indexing="ij")
    frame = pd.DataFrame({"layer": layer.ravel(), "head": head.ravel()})
    for pattern, values in scores.items():
        frame[pattern.value] = np.round(values.ravel().astype(float), 6)
    frame[ENTROPY] = np.round(entropy.ravel().astype(float), 4)
    return frame


def pattern_rows(scores: pd.DataFrame, pairs: Sequence[tuple[int, int]]) -> pd.DataFrame:
    """The pattern scores of the given (layer, head) pairs as tidy chart rows: layer, head, pattern, score."""
    keep = scores.set_index(["layer", "head"]).loc[list(pairs)].reset_index()
    names = [p.value for p in Pattern]
    rows = keep.melt(id_vars=["layer", "head"], value_vars=names, var_name="pattern", value_name="score")
    return rows.assign(score=rows["score"].round(4))  # the tooltip's precision: the table keeps six places


# --- chart data: exact, top-k or block-averaged ------------------------------------------------

def chart_data(panels: Sequence[tuple[Mapping[str, object], np.ndarray]], labels: list[str],
               max_rows: int = charts.MAX_ROWS) -> ChartData:
    """Turn (T, T) attention matrices into one tidy frame under ``max_rows`` rows.

    Each panel is (its key columns, e.g. ``{"layer": 2, "head": 5}``, its matrix). When
    every weight fits, every weight is a row. Otherwise each query keeps its top-k keys
    (k >= 3), or, when even that is too many rows, tokens are grouped into equal blocks
    and each cell is the block's attention summed over its keys and averaged over its
    queries (so block rows still sum to 1).
    """
    t = len(labels)
    budget = max(1, max_rows // max(1, len(panels)))
    if t * t <= budget:
        return ChartData(_exact(panels, labels), labels, "")
    k = budget // t
    if k >= MIN_TOP_K:
        frame, covered = _top_k(panels, labels, k)
        note = (f"each query shows its top {k} keys of {t} (they hold {covered:.0%} of the attention on "
                f"average) to keep the chart under {max_rows:,} rows")
        return ChartData(frame, labels, note)
    blocks = max(1, math.isqrt(budget))
    size = math.ceil(t / blocks)
    frame, order = _blocks(panels, labels, size)
    note = (f"tokens are grouped into blocks of {size} (attention summed over a block's keys, averaged over "
            f"its queries) to keep the chart under {max_rows:,} rows")
    return ChartData(frame, order, note)


def _frame(panels, index: np.ndarray, q: np.ndarray, k: np.ndarray, w: np.ndarray,
           q_names: Sequence[str], k_names: Sequence[str]) -> pd.DataFrame:
    """One tidy frame from flat arrays: panel index, query index, key index, weight."""
    keys = [keys for keys, _ in panels]
    columns: dict[str, object] = {
        name: np.asarray([kv[name] for kv in keys])[index] for name in keys[0]
    }
    columns["query"] = np.asarray(q_names, dtype=object)[q]
    columns["key"] = np.asarray(k_names, dtype=object)[k]
    columns["weight"] = np.round(w.astype(float), 4)
    return pd.DataFrame(columns)


def _exact(panels, labels) -> pd.DataFrame:
    stack = np.stack([m for _, m in panels])  # (P, T, T)
    p, t, _ = stack.shape
    index, q, k = (a.ravel() for a in np.meshgrid(np.arange(p), np.arange(t), np.arange(t), indexing="ij"))
    return _frame(panels, index, q, k, stack.ravel(), labels, labels)


def _top_k(panels, labels, k) -> tuple[pd.DataFrame, float]:
    stack = np.stack([m for _, m in panels])  # (P, T, T)
    p, t, _ = stack.shape
    top = np.argsort(-stack, axis=-1, kind="stable")[..., :k]  # (P, T, k)
    w = np.take_along_axis(stack, top, axis=-1)
    covered = float(w.sum(-1).mean())
    index, q, _ = (a.ravel() for a in np.meshgrid(np.arange(p), np.arange(t), np.arange(k), indexing="ij"))
    return _frame(panels, index, q, top.ravel(), w.ravel(), labels, labels), covered


def _blocks(panels, labels, size) -> tuple[pd.DataFrame, list[str]]:
    t = len(labels)
    starts = list(range(0, t, size))
    names = [f"{s}–{min(s + size, t) - 1}" for s in starts]
    stack = np.stack([m for _, m in panels])  # (P, T, T)
    summed = np.add.reduceat(stack, starts, axis=2)  # attention to each key block
    counts = np.diff([*starts, t])
    averaged = np.add.reduceat(summed, starts, axis=1) / counts[None, :, None]  # (P, B, B)
    p, b, _ = averaged.shape
    index, q, k = (a.ravel() for a in np.meshgrid(np.arange(p), np.arange(b), np.arange(b), indexing="ij"))
    return _frame(panels, index, q, k, averaged.ravel(), names, names), names
