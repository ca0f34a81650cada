"""Encoding: text -> hidden states and sentence vectors.

Lives here: ``encode`` (dedup, length-sorted token-budget batches, the ``Encoded``
record), ``forward`` (the GPU boundary: one batch's forward pass, reached by model
name with small picklable arguments), ``cache`` (each model's encoding cache) and
``pooling`` (cls, mean, max, the model's own sentence-transformers recipe), ``unknown`` (tokens the
vocabulary lacks, noted wherever a command's texts are tokenized) and ``replies`` (the warnings that say
what those mean for an answer). The torch
thread choice lives one floor down, in ``tools.models.threads``.

May import: ``tools.models``, ``tools.core.cache``, ``tools.core.text``, ``tools.models.gpu``, ``tools.core.errors``;
never ``assistant`` or ``gradio``. This file re-exports nothing.
"""
