"""The GPU boundary of encoding: a few padded batches' forward passes, given token ids and a model key.

Everything that crosses here is small and picklable (see ``tools.models.gpu``): the
model's registry key, int64 id and mask arrays, a flag; what comes back is numpy,
one array per row with its padding already cut off (:func:`forward_batches`), or one sentence
vector per row (:func:`pooled_batches`, for bulk work that keeps nothing else: a corpus). Several
batches cross in one call, so a backend with workers of its own (ONNX Runtime on a CPU) runs them
side by side, and a ZeroGPU Space pays for one call instead of one per batch.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import torch

from tools.models.gpu import gpu
from tools.models.hub import model_by_key
from tools.models.threads import threads_for

#: Tokens a GPU pass gets through per second, counted low (ZeroGPU stops a call at its duration).
_TOKENS_PER_SECOND = 2_000


class Batch(NamedTuple):
    """One padded batch: (B, T) int64 arrays; ``token_type_ids`` is None for a model that takes none."""

    input_ids: np.ndarray
    attention_mask: np.ndarray
    token_type_ids: np.ndarray | None = None


#: Per row of a batch: hidden states (L+1, n, D) float32 (or (1, n, D)) and attentions (L, H, n, n) or None.
Rows = list[tuple[np.ndarray, np.ndarray | None]]


class Pool(NamedTuple):
    """How a row's token vectors become one vector: ``mode`` is ``cls``, ``mean``, ``max`` or one of
    sentence-transformers' own (``mean_sqrt_len``, ``lasttoken``); ``normalize`` scales it to unit length."""

    mode: str
    normalize: bool = False


def pool_rows(states: torch.Tensor, mask: torch.Tensor, pool: Pool) -> torch.Tensor:
    """One vector per row of ``states`` (B, T, D) from the tokens ``mask`` (B, T) keeps (padding never counts)."""
    keep = mask.to(states.dtype).unsqueeze(-1)
    count = keep.sum(dim=1).clamp_min(1)
    if pool.mode == "cls":
        out = states[:, 0]
    elif pool.mode == "max":
        out = states.masked_fill(keep == 0, float("-inf")).max(dim=1).values
    elif pool.mode == "lasttoken":
        out = states[torch.arange(states.shape[0]), mask.sum(dim=1).long() - 1]
    elif pool.mode in ("mean", "mean_sqrt_len"):
        total = (states * keep).sum(dim=1)
        out = total / (count if pool.mode == "mean" else count.sqrt())
    else:
        raise ValueError(f"unknown pooling mode {pool.mode!r}")
    return torch.nn.functional.normalize(out, dim=-1) if pool.normalize else out


def seconds_for(key: str, batches: list[Batch], attentions: bool = False, last_only: bool = False) -> int:
    """The ZeroGPU duration the batches need: a few seconds plus their tokens (attentions count four times)."""
    work = sum(int(b.input_ids.size) for b in batches) * (4 if attentions else 1)
    return int(min(120, 10 + work // _TOKENS_PER_SECOND))


@gpu(duration=seconds_for)
def forward_batches(key: str, batches: list[Batch], attentions: bool = False,
                    last_only: bool = False) -> list[Rows]:
    """The forward passes of ``batches``, in order.

    Args:
        key: the model's registry key (:attr:`tools.models.hub.LoadedModel.key`).
        batches: padded batches (see :class:`Batch`).
        attentions: whether to return attention weights too.
        last_only: return only the last layer's hidden states (what sentence vectors need): a
            seventh of the bytes for a 6-layer model, across the boundary and in the cache.

    Returns:
        Per batch, per row: hidden states (L+1, n, D) float32 (or (1, n, D) with ``last_only``) and
        attentions (L, H, n, n) float32 or None, where n is the row's length without padding.
    """
    states = _passes(key, batches, attentions, last_only)
    return [_rows(hidden, attn, b.attention_mask, last_only) for (hidden, attn), b in zip(states, batches)]


def _pooling_seconds(key: str, batches: list[Batch], pool: Pool) -> int:
    return seconds_for(key, batches)


@gpu(duration=_pooling_seconds)
def pooled_batches(key: str, batches: list[Batch], pool: Pool) -> list[np.ndarray]:
    """One vector per row of each batch, (B, D) float32, pooled from the last layer where it was computed:
    no row's token vectors cross back (bulk work that keeps only sentence vectors)."""
    states = _passes(key, batches, False, True)
    return [pool_rows(hidden[-1], torch.from_numpy(b.attention_mask), pool).float().numpy()
            for (hidden, _), b in zip(states, batches)]


def _passes(key: str, batches: list[Batch], attentions: bool,
            last_only: bool) -> list[tuple[torch.Tensor, torch.Tensor | None]]:
    """The backend's states of ``batches``, with the thread count chosen for their size (on a CPU)."""
    lm = model_by_key(key)
    feeds = [_feed(b) for b in batches]
    chooser = lm.state.threads if lm.device.type == "cpu" else None
    with threads_for(sum(int(b.input_ids.size) for b in batches), chooser) as threads:
        return lm.state.backend.run_many(lm, feeds, attentions, threads.wanted, last_only)


def _feed(batch: Batch) -> dict[str, torch.Tensor]:
    feed = {"input_ids": torch.from_numpy(batch.input_ids), "attention_mask": torch.from_numpy(batch.attention_mask)}
    if batch.token_type_ids is not None:
        feed["token_type_ids"] = torch.from_numpy(batch.token_type_ids)
    return feed


def _rows(hidden: torch.Tensor, attn: torch.Tensor | None, attention_mask: np.ndarray, last_only: bool) -> Rows:
    if last_only:
        hidden = hidden[-1:]
    return [(np.ascontiguousarray(hidden[:, row, :n].numpy()),
             np.ascontiguousarray(attn[row, :, :, :n, :n].numpy()) if attn is not None else None)
            for row, n in enumerate(attention_mask.sum(axis=1).tolist())]
