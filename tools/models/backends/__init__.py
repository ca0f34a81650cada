"""Backends: how a model's hidden states (and, when asked, attentions) are computed; chosen at load time.

- ``torch_fp32.TorchBackend``: the PyTorch encoder (``sdpa`` for hidden states alone,
  eager when attentions are wanted); also serves the int8 encoder as ``torch-int8``.
- ``torch_int8``: dynamic int8 quantisation of the encoder's Linear layers (CPU).
- ``onnx_runtime.OnnxBackend``: hidden states from an ONNX export in ONNX Runtime: ``onnx``
  (full precision; a CPU model switches to it at its first bulk batch, exported then) and
  ``onnx-int8`` (the fast path); attentions fall back to PyTorch. onnxruntime is imported only there.
- ``openvino_bf16.OpenVinoBackend``: the fast path on CPUs with AMX (``openvino-bf16``): the full-precision ONNX
  export run by OpenVINO in bf16; attentions on the float PyTorch encoder. openvino (optional) is imported
  only there.

Room for a remote serving engine: a class with ``name``, ``run`` and ``run_many`` (see :class:`Backend`).
Modules are named ``torch_fp32``/``torch_int8`` rather than ``torch`` so that nothing can shadow the torch package.

May import: torch, ``tools.core``, ``tools.models.threads``; onnx and onnxruntime only in
``onnx_runtime``, openvino only in ``openvino_bf16``, when a model first needs it; never ``tools.models.hub``
(the hub imports the backends).
"""

from __future__ import annotations

from typing import Any, Protocol

import torch


class EncoderModel(Protocol):
    """What a backend reads of a model (a ``tools.models.hub.LoadedModel``; named here without importing it)."""

    encoder: torch.nn.Module
    device: torch.device
    tokenizer: Any


class Backend(Protocol):
    """Computes one padded batch's states."""

    #: "torch", "torch-int8", "onnx", "onnx-int8", "openvino-bf16": named in replies and benchmarks.
    name: str

    def run(self, lm: EncoderModel, feed: dict[str, torch.Tensor], attentions: bool,
            threads: int, last_only: bool = False) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Every hidden state (L+1, B, T, D) and, if asked, attentions (B, L, H, T, T), float32 on CPU.

        Args:
            lm: the model.
            feed: ``input_ids``, ``attention_mask`` and (when the model takes them)
                ``token_type_ids``, (B, T) int64 on CPU.
            attentions: whether attention weights are wanted.
            threads: the torch thread count already set for this pass (a backend
                with its own thread pool sizes it to match).
            last_only: only the last hidden state is wanted (sentence vectors): return it alone,
                (1, B, T, D), and skip copying the others (ignored when ``attentions``).
        """
        ...

    def run_many(self, lm: EncoderModel, feeds: list[dict[str, torch.Tensor]], attentions: bool,
                 threads: int, last_only: bool = False) -> list[tuple[torch.Tensor, torch.Tensor | None]]:
        """:meth:`run` for each of several padded batches, in order; a backend with workers of its own may
        run them side by side."""
        ...
