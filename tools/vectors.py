"""The encoding API under its old name: a thin re-export of ``tools.encoding`` (import from there in new code)."""

from __future__ import annotations

from tools.encoding.cache import cache_stats, clear_cache, encoding_cache
from tools.encoding.encode import (MAX_BATCH_ATTENTION, MAX_BATCH_SIZE, MAX_BATCH_TOKENS, Encoded, _batches,
                                   check_layer, encode, truncation_warnings)
from tools.encoding.forward import forward_batch
from tools.encoding.pooling import Pooling, available_poolings, cosine_matrix, pool, sentence_vectors
from tools.encoding.threads import SINGLE_THREAD_TOKENS, ThreadChooser, max_threads, threads_for
from tools.models.hub import DEFAULT_CACHE_BYTES, LoadedModel


def thread_chooser(lm: LoadedModel) -> ThreadChooser:
    """This model's :class:`ThreadChooser`."""
    return lm.state.threads


__all__ = ["DEFAULT_CACHE_BYTES", "MAX_BATCH_ATTENTION", "MAX_BATCH_SIZE", "MAX_BATCH_TOKENS", "SINGLE_THREAD_TOKENS",
           "Encoded", "Pooling", "ThreadChooser", "_batches", "available_poolings", "cache_stats", "check_layer",
           "clear_cache", "cosine_matrix", "encode", "encoding_cache", "forward_batch", "max_threads", "pool",
           "sentence_vectors", "thread_chooser", "threads_for", "truncation_warnings"]
