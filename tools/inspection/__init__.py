"""Inspection: what the model reads and what it predicts.

Lives here: ``masking`` (fill-mask: top candidates per mask, a greedy joint filling, what
each mask attended to; the masked-LM fallback), ``mask_why`` (``mask --why``: which input
tokens drove each top fill, by integrated gradients), ``tokens`` (tokenize: word pieces,
special tokens, padding, truncation, pairs) and ``info`` (a model's sizes, parameter counts
and origin). Each tool computes typed ``facts``; ``replies``, the family's one formatter,
writes their words, tables and charts.

May import: ``tools.core``, ``tools.models``, ``tools.encoding``, ``tools.charts``, and
``tools.similarity``'s attribution (which ``mask_why`` reuses); never ``assistant`` or ``gradio``.
"""
