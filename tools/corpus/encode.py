"""Encode a corpus in chunks, persisting each finished chunk, so a stopped run resumes where it was.

:func:`encode_corpus` hands the pending chunks to an engine (:mod:`tools.corpus.engines`), writes
each chunk it gets back and the manifest after it, reports progress, and checks for
cancellation between chunks; a chunk already on disk is never encoded again. When the last
chunk is in, the vectors are joined (unit length, memory-mappable) and the index is built.
:func:`load_corpus` is the whole of ``corpus load``: read the file, find or make its folder, encode.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tools.core import cancel
from tools.core.config import Settings
from tools.core.errors import UserError
from tools.core.text import code
from tools.corpus.engines.base import EncodeChunk, Engine, EngineKind
from tools.corpus.engines.local import LocalEngine
from tools.corpus.facts import EncodeReport, ReadCorpus
from tools.corpus.folder import CHUNK_ROWS, Corpus
from tools.corpus.index import build_index
from tools.corpus.read import read_texts
from tools.corpus.store import CorpusStore
from tools.encoding.pooling import Pooling, available_poolings, bulk_vectors
from tools.models.hub import LoadedModel, ModelHub
from tools.models.threads import ThreadChooser

Progress = Callable[[float, str], None]
#: Poolings a corpus may be encoded with: the model's own recipe, or the mean of its last layer.
CORPUS_POOLINGS = (Pooling.SBERT, Pooling.MEAN)
_GUARD = threading.Lock()
_RUNNING: dict[str, threading.Lock] = {}


def engine_named(name: str, address: str | None = None) -> Engine:
    """The engine called ``name``: ``local`` (in this process) or ``ray`` (a local Ray cluster, or the one at
    ``address``: ``auto``, ``ray://HOST:10001``)."""
    try:
        kind = EngineKind(name.strip().lower())
    except ValueError:
        raise UserError(f"Unknown engine {code(name, 20)}; use one of "
                        f"{', '.join(k.value for k in EngineKind)}, like `--engine local`.") from None
    if kind is EngineKind.RAY:
        from tools.corpus.engines.ray import RayEngine

        return RayEngine(address)
    if address:
        raise UserError("--address names a Ray cluster: it goes with `--engine ray`.")
    return LocalEngine()


def corpus_pooling(lm: LoadedModel, pool: str | None = None) -> Pooling:
    """``sbert`` when the model has a sentence-transformers recipe, else ``mean``; or the one asked for."""
    if pool is None:
        return Pooling.SBERT if Pooling.SBERT in available_poolings(lm) else Pooling.MEAN
    pooling = Pooling.parse(pool)
    if pooling not in CORPUS_POOLINGS:
        raise UserError(f"A corpus is encoded with --pool sbert (the model's own recipe) or mean, not {pooling.value}.")
    if pooling not in available_poolings(lm):
        raise UserError(f"{lm.name} has no sentence-transformers pooling recipe; use --pool mean.")
    return pooling


@dataclass(frozen=True)
class ChunkEncoder:
    """``texts -> (N, dims) float32``: one model's sentence vectors with one pooling, last layer.

    It goes through :func:`tools.encoding.pooling.bulk_vectors`, so texts are deduplicated,
    sorted by length and batched as every other command's are, and each batch is pooled where it ran (no
    per-text states, copies or cache entries: a corpus keeps only its vectors). A remote engine rebuilds it where
    it runs from its :attr:`recipe` (the model's name, the pooling and ``settings``, which load the
    model as this process's hub did), never from the loaded model itself.
    """

    lm: LoadedModel
    pooling: Pooling
    settings: Settings | None = None

    @property
    def model(self) -> str:
        return self.lm.name

    @property
    def recipe(self) -> EncoderRecipe:
        return EncoderRecipe(self.lm.name, self.pooling.value, self.settings or Settings.from_env())

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        return bulk_vectors(self.lm, list(texts), self.pooling)


@dataclass(frozen=True)
class EncoderRecipe:
    """What another process needs to build the same :class:`ChunkEncoder`: small and picklable.

    ``recipe(threads)`` loads the model by name through a :class:`~tools.models.hub.ModelHub` with
    these settings (the same backend choice, e.g. ONNX Runtime for bulk passes) and, when
    ``threads`` is given, runs every pass with that many threads (a Ray actor holds one CPU).
    """

    model: str
    pooling: str
    settings: Settings

    def __call__(self, threads: int | None = None) -> ChunkEncoder:
        lm = ModelHub(self.settings).get(self.model)
        if threads:
            import torch

            torch.set_num_threads(threads)
            lm.state.threads = ThreadChooser(cores=threads)
        return ChunkEncoder(lm, Pooling(self.pooling), self.settings)


def encode_corpus(corpus: Corpus, encode_chunk: EncodeChunk, engine: Engine | None = None,
                  progress: Progress | None = None) -> EncodeReport:
    """Encode every pending chunk of ``corpus`` with ``encode_chunk`` through ``engine`` (default: local).

    Each chunk is saved (atomically) and counted in the manifest as soon as it is back; then
    ``progress(fraction, message)`` is called and the command's cancel token checked. A
    complete corpus is returned as it is (``reused``).
    """
    engine = engine or engine_named("local")
    m = corpus.manifest
    model, pooling = getattr(encode_chunk, "model", None), getattr(encode_chunk, "pooling", None)
    if model is not None and model != m.model or pooling is not None and Pooling(pooling).value != m.pooling:
        raise ValueError(f"corpus {m.name} is encoded with {m.model}/{m.pooling}, not {model}/{pooling}")
    with _lock_for(corpus.key):  # one run per corpus in this process; a second waits, then finds the chunks done
        corpus.refresh()
        return _encode(corpus, encode_chunk, engine, progress)


def _lock_for(key: str) -> threading.Lock:
    with _GUARD:
        return _RUNNING.setdefault(key, threading.Lock())


def _encode(corpus: Corpus, encode_chunk: EncodeChunk, engine: Engine, progress: Progress | None) -> EncodeReport:
    m = corpus.manifest
    start = time.perf_counter()
    pending = corpus.pending_chunks()
    skipped = m.chunks_total - len(pending)
    if m.complete:
        return EncodeReport(corpus.info(), engine.name, 0, skipped, 0, 0.0, True, read_otherwise=corpus.read_otherwise)
    texts = corpus.texts()
    jobs = ((c, [texts[i] for i in corpus.chunk_ids(c)]) for c in pending)
    encoded = rows = 0
    for chunk, vectors in engine.run(encode_chunk, jobs):
        corpus.save_chunk(chunk, vectors)
        encoded += 1
        rows += len(vectors)
        if progress is not None:
            done = len(corpus.manifest.chunks_done)
            progress(done / (m.chunks_total + 1), f"encoded {done} of {m.chunks_total} chunks "
                                                  f"({min(done * m.chunk_rows, m.rows):,} of {m.rows:,} rows)")
        cancel.check()
    if progress is not None:
        progress(m.chunks_total / (m.chunks_total + 1), "building the index")
    corpus.finish(build_index)
    if progress is not None:
        progress(1.0, "done")
    return EncodeReport(corpus.info(), engine.name, encoded, skipped, rows, time.perf_counter() - start, False,
                        corpus.displaced, corpus.read_otherwise)


def open_corpus(store: CorpusStore, read: ReadCorpus, lm: LoadedModel, pool: str | None = None,
                name: str | None = None, chunk_rows: int = CHUNK_ROWS,
                settings: Settings | None = None) -> tuple[Corpus, ChunkEncoder]:
    """The corpus for these rows under ``lm`` (existing or new) and the encoder that fills it (``settings``:
    those ``lm`` was loaded with, for an engine that loads it again elsewhere)."""
    pooling = corpus_pooling(lm, pool)
    corpus = store.create(read, lm.name, pooling.value, lm.hidden_size, name, chunk_rows)
    return corpus, ChunkEncoder(lm, pooling, settings)


def load_corpus(store: CorpusStore, path: Path | str, lm: LoadedModel, settings: Settings, *,
                column: str | None = None, name: str | None = None, pool: str | None = None,
                engine: str | Engine = "local", address: str | None = None, progress: Progress | None = None,
                shown_name: str | None = None, chunk_rows: int = CHUNK_ROWS) -> tuple[ReadCorpus, EncodeReport]:
    """``corpus load``: read ``path``, find or make its corpus, and encode what is missing (with ``engine``;
    ``address``: the Ray cluster of ``engine="ray"``)."""
    chosen = engine_named(engine, address) if isinstance(engine, str) else engine
    read = read_texts(path, settings, column=column, name=shown_name)
    corpus, encoder = open_corpus(store, read, lm, pool, name, chunk_rows, settings)
    return read, encode_corpus(corpus, encoder, chosen, progress)
