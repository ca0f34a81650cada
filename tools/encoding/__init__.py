"""Encoding: text -> hidden states and sentence vectors.

Lives here: ``encode`` (dedup, length-sorted token-budget batches, the ``Encoded``
record), ``forward`` (the GPU boundary: one batch's forward pass, reached by model
name with small picklable arguments), ``cache`` (each model's encoding cache),
``threads`` (the torch thread choice, made under one process-wide lock around the
pass) and ``pooling`` (cls, mean, max, the model's own sentence-transformers recipe).

May import: ``tools.models``, ``tools.core.cache``, ``tools.models.gpu``, ``tools.core.errors``;
never ``assistant`` or ``gradio``. ``threads`` imports nothing from the project,
so ``tools.models`` may use it. This file re-exports nothing.
"""
