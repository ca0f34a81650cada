"""Core: what every tool shares, and nothing that computes.

Lives here: ``results`` (the frozen ``Result``, ``Table``, ``Chart``, ``Artifact``),
``errors`` (``UserError``: one sentence for the person), ``config`` (``Settings`` read
from the environment once, and the one chart-row limit), ``text`` (Markdown escaping),
``timing``, ``cancel`` (the per-command deadline that long loops check), ``cache``
(a thread-safe LRU capped in bytes) and ``kept`` (folders of files kept for later processes, bounded by use).

May import: the standard library, numpy, pandas; nothing else from the project.
"""
