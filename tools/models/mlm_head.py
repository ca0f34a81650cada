"""A model's masked-LM head, loaded once per model and refused when any of its weights would be random."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch

from tools.models.hub import LoadedModel


@dataclass(frozen=True)
class MaskedLMHead:
    """A model's masked-LM network, or why it may not be used.

    Attributes:
        network: the ``AutoModelForMaskedLM`` module, or None when refused.
        missing: checkpoint weights transformers reported missing (initialised at random).
        problem: why there is no usable head ("" when there is one).
    """

    network: torch.nn.Module | None
    missing: tuple[str, ...] = ()
    problem: str = ""

    @property
    def usable(self) -> bool:
        return self.network is not None


def _is_head_key(key: str, base_prefix: str) -> bool:
    return ("cls.predictions" in key or "lm_head" in key or "predictions." in key
            or not key.startswith(f"{base_prefix}."))


#: Words in the names of masked-LM head weights (BERT's `cls.predictions`, RoBERTa's `lm_head`, ALBERT's and ELECTRA's
#: `predictions`, DistilBERT's `vocab_transform` and `vocab_projector`).
HEAD_WORDS = ("cls.predictions", "lm_head", "predictions.", "vocab_transform", "vocab_projector")


def _location(lm: LoadedModel) -> str:
    """The folder the hub loaded ``lm`` from (a hub model: its cached folder, which the hub records in the config)."""
    return lm.source.location if lm.source.kind != "hub" else (lm.config.name_or_path or lm.source.location)


def _build_head(lm: LoadedModel) -> MaskedLMHead:
    """Load ``AutoModelForMaskedLM`` from the folder the hub loaded ``lm`` from; refuse random heads."""
    from transformers import AutoModelForMaskedLM
    from transformers.utils import logging as transformers_logging

    location = _location(lm)
    was = transformers_logging.get_verbosity()
    transformers_logging.set_verbosity_error()  # its load report would fill the terminal; `missing` says it all
    try:
        network, info = AutoModelForMaskedLM.from_pretrained(
            location, attn_implementation="eager", trust_remote_code=False, output_loading_info=True
        )
    except (ValueError, KeyError, OSError) as exc:  # an architecture with no masked-LM class
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:160]
        return MaskedLMHead(None, (), f"transformers has no masked-LM head for it ({first})")
    finally:
        transformers_logging.set_verbosity(was)
    prefix = getattr(network, "base_model_prefix", "") or "bert"
    missing = tuple(sorted(info.get("missing_keys", ()) or ()))
    head_missing = [k for k in missing if _is_head_key(k, prefix)]
    if missing:
        keys = head_missing or list(missing)
        what = "masked-LM head weight" if head_missing else "weight"
        return MaskedLMHead(None, missing, f"transformers reports {len(keys)} {what}{'s' if len(keys) > 1 else ''} "
                                           f"missing, such as {keys[0]}, which would be random")
    network.eval().to(lm.device)
    return MaskedLMHead(network, ())


def loaded_head(lm: LoadedModel) -> MaskedLMHead | None:
    """The model's masked-LM head when :func:`masked_lm_head` has loaded it already, else None (nothing is loaded)."""
    return lm.state.mlm_head


def head_known_missing(lm: LoadedModel) -> bool:
    """Whether ``lm`` is known to have no usable masked-LM head, nothing loaded to find out: its head was loaded and
    refused, or its checkpoint's weight names (a safetensors file's header, read without its weights) hold none."""
    head = loaded_head(lm)
    if head is not None:
        return not head.usable
    checkpoint = Path(_location(lm)) / "model.safetensors"
    if not checkpoint.is_file():
        return False  # (another format: only loading it would tell)
    from safetensors import safe_open

    try:
        with safe_open(str(checkpoint), "pt") as weights:
            names = list(weights.keys())
    except (OSError, ValueError, RuntimeError):  # unreadable: loading it would say why
        return False
    return not any(word in name for name in names for word in HEAD_WORDS)


def masked_lm_head(lm: LoadedModel) -> MaskedLMHead:
    """The model's masked-LM head, loaded on first use and kept in the model's state."""
    with lm.lock:
        if lm.state.mlm_head is None:
            lm.state.mlm_head = _build_head(lm)
        return lm.state.mlm_head
