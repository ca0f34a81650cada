"""Models: names and their safety, loading, the process hub and each model's typed state.

Lives here: ``names`` (resolve a user's model name, refuse URLs, ``..`` and folders
outside ``ASSISTANT_MODEL_ROOTS``; pick a device), ``loading`` (tokenizer and eager
encoder, safetensors first, never remote code), ``st_config`` (a model's
sentence-transformers pooling recipe), ``mlm_head`` (the masked-LM head, refused when
any weight would be random), ``hub`` (``ModelHub``, ``LoadedModel``,
``ModelState``, the registry the GPU boundary finds models in by name) and
``backends/`` (how hidden states are computed: torch, torch-int8, onnx, onnx-int8) and
``gpu`` (``@gpu``: ``spaces.GPU`` on a ZeroGPU Space, a no-op elsewhere), ``cpu`` (this CPU's kind from its
flags, and what the compute paths measured on each kind), ``kernels`` (the fast path's
kernels on this CPU: the setting, its kind's measurement, or one kept timing) and ``threads``
(the torch thread choice, made under one process-wide lock around a pass; the encoding
floor above uses it too).

May import: ``tools.core``; never ``assistant`` or ``gradio``. Import the
submodules directly (this file re-exports nothing, so no import cycle can start here).
"""
