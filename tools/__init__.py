"""The embedding toolkit: pure computation over one shared model hub.

Every tool function takes a model (a :class:`~tools.hub.LoadedModel` or a model
name) plus its inputs, and returns a :class:`~tools.results.Result`. Nothing in
this package imports gradio or the ``assistant`` package, so it works as is in a
notebook::

    from tools import similarity
    similarity.compare("minilm", ["A cat.", "A kitten."]).tables[0].frame
"""
