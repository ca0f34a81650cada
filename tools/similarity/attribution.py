"""Integrated gradients on a loaded model: which input tokens raise a similarity or a masked-LM logit.

Gradients are taken with respect to the word-embedding rows the encoder reads
(position and token-type embeddings are added inside the model, as usual). The
baseline keeps the special tokens ([CLS], [SEP], masks) and puts the padding
token's embedding in place of every other token, so the attributions explain how
the words raise the score over "the same sentence with its words blanked out".
"""

from __future__ import annotations

import torch

from tools.core.errors import UserError
from tools.encoding.pooling import Pooling
from tools.models.hub import LoadedModel
from tools.models.threads import threads_for
from tools.similarity.why_math import (
    IG_MAX_STEPS,
    IG_STEPS,
    IG_TOKEN_STEPS,
    Attribution,
    integrated_gradients,
    integrated_gradients_to,
)

#: How the baseline is described in replies.
BASELINE = "every word piece replaced by the padding token's embedding, special tokens kept"


def check_differentiable(lm: LoadedModel, network: torch.nn.Module | None = None) -> None:
    """Refuse models whose weights are quantised: they have no gradients to integrate."""
    net = network if network is not None else lm.encoder
    if any("quantized" in type(m).__module__ for m in net.modules()):
        raise UserError(f"{lm.name} runs in int8, which has no gradients for integrated gradients; use "
                        "--pool mean (an exact decomposition, no gradients needed) or the full-precision model.")


def token_ids(lm: LoadedModel, text: str, max_length: int | None = None) -> torch.Tensor:
    """The ids the encoder reads for ``text`` (truncated at the model's limit, or ``max_length``)."""
    limit = min(max_length or lm.max_tokens, lm.max_tokens)
    return torch.tensor(lm.tokenizer(text, truncation=True, max_length=limit)["input_ids"])


def blank_baseline(lm: LoadedModel, ids: torch.Tensor, embeddings: torch.nn.Module,
                   keep: set[int] | None = None) -> torch.Tensor:
    """The baseline input: special tokens (and ids in ``keep``) as they are, every other token the padding row."""
    tok = lm.tokenizer
    kept = set(tok.all_special_ids) | (keep or set())
    pad = tok.pad_token_id if tok.pad_token_id is not None else 0
    blank = torch.tensor([int(i) if int(i) in kept else pad for i in ids])
    with torch.no_grad():
        return embeddings(blank.to(embeddings.weight.device)).detach().float()


def _integrate(score, x: torch.Tensor, base: torch.Tensor, steps: int | None) -> Attribution:
    """Fixed ``steps`` when given (benchmarks); otherwise doubled until completeness holds, within a
    budget of points x positions (long texts stop doubling sooner; the reply reports their gap)."""
    if steps:
        return integrated_gradients(score, x, base, steps)
    most = max(IG_STEPS, min(IG_MAX_STEPS, IG_TOKEN_STEPS // max(1, x.shape[0])))
    return integrated_gradients_to(score, x, base, most=most)


def _pool(states: torch.Tensor, pooling: Pooling, mode: str) -> torch.Tensor:
    """Pool (k, T, D) states to (k, D); ``mode`` is the sentence-transformers mode for ``sbert``."""
    kind = mode if pooling is Pooling.SBERT else pooling.value
    if kind == "cls":
        return states[:, 0]
    if kind == "max":
        return states.max(dim=1).values
    if kind == "lasttoken":
        return states[:, -1]
    return states.mean(dim=1)  # mean, and mean_sqrt_len (a scale that cosine ignores)


def similarity_attribution(
    lm: LoadedModel, text: str, other: torch.Tensor, pooling: Pooling, layer: int, steps: int | None = None,
) -> tuple[list[str], Attribution]:
    """Integrated gradients of ``cos(pool(text), other)`` over the tokens of ``text``.

    Args:
        lm: a full-precision model.
        text: the text whose tokens are attributed.
        other: the other text's sentence vector (held fixed), shape (D,).
        pooling: cls, max or sbert (mean has an exact decomposition instead).
        layer: hidden state to pool (sbert reads the last one).
        steps: fixed quadrature points (default: from 32, doubled until the completeness gap is within 2%).

    Returns:
        The tokens and their attributions, with ``f(x)`` and ``f(baseline)``.
    """
    check_differentiable(lm)
    mode = ""
    cap = None
    if pooling is Pooling.SBERT:
        recipe = lm.sentence_config() or {}
        mode, cap, layer = recipe.get("mode", "mean"), recipe.get("max_seq_length"), lm.num_layers
    ids = token_ids(lm, text, cap)
    embeddings = lm.encoder.get_input_embeddings()
    target = other.detach().float().to(lm.device)

    def score(path: torch.Tensor) -> torch.Tensor:
        mask = torch.ones(path.shape[:2], dtype=torch.long, device=lm.device)
        out = lm.encoder(inputs_embeds=path.to(lm.device), attention_mask=mask, output_hidden_states=True)
        pooled = _pool(out.hidden_states[layer].float(), pooling, mode)
        return torch.nn.functional.cosine_similarity(pooled, target.unsqueeze(0), dim=-1).cpu()

    with lm.lock, threads_for(len(ids)), torch.enable_grad():
        x = embeddings(ids.to(embeddings.weight.device)).detach().float()
        base = blank_baseline(lm, ids, embeddings)
        found = _integrate(score, x.cpu(), base.cpu(), steps)
    return lm.tokenizer.convert_ids_to_tokens(ids.tolist()), found


def logit_attribution(
    lm: LoadedModel, network: torch.nn.Module, ids: torch.Tensor, position: int, token_id: int,
    steps: int | None = None,
) -> Attribution:
    """Integrated gradients of a masked-LM's logit for ``token_id`` at ``position`` over the input tokens.

    The baseline keeps special tokens and the mask tokens, and blanks every other token.
    """
    check_differentiable(lm, network)
    embeddings = network.get_input_embeddings()
    device = embeddings.weight.device

    def score(path: torch.Tensor) -> torch.Tensor:
        mask = torch.ones(path.shape[:2], dtype=torch.long, device=device)
        logits = network(inputs_embeds=path.to(device), attention_mask=mask).logits
        return logits[:, position, token_id].float().cpu()

    with lm.lock, threads_for(len(ids)), torch.enable_grad():
        x = embeddings(ids.to(device)).detach().float()
        base = blank_baseline(lm, ids, embeddings, keep={int(lm.tokenizer.mask_token_id)})
        return _integrate(score, x.cpu(), base.cpu(), steps)
