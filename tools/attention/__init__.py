"""Attention: what the heads look at.

Lives here: ``attend`` (attention maps in three views, one head, one layer's heads,
every layer x head), ``grids`` (the drawn heads quantised to one byte a weight, every
weight of a short text, blocks of a long one, for the page's raster maps), ``patterns``
(each head's pattern scores, and attention weights as chart rows under the row limit),
``inputs`` (what the three commands share: checks, encoding with attentions, token labels),
``selfattn`` (a layer's self-attention
rebuilt by hand from its query/key/value weights and shown equal to the model's),
``syntax`` (heads against spaCy's dependency arcs), ``facts`` (what the three compute,
as typed dataclasses of weights, scores and shapes, and the pattern and column names)
and ``replies`` (the family's one formatter: facts -> words, tables, charts, downloads).

Layers are numbered from 1 here (attention layer L reads hidden state L-1 and writes
hidden state L), the same numbers ``--layer`` means in every command.

May import: ``tools.core``, ``tools.models``, ``tools.encoding``, ``tools.charts``;
never ``assistant`` or ``gradio``.
"""
