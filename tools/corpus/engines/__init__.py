"""Engines: who turns a corpus's pending chunks into vectors; the store is filled the same way whoever does.

An engine takes the chunk encoder (a callable ``texts -> float32 array``, e.g.
:class:`tools.corpus.encode.ChunkEncoder`) and the pending jobs ``(chunk number, texts)``, and
yields ``(chunk number, vectors)`` as each chunk finishes, in any order. It never writes: the
caller (:func:`tools.corpus.encode.encode_corpus`) persists each chunk and the manifest, reports
progress and checks for cancellation between chunks. So an in-process engine and a cluster one
(Ray actors holding the model, later) are interchangeable; ``tools.corpus.encode.engine_named``
picks one by name.

Lives here: ``base`` (the :class:`~tools.corpus.engines.base.Engine` protocol, ``EncodeChunk``) and
``local`` (in this process, one chunk after another).

May import: numpy and the standard library; nothing else from the project (an engine is handed
the encoder, it does not build one).
"""
