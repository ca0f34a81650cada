"""A model's masked-LM head, loaded once per model and refused when any of its weights would be random."""

from __future__ import annotations

from dataclasses import dataclass

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


def _build_head(lm: LoadedModel) -> MaskedLMHead:
    """Load ``AutoModelForMaskedLM`` from the folder the hub loaded ``lm`` from; refuse random heads."""
    from transformers import AutoModelForMaskedLM
    from transformers.utils import logging as transformers_logging

    # The hub loads hub models from their cached folder and records it in the config.
    location = lm.source.location if lm.source.kind != "hub" else (lm.config.name_or_path or lm.source.location)
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


def masked_lm_head(lm: LoadedModel) -> MaskedLMHead:
    """The model's masked-LM head, loaded on first use and kept in the model's state."""
    with lm.lock:
        if lm.state.mlm_head is None:
            lm.state.mlm_head = _build_head(lm)
        return lm.state.mlm_head
