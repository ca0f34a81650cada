"""Similarity: how close texts, words and tokens are, and why.

Lives here: ``compare`` (sentence vectors under each pooling, their cosines),
``words`` (one word's contextual vectors across sentences and layers), ``static``
(input-embedding and GloVe baselines for a word), ``neighbors`` (nearest vocabulary
tokens), ``embed`` (token and sentence vectors as tables), ``baselines`` (GloVe and
input-embedding sentence averages), ``why`` (token attribution of a similarity),
with its arithmetic in ``why_math`` (the exact mean-pooling decomposition) and
``attribution`` (integrated gradients for the other poolings). Each tool computes
typed ``facts``; ``replies``, the family's one formatter, writes their words, tables, charts and
downloads, with ``replies_why`` for those of ``why`` and ``replies_compare`` for those of ``compare``.
What a number means for this model: ``reference`` (a cosine placed among the model's own STS-B dev cosines
by gold band and unrelated pairs; :mod:`tools.benchmark.reference` computes them) and ``verdicts`` (same /
related / different against a word's baselines, tight / loose against sampled neighbourhoods).

May import: ``tools.core``, ``tools.models``, ``tools.encoding``, ``tools.charts``;
never ``assistant`` or ``gradio``.
"""
