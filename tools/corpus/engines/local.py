"""The in-process engine: one chunk after another, in the caller's thread (so its cancel token applies)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np

from tools.corpus.engines.base import EncodeChunk


class LocalEngine:
    """Encode each job here and now, in order."""

    name = "local"

    def run(self, encode_chunk: EncodeChunk, jobs: Iterable[tuple[int, list[str]]]) -> Iterator[tuple[int, np.ndarray]]:
        for chunk, texts in jobs:
            yield chunk, np.asarray(encode_chunk(texts), dtype=np.float32)
