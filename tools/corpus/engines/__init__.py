"""Engines: who turns a corpus's pending chunks into vectors; the store is filled the same way whoever does.

An engine takes the chunk encoder (a callable ``texts -> float32 array``, e.g.
:class:`tools.corpus.encode.ChunkEncoder`) and the pending jobs ``(chunk number, texts)``, and
yields ``(chunk number, vectors)`` as each chunk finishes, in any order. It never writes: the
caller (:func:`tools.corpus.encode.encode_corpus`) persists each chunk and the manifest, reports
progress and checks for cancellation between chunks. So an in-process engine and a cluster one
are interchangeable; ``tools.corpus.encode.engine_named`` picks one by name (``EngineKind``).

Lives here: ``base`` (the :class:`~tools.corpus.engines.base.Engine` protocol, ``EncodeChunk``,
``EngineKind``), ``local`` (in this process, one chunk after another) and ``ray`` (Ray Data over a
pool of actors that each load the model once, from the encoder's ``recipe``; Ray imported lazily).

May import: numpy, the standard library and ``tools.core`` (errors); ``ray`` inside ``ray`` only,
when a run starts; nothing else from the project (an engine is handed the encoder, or the
encoder's recipe, and does not build one itself).
"""
