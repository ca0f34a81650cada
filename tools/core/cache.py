"""A thread-safe least-recently-used cache capped in bytes and entries, that counts its hits."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class CacheStats:
    """A snapshot of one cache.

    Attributes:
        hits: lookups answered from the cache.
        misses: lookups that had to compute.
        entries: values held now.
        bytes: their estimated size.
        max_bytes: the size cap (0 turns the cache off).
        max_entries: the entry cap.
        skipped: values too large to keep (more than an eighth of the cap each).
        evicted: values dropped to stay under the caps.
    """

    hits: int
    misses: int
    entries: int
    bytes: int
    max_bytes: int
    max_entries: int
    skipped: int = 0
    evicted: int = 0

    @property
    def hit_ratio(self) -> float:
        """Hits over lookups, 0.0 before the first lookup."""
        total = self.hits + self.misses
        return self.hits / total if total else 0.0

    def describe(self) -> str:
        """One line a person can read, e.g. for a log or a benchmark report."""
        return (f"{self.hits:,} hits / {self.hits + self.misses:,} lookups ({self.hit_ratio:.0%}), "
                f"{self.entries:,} entries, {self.bytes / 2**20:.1f} of {self.max_bytes / 2**20:.0f} MiB")


class ByteLRU:
    """Least-recently-used values under a byte cap and an entry cap.

    A value larger than an eighth of the byte cap is never kept, so one huge
    input (a 512-token text with attentions) cannot flush everyone else's.
    """

    def __init__(self, max_bytes: int, max_entries: int) -> None:
        self.max_bytes = max(0, int(max_bytes))
        self.max_entries = max(0, int(max_entries))
        self._data: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
        self._bytes = 0
        self._hits = self._misses = self._skipped = self._evicted = 0
        self._lock = threading.Lock()

    def get(self, key: Hashable, usable: Callable[[Any], bool] | None = None) -> Any | None:
        """The value under ``key`` when present (and ``usable(value)``), else None; counts a hit or a miss."""
        with self._lock:
            found = self._data.get(key)
            if found is not None and (usable is None or usable(found[0])):
                self._data.move_to_end(key)
                self._hits += 1
                return found[0]
            self._misses += 1
            return None

    def put(self, key: Hashable, value: Any, size: int) -> bool:
        """Keep ``value`` (replacing an older one); False when it is too large to keep."""
        with self._lock:
            if self.max_entries == 0 or size > self.max_bytes // 8:
                self._skipped += 1
                return False
            old = self._data.pop(key, None)
            if old is not None:
                self._bytes -= old[1]
            self._data[key] = (value, size)
            self._bytes += size
            while self._data and (self._bytes > self.max_bytes or len(self._data) > self.max_entries):
                _, (_, dropped) = self._data.popitem(last=False)
                self._bytes -= dropped
                self._evicted += 1
            return True

    def discard(self, key: Hashable) -> None:
        """Drop the value under ``key``, if any (its bytes are freed from the cap)."""
        with self._lock:
            old = self._data.pop(key, None)
            if old is not None:
                self._bytes -= old[1]

    def clear(self) -> None:
        """Drop every value and reset the counters."""
        with self._lock:
            self._data.clear()
            self._bytes = 0
            self._hits = self._misses = self._skipped = self._evicted = 0

    def stats(self) -> CacheStats:
        """Counters and sizes now."""
        with self._lock:
            return CacheStats(self._hits, self._misses, len(self._data), self._bytes, self.max_bytes,
                              self.max_entries, self._skipped, self._evicted)
