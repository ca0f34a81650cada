"""ModelHub: loads each model once per (name, device); LoadedModel and its typed per-model state.

The hub is the one shared mutable object of a process: every conversation shares
its loaded models (read-only at inference time); everything else is per
conversation. Every loaded model is also entered in a process registry under a
:attr:`LoadedModel.key`, so a function across the GPU boundary (``tools.models.gpu``) is
given that short string, never the model, and finds the model again with
:func:`model_by_key` (in a forked ZeroGPU worker the registry is inherited).
"""

from __future__ import annotations

import dataclasses
import itertools
import threading
import weakref
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import torch

from tools.core.cache import ByteLRU
from tools.core.config import Settings
from tools.core.errors import UserError
from tools.models.backends import Backend
from tools.models.backends.torch_fp32 import TorchBackend
from tools.models.cpu import FastKernel, KernelChoice
from tools.models.kernels import fast_kernel
from tools.models.loading import load_parts
from tools.models.names import FAST_SUFFIX, ModelSource, pick_device, resolve, split_fast
from tools.models.st_config import SentenceConfig, read_sentence_config
from tools.models.threads import ThreadChooser

#: Default caps of each model's encoding cache (the hub sets ASSISTANT_CACHE_MB / ASSISTANT_CACHE_SIZE).
DEFAULT_CACHE_BYTES = 256 * 2**20
DEFAULT_CACHE_ENTRIES = 4096
_UNREAD: Any = object()


@dataclass
class ModelState:
    """What each model keeps beside its weights, one typed field per thing (built by the hub or on first use).

    Attributes:
        backend: computes hidden states (chosen at load: torch, onnx for bulk passes, torch-int8, onnx-int8).
        encoding_cache: encodings keyed by (text, pair, max length, attentions).
        threads: the thread chooser for this model's large CPU passes.
        mlm_head: the masked-LM head (``tools.inspection.masking`` builds it on first use).
        input_embeddings: the unit-length input-embedding rows (``tools.similarity.neighbors``).
        sentence: the sentence-transformers recipe, read once (None: the model has none).
        references: its STS-B dev reference cosines per pooling (``tools.benchmark.reference``; empty: none).
        neighbourhoods: how close vocabulary rows' nearest neighbours are (``tools.similarity.neighbors``).
        kernel: a fast path's kernels on this CPU and why (None: not a fast path).
    """

    backend: Backend = field(default_factory=TorchBackend)
    encoding_cache: ByteLRU = field(default_factory=lambda: ByteLRU(DEFAULT_CACHE_BYTES, DEFAULT_CACHE_ENTRIES))
    threads: ThreadChooser = field(default_factory=ThreadChooser)
    mlm_head: Any = None  # tools.models.mlm_head.MaskedLMHead (not imported: it imports this module)
    input_embeddings: Any = None  # tools.similarity.neighbors.InputEmbeddings
    references: Any = None  # dict[str, tools.similarity.reference.Reference]
    neighbourhoods: Any = None  # numpy (rows, MAX_K) nearest-neighbour cosines of sampled vocabulary rows
    sentence: SentenceConfig | None = _UNREAD
    kernel: KernelChoice | None = None


_serial = itertools.count(1)
_REGISTRY: weakref.WeakValueDictionary[str, LoadedModel] = weakref.WeakValueDictionary()


@dataclass
class LoadedModel:
    """A tokenizer and an eager-attention encoder, ready for inference, and its :class:`ModelState`.

    Fields built on first use (the masked-LM head, the input-embedding index) are
    built under :attr:`lock`.
    """

    source: ModelSource
    tokenizer: Any
    encoder: torch.nn.Module
    device: torch.device
    lock: threading.RLock = field(default_factory=threading.RLock, repr=False)
    state: ModelState = field(default_factory=ModelState, repr=False)
    key: str = ""

    def __post_init__(self) -> None:
        if not self.key:
            self.key = f"{self.source.name}@{self.device}#{next(_serial)}"
        _REGISTRY[self.key] = self

    @property
    def name(self) -> str:
        return self.source.name

    @property
    def config(self) -> Any:
        return self.encoder.config

    @property
    def num_layers(self) -> int:
        return int(self.config.num_hidden_layers)

    @property
    def num_heads(self) -> int:
        return int(self.config.num_attention_heads)

    @property
    def hidden_size(self) -> int:
        return int(self.config.hidden_size)

    @property
    def max_tokens(self) -> int:
        """The most tokens one input may have (the position-embedding table's size)."""
        limit = int(getattr(self.config, "max_position_embeddings", 512))
        tok_limit = int(getattr(self.tokenizer, "model_max_length", limit) or limit)
        # RoBERTa-style models reserve two positions; the tokenizer knows the usable length.
        return min(limit, tok_limit)

    def sentence_config(self) -> dict[str, Any] | None:
        """The model's sentence-transformers pooling recipe, or None when it has none.

        Returns a dict with ``mode`` (cls / mean / max / mean_sqrt_len / lasttoken),
        ``normalize`` and ``max_seq_length``, read from the model folder's own files.
        """
        if self.state.sentence is _UNREAD:  # no lock: pooling asks under the torch lock; a second read is harmless
            self.state.sentence = read_sentence_config(self.source, self.max_tokens)
        return self.state.sentence.as_dict() if self.state.sentence is not None else None


def model_by_key(key: str) -> LoadedModel:
    """The loaded model registered under ``key`` (see :attr:`LoadedModel.key`).

    In a ZeroGPU worker forked before the model was loaded, the process hub loads
    it there by the name and device the key carries.
    """
    found = _REGISTRY.get(key)
    if found is not None:
        return found
    name, _, rest = key.rpartition("@")
    return default_hub().get(name, rest.split("#")[0])


def load(source: ModelSource, device: torch.device) -> LoadedModel:
    """Load a tokenizer and an eager-attention encoder (see :func:`tools.models.loading.load_parts`)."""
    tokenizer, encoder = load_parts(source, device)
    return LoadedModel(source=source, tokenizer=tokenizer, encoder=encoder, device=device)


def quantize(lm: LoadedModel, kernel: KernelChoice | None = None) -> LoadedModel:
    """The fast path (CPU only), with the kernels ``kernel`` chose for this CPU (default: int8).

    int8: hidden-state passes run an int8 ONNX export in ONNX Runtime (the ``onnx-int8``
    backend); passes with attention weights, and the fallback where no export can
    be made, run the PyTorch encoder with its Linear layers in int8 (``torch-int8``;
    the feed-forward output projections of the first half stay float32). Scores move a
    little (bench/throughput.py measures STS-B Spearman against full precision).
    bf16 (a CPU with AMX, where it measured faster than int8): hidden states run the full-precision ONNX export
    in OpenVINO in bf16 (``openvino-bf16``), attentions the float encoder; scores move far less than int8's.
    fp32 (a CPU where int8 buys too little): hidden states run the full-precision ONNX
    export and attentions the float encoder, so the vectors are full precision's.
    Either way the model's name gains ``:int8``, so every reply and link names the fast
    path, and ``model`` says which kernels it runs and why.
    """
    if lm.device.type != "cpu":
        raise UserError(f"The int8 fast path runs on the CPU only; drop `{FAST_SUFFIX}` (or ASSISTANT_FAST) "
                        f"to use {lm.device.type}.")
    from tools.models.backends.onnx_runtime import OnnxBackend, OnnxInt8Backend, export_int8, export_onnx
    from tools.models.backends.torch_int8 import quantize_encoder

    kernel = kernel or KernelChoice(FastKernel.INT8, "the int8 fast path was asked for")
    backend: Backend
    if kernel.kernel in (FastKernel.BF16, FastKernel.FP32):  # both run the full-precision export
        from tools.models.backends.openvino_bf16 import OpenVinoBackend

        encoder = lm.encoder
        full_path = export_onnx(lm, int8=False)
        if full_path is None:
            backend = TorchBackend("torch")
        elif kernel.kernel is FastKernel.BF16:
            backend = OpenVinoBackend(full_path)
        else:
            backend = OnnxBackend(full_path, "onnx", TorchBackend("torch"))
    else:
        onnx_path = export_int8(lm)  # from the float encoder, before it is quantised in place
        encoder = quantize_encoder(lm.encoder, lm.num_layers)
        backend = OnnxInt8Backend(onnx_path) if onnx_path is not None else TorchBackend("torch-int8")
    source = dataclasses.replace(lm.source, name=lm.source.name + FAST_SUFFIX)
    return LoadedModel(source=source, tokenizer=lm.tokenizer, encoder=encoder, device=lm.device,
                       state=ModelState(backend=backend, kernel=kernel))


class ModelHub:
    """Loads each model once per (name, device), lazily, safely from several threads."""

    def __init__(self, settings: Settings | None = None) -> None:
        self.settings = settings or Settings.from_env()
        self._models: dict[tuple[str, str], LoadedModel] = {}
        self._locks: dict[tuple[str, str], threading.Lock] = {}
        self._guard = threading.Lock()
        self._can_load: dict[str, bool] = {}

    def get(self, name: str | None = None, device: str | None = None) -> LoadedModel:
        """The loaded model for ``name`` (default: the configured model) on ``device``."""
        base, fast = split_fast(name or self.settings.model)
        source = resolve(base, self.settings)
        dev = pick_device(device if device is not None else self.settings.device)
        fast = fast or (self.settings.fast and dev.type == "cpu")  # ASSISTANT_FAST: CPU models only
        key = (source.location, str(dev) + (FAST_SUFFIX if fast else ""))
        with self._guard:
            if key in self._models:
                return self._models[key]
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:  # other models keep loading in parallel; this one loads once
            if key not in self._models:
                loaded = load(source, dev)
                if fast:
                    loaded = quantize(loaded, fast_kernel(loaded, self.settings.fast_kernel))
                elif dev.type == "cpu" and self.settings.onnx_rows > 0:
                    from tools.models.backends.onnx_runtime import OnnxBackend

                    loaded.state.backend = OnnxBackend.lazy(loaded, self.settings.onnx_rows)
                loaded.state.encoding_cache = ByteLRU(self.settings.cache_mb * 2**20, self.settings.cache_size)
                with self._guard:
                    self._models[key] = loaded
            return self._models[key]

    def can_load(self, name: str) -> bool:
        """Whether ``name`` loads here (it is then loaded); the answer is kept for this hub's life."""
        with self._guard:
            known = self._can_load.get(name)
        if known is None:
            try:
                self.get(name)
                known = True
            except UserError:
                known = False
            with self._guard:
                self._can_load[name] = known
        return known

    def known(self, name: str) -> bool | None:
        """Whether ``name`` loads here, as :meth:`can_load` found it; None when nobody has asked yet."""
        with self._guard:
            return self._can_load.get(name)

    def loaded(self) -> list[LoadedModel]:
        """The models loaded so far."""
        with self._guard:
            return list(self._models.values())


@lru_cache(maxsize=1)
def default_hub() -> ModelHub:
    """The process-wide hub (models are shared; conversations are not)."""
    return ModelHub()


def as_model(model: LoadedModel | str | None) -> LoadedModel:
    """Accept a loaded model or a name, so tools are easy to call from a notebook."""
    if isinstance(model, LoadedModel):
        return model
    return default_hub().get(model)
