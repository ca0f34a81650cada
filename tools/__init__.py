"""The embedding toolkit: pure computation over one shared model hub.

Every tool function takes a model (a :class:`~tools.models.hub.LoadedModel` or a model
name) plus its inputs, and returns a :class:`~tools.core.results.Result`. It works as
is in a notebook::

    from tools.similarity import compare
    compare.compare("minilm", ["A cat.", "A kitten."]).tables[0].frame

Inside each family the numbers come first and the words after: a tool computes a typed
fact (``compare.comparison(...)`` returns a :class:`~tools.similarity.facts.Comparison`,
cosine matrices and the choices made), and the family's one formatter, its ``replies``
module, turns that fact into the Result's sentences, tables, charts and downloads.

Lives here: ``core`` (results, errors, settings), ``models`` (the hub and its
backends), ``encoding`` (text -> hidden states and sentence vectors), the command
families ``similarity``, ``attention``, ``projection``, ``benchmark``, ``inspection``
(fill-mask, tokenize, a model's facts), ``layers`` (probes, contextuality, CKA, rollout,
the logit lens) and ``corpus`` (a person's own texts: stored, encoded once, searched,
clustered), and ``charts`` (Altair builders).

May import: torch, transformers, sentence-transformers, numpy, pandas, altair and the
other libraries of the job; never gradio and never the ``assistant`` package.
"""
