"""Loading a tokenizer and an eager-attention encoder safely: safetensors first, never remote code."""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any

import torch

from tools.core.errors import UserError
from tools.models.names import OFFLINE_DEFAULT, ModelSource, hub_reachable
from tools.models.st_config import local_folder


def load_parts(source: ModelSource, device: torch.device) -> tuple[Any, torch.nn.Module]:
    """The tokenizer and the encoder (``attn_implementation="eager"``, in eval mode, on ``device``).

    A ``.bin`` checkpoint is read only through transformers' own weights-only loader.

    Raises:
        UserError: the model asks to run its own code, cannot be reached, or fails to load.
    """
    from transformers import AutoConfig, AutoModel, AutoTokenizer

    location = source.location
    if source.kind == "hub":
        location = _cached_or_reachable(source)
    refuse_remote_code(source, Path(location))
    try:
        config = AutoConfig.from_pretrained(location, trust_remote_code=False)
    except Exception as exc:  # network, missing repo, unreadable folder
        raise UserError(load_failure(source, exc)) from exc
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
        raise UserError(load_failure(source, exc)) from exc
    encoder.eval().to(device)  # on ZeroGPU this runs at start-up, where `spaces` expects it
    return tokenizer, encoder


def _cached_or_reachable(source: ModelSource) -> str:
    """A hub model's cached folder, or its id when the hub answers; else refuse at once.

    Without this, huggingface_hub retries an unreachable host for about 25 seconds.
    """
    cached = local_folder(source)
    if cached is not None and (cached / "config.json").is_file():
        return str(cached)
    if not hub_reachable():
        raise UserError(load_failure(source, ConnectionError("hub unreachable")))
    return source.location


def refuse_remote_code(source: ModelSource, folder: Path) -> None:
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


def load_failure(source: ModelSource, exc: Exception) -> str:
    """The one sentence a person reads when ``source`` failed to load with ``exc``."""
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
