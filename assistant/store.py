"""The latest replies' full results, for every visitor together, under one byte cap.

A conversation's turns keep only small things (the command line, model, settings, the
answer's text); the full :class:`~tools.core.results.Result` of its latest replies (tables,
charts, downloads) lives here, so ``export`` finds them without recomputing. Past the
cap (``ASSISTANT_RESULTS_MB``) the least recently stored go first, which are those of
the longest idle conversations; anything not found is recomputed on demand (commands
are deterministic and encodings are cached).
"""

from __future__ import annotations

from tools.core.cache import ByteLRU, CacheStats
from tools.core.results import Result

#: Full results kept per conversation: its latest replies.
KEEP_PER_SESSION = 2


def result_nbytes(result: Result) -> int:
    """An estimate of the memory one result holds: its tables, chart data, downloads and text."""
    size = len(result.text) + sum(len(w) for w in result.warnings) + 512
    size += sum(int(t.frame.memory_usage(index=True, deep=True).sum()) for t in result.tables)
    size += sum(len(a.data) for a in result.artifacts)
    for chart in result.charts:
        size += sum(int(frame.memory_usage(index=True, deep=True).sum()) for frame in chart_frames(chart.chart))
    return size


def chart_frames(chart: object) -> list:
    """The distinct data frames an Altair chart embeds, over its layers and panels."""
    frames: dict[int, object] = {}
    stack = [chart]
    while stack:
        node = stack.pop()
        data = getattr(node, "data", None)
        if hasattr(data, "memory_usage") and hasattr(data, "columns"):
            frames[id(data)] = data
        for attr in ("layer", "hconcat", "vconcat", "concat"):
            parts = getattr(node, attr, None)
            if isinstance(parts, list):
                stack.extend(parts)
        spec = getattr(node, "spec", None)
        if spec is not None and hasattr(spec, "to_dict"):
            stack.append(spec)
    return list(frames.values())


class ResultStore:
    """Full results keyed by (conversation id, turn number), least recently stored dropped first.

    Args:
        max_bytes: the cap for every conversation together (0 keeps nothing).
        per_session: how many of a conversation's latest results are kept.
    """

    def __init__(self, max_bytes: int, per_session: int = KEEP_PER_SESSION) -> None:
        self.per_session = per_session
        self.max_bytes = max_bytes
        # a result over an eighth of the cap is not kept (one huge `vocab` cannot flush everyone's)
        self._lru = ByteLRU(max_bytes, max_entries=1_000_000)

    def put(self, session_id: str, number: int, result: Result) -> None:
        """Keep ``result`` as turn ``number`` of ``session_id``, dropping that conversation's older ones."""
        self._lru.put((session_id, number), result, result_nbytes(result))
        self._lru.discard((session_id, number - self.per_session))

    def get(self, session_id: str, number: int) -> Result | None:
        """The full result of that turn, or None when it was dropped (recompute it)."""
        return self._lru.get((session_id, number))

    def drop(self, session_id: str, last_number: int) -> None:
        """Free a conversation's results (``last_number``: its latest turn number)."""
        for number in range(max(1, last_number - self.per_session + 1), last_number + 1):
            self._lru.discard((session_id, number))

    def stats(self) -> CacheStats:
        """Entries and bytes held now."""
        return self._lru.stats()
