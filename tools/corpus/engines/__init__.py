"""Engines: who turns a corpus's pending chunks into vectors; the store is filled the same way whoever does.

An engine takes the chunk encoder (a callable ``texts -> float32 array``, e.g.
:class:`tools.corpus.encode.ChunkEncoder`) and the pending jobs ``(chunk number, texts)``, and
yields ``(chunk number, vectors)`` as each chunk finishes, in any order. It never writes: the
caller (:func:`tools.corpus.encode.encode_corpus`) persists each chunk and the manifest, reports
progress and checks for cancellation between chunks. So an in-process engine and a cluster one
(Ray actors holding the model, later) are interchangeable.

Lives here: ``local`` (in this process, one chunk after another) and the :class:`Engine` protocol.

May import: numpy, the standard library and ``tools.core``; nothing that computes (an engine is
handed the encoder, it does not build one).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Protocol

import numpy as np

from tools.core.errors import UserError
from tools.core.text import code

#: What an engine is handed: texts in, one float32 row per text out.
EncodeChunk = Callable[[Sequence[str]], np.ndarray]


class Engine(Protocol):
    """Encodes jobs; see the module docstring."""

    name: str

    def run(self, encode_chunk: EncodeChunk, jobs: Iterable[tuple[int, list[str]]]) -> Iterator[tuple[int, np.ndarray]]:
        ...


def engine_named(name: str) -> Engine:
    """The engine called ``name`` (``local``)."""
    from tools.corpus.engines.local import LocalEngine

    if name == "local":
        return LocalEngine()
    raise UserError(f"Unknown engine {code(name, 20)}; use `--engine local` (the only engine installed here).")
