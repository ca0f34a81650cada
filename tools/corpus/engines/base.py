"""What an engine is: the :class:`Engine` protocol and the chunk encoder it is handed (``EncodeChunk``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Protocol

import numpy as np

#: What an engine is handed: texts in, one float32 row per text out.
EncodeChunk = Callable[[Sequence[str]], np.ndarray]


class Engine(Protocol):
    """Encodes jobs ``(chunk number, texts)`` and yields ``(chunk number, vectors)`` as each finishes, in any order."""

    name: str

    def run(self, encode_chunk: EncodeChunk, jobs: Iterable[tuple[int, list[str]]]) -> Iterator[tuple[int, np.ndarray]]:
        ...
