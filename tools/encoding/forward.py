"""The GPU boundary of encoding: one padded batch's forward pass, given token ids and a model key.

Everything that crosses here is small and picklable (see ``tools.models.gpu``): the
model's registry key, int64 id and mask arrays, a flag; what comes back is numpy,
one array per row with its padding already cut off.
"""

from __future__ import annotations

import numpy as np
import torch

from tools.models.gpu import gpu
from tools.models.hub import model_by_key
from tools.models.threads import threads_for

#: Tokens a GPU pass gets through per second, counted low (ZeroGPU stops a call at its duration).
_TOKENS_PER_SECOND = 2_000


def seconds_for(key: str, input_ids: np.ndarray, attention_mask: np.ndarray,
                token_type_ids: np.ndarray | None = None, attentions: bool = False, last_only: bool = False) -> int:
    """The ZeroGPU duration a batch needs: a few seconds plus its tokens (attentions count four times)."""
    work = int(input_ids.size) * (4 if attentions else 1)
    return int(min(120, 10 + work // _TOKENS_PER_SECOND))


@gpu(duration=seconds_for)
def forward_batch(key: str, input_ids: np.ndarray, attention_mask: np.ndarray,
                  token_type_ids: np.ndarray | None = None, attentions: bool = False,
                  last_only: bool = False) -> list[tuple[np.ndarray, np.ndarray | None]]:
    """One forward pass over a padded batch.

    Args:
        key: the model's registry key (:attr:`tools.models.hub.LoadedModel.key`).
        input_ids: (B, T) int64, padded.
        attention_mask: (B, T) int64, 1 for real tokens.
        token_type_ids: (B, T) int64 when the model takes them, else None.
        attentions: whether to return attention weights too.
        last_only: return only the last layer's hidden states (what sentence vectors need): a
            seventh of the bytes for a 6-layer model, across the boundary and in the cache.

    Returns:
        Per row: hidden states (L+1, n, D) float32 (or (1, n, D) with ``last_only``) and attentions
        (L, H, n, n) float32 or None, where n is the row's length without padding.
    """
    lm = model_by_key(key)
    feed = {"input_ids": torch.from_numpy(input_ids), "attention_mask": torch.from_numpy(attention_mask)}
    if token_type_ids is not None:
        feed["token_type_ids"] = torch.from_numpy(token_type_ids)
    chooser = lm.state.threads if lm.device.type == "cpu" else None
    with threads_for(int(input_ids.size), chooser) as threads:
        hidden, attn = lm.state.backend.run(lm, feed, attentions, threads.wanted, last_only)
        lengths = attention_mask.sum(axis=1).tolist()
        if last_only:
            hidden = hidden[-1:]
        return [(np.ascontiguousarray(hidden[:, row, :n].numpy()),
                 np.ascontiguousarray(attn[row, :, :, :n, :n].numpy()) if attn is not None else None)
                for row, n in enumerate(lengths)]
