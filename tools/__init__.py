"""The embedding toolkit: pure computation over one shared model hub.

Every tool function takes a model (a :class:`~tools.models.hub.LoadedModel` or a model
name) plus its inputs, and returns a :class:`~tools.core.results.Result`. It works as
is in a notebook::

    from tools.similarity import compare
    compare.compare("minilm", ["A cat.", "A kitten."]).tables[0].frame

Lives here: ``core`` (results, errors, settings), ``models`` (the hub and its
backends), ``encoding`` (text -> hidden states and sentence vectors), the command
families ``similarity``, ``attention``, ``projection`` and ``benchmark``, ``charts``
(Altair builders), and the single modules ``masking`` and ``mask_why`` (fill-mask),
``tokens`` (tokenize) and ``info`` (a model's facts).

May import: torch, transformers, sentence-transformers, numpy, pandas, altair and the
other libraries of the job; never gradio and never the ``assistant`` package.
"""
