"""What an engine is: the :class:`Engine` protocol, the chunk encoder it is handed (``EncodeChunk``), and the
engines there are (:class:`EngineKind`, the choices of ``corpus load --engine``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from enum import Enum
from typing import Protocol

import numpy as np

#: What an engine is handed: texts in, one float32 row per text out.
EncodeChunk = Callable[[Sequence[str]], np.ndarray]


class EngineKind(str, Enum):
    """Who encodes a corpus: this process, or a Ray cluster (a local one, or one named by address)."""

    LOCAL = "local"
    RAY = "ray"


class Engine(Protocol):
    """Encodes jobs ``(chunk number, texts)`` and yields ``(chunk number, vectors)`` as each finishes, in any order."""

    name: str

    def run(self, encode_chunk: EncodeChunk, jobs: Iterable[tuple[int, list[str]]]) -> Iterator[tuple[int, np.ndarray]]:
        ...
