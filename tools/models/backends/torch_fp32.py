"""The PyTorch backend: the encoder itself (float32, or with int8 Linear layers as ``torch-int8``)."""

from __future__ import annotations

import torch

from tools.models.backends import EncoderModel


class TorchBackend:
    """Hidden states through PyTorch's fused attention (``sdpa``) when no attention weights are wanted.

    ``sdpa`` gives the same numbers faster; attentions need the eager implementation
    the model was loaded with. The switch is made and undone around each pass, which
    the caller runs under the process-wide torch lock (``tools.models.threads``).
    """

    def __init__(self, name: str = "torch") -> None:
        self.name = name

    def run(self, lm: EncoderModel, feed: dict[str, torch.Tensor], attentions: bool,
            threads: int, last_only: bool = False) -> tuple[torch.Tensor, torch.Tensor | None]:
        """See :class:`tools.models.backends.Backend`."""
        batch = {k: v.to(lm.device) for k, v in feed.items()}
        last_only = last_only and not attentions
        with torch.inference_mode(), _attention_kind(lm.encoder, attentions):
            out = lm.encoder(**batch, output_hidden_states=not last_only, output_attentions=attentions)
            states = (out.last_hidden_state,) if last_only else out.hidden_states
            hidden = torch.stack(states, dim=0).float().cpu()  # (L+1, B, T, D), or (1, B, T, D)
            attn = torch.stack(out.attentions, dim=1).float().cpu() if attentions else None  # (B, L, H, T, T)
        return hidden, attn

    def run_many(self, lm: EncoderModel, feeds: list[dict[str, torch.Tensor]], attentions: bool,
                 threads: int, last_only: bool = False) -> list[tuple[torch.Tensor, torch.Tensor | None]]:
        """One batch after another (PyTorch spreads each over its own threads)."""
        return [self.run(lm, feed, attentions, threads, last_only) for feed in feeds]


class _attention_kind:
    """Use ``sdpa`` for a forward pass that needs no attention weights, when the model supports it."""

    def __init__(self, encoder: torch.nn.Module, attentions: bool) -> None:
        self.encoder = encoder
        self.wanted = "eager" if attentions else "sdpa"

    def __enter__(self) -> None:
        self.before = getattr(self.encoder.config, "_attn_implementation", None)
        self.switched = False
        if self.before is not None and self.before != self.wanted and _can_switch(self.encoder):
            try:
                self.encoder.set_attn_implementation(self.wanted)
                self.switched = True
            except (ValueError, ImportError):  # a model without sdpa keeps eager
                pass

    def __exit__(self, *exc: object) -> None:
        if self.switched:
            self.encoder.set_attn_implementation(self.before)


def _can_switch(encoder: torch.nn.Module) -> bool:
    check = getattr(encoder, "_can_set_attn_implementation", None)
    return bool(check and check() and getattr(encoder, "_supports_sdpa", False))
