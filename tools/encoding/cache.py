"""Each model's encoding cache (a byte-capped LRU kept in the model's state)."""

from __future__ import annotations

from tools.core.cache import ByteLRU, CacheStats
from tools.models.hub import LoadedModel


def encoding_cache(lm: LoadedModel) -> ByteLRU:
    """This model's cache of encodings, keyed by (text, pair, max length, attentions).

    Passes with attentions run the eager implementation and those without run
    ``sdpa``; their hidden states differ in the last float bits, so each kind is
    cached on its own and a cached answer is always bit-identical to a fresh one.
    Capped in bytes (ASSISTANT_CACHE_MB) and entries (ASSISTANT_CACHE_SIZE); shared
    by every conversation, like the model itself.
    """
    return lm.state.encoding_cache


def cache_stats(lm: LoadedModel) -> CacheStats:
    """Hits, misses, hit ratio and size of this model's encoding cache."""
    return encoding_cache(lm).stats()


def clear_cache(lm: LoadedModel) -> None:
    """Forget this model's cached encodings and reset its counters."""
    encoding_cache(lm).clear()
