"""Every drawn head's attention as a compact raster: uint8 weights the page draws on canvas.

A Vega-Lite chart holds at most a few thousand rows, so six layers of twelve heads over 32
tokens (73,728 weights) cannot be one; as bytes they are 72 KB before compression. Up to
:data:`GRID_TOKENS` tokens every weight is kept; a longer text is grouped into equal blocks
(attention summed over a block's keys, averaged over its queries, so rows still sum to 1).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from tools.attention.facts import HeadGrid

#: Texts up to this many tokens are drawn with every weight; longer ones in at most this many blocks.
GRID_TOKENS = 64
#: A weight w is sent as round(w * SCALE) in one byte.
SCALE = 255


def head_grid(attn: np.ndarray, tokens: Sequence[str], layers: Sequence[int], heads: Sequence[int],
              most: int = GRID_TOKENS) -> HeadGrid:
    """The given heads' attention quantised to uint8, every weight when the text is short enough.

    Args:
        attn: attention weights (layers, heads, T, T), rows summing to 1.
        tokens: the T tokens, in order.
        layers: the layers drawn (1-based).
        heads: the heads drawn (1-based).
        most: the most rows and columns a head's matrix keeps; beyond it tokens are grouped into blocks.

    Returns:
        The grid: ``weights[i, j]`` is layer ``layers[i]`` head ``heads[j]``.
    """
    chosen = attn[np.ix_([lay - 1 for lay in layers], [hd - 1 for hd in heads])]  # (L', H', T, T)
    t = chosen.shape[-1]
    block = max(1, math.ceil(t / most))
    labels = list(tokens)
    if block > 1:
        starts = list(range(0, t, block))
        summed = np.add.reduceat(chosen, starts, axis=-1)
        counts = np.diff([*starts, t])
        chosen = np.add.reduceat(summed, starts, axis=-2) / counts[:, None]
        labels = [f"{s}–{min(s + block, t) - 1}" for s in starts]
    weights = np.clip(np.rint(chosen * SCALE), 0, SCALE).astype(np.uint8)
    return HeadGrid(tuple(int(x) for x in layers), tuple(int(x) for x in heads), tuple(labels), block,
                    np.ascontiguousarray(weights))


def dequantised(grid: HeadGrid) -> np.ndarray:
    """The grid's weights back as floats (each within 1/510 of the weight it was made from)."""
    return grid.weights.astype(np.float32) / SCALE
