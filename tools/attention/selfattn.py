"""Self-attention rebuilt by hand from a layer's own weights, and proven equal to the model's.

Layer L (1-based, as in ``attend``) reads hidden state L-1. Its query, key and value
projections are applied with plain matrix products, split into heads, scaled by
sqrt(head size), softmaxed over the key axis, and compared with the attention
weights the model itself returned in the same forward pass. This module computes the facts;
the words are in :mod:`~tools.attention.replies`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import pandas as pd
import torch

from tools.attention import replies
from tools.attention.facts import RebuiltAttention, Shapes, ToyAttention
from tools.attention.inputs import check_attention_layer, check_head, check_text, encode_one, token_labels
from tools.attention.patterns import chart_data
from tools.core.errors import UserError
from tools.core.timing import answer
from tools.models.hub import LoadedModel, as_model
from tools.models.names import FAST_SUFFIX

#: The rebuilt weights must match the model's to this (float32 arithmetic in the model).
TOLERANCE = 1e-5
#: The toy's random projections are drawn from this seed, so a reply can be reproduced.
TOY_SEED = 0


@dataclass(frozen=True)
class Projections:
    """A layer's query/key/value weights (out x in) and biases, as float64 CPU tensors."""

    wq: torch.Tensor
    bq: torch.Tensor | None
    wk: torch.Tensor
    bk: torch.Tensor | None
    wv: torch.Tensor
    bv: torch.Tensor | None


def _bert_style(encoder: torch.nn.Module, index: int) -> tuple[torch.nn.Module, ...] | None:
    layers = getattr(getattr(encoder, "encoder", None), "layer", None)
    if layers is None or not hasattr(layers[index].attention, "self"):
        return None
    block = layers[index].attention.self
    return (block.query, block.key, block.value) if hasattr(block, "query") else None


def _distilbert_style(encoder: torch.nn.Module, index: int) -> tuple[torch.nn.Module, ...] | None:
    layers = getattr(getattr(encoder, "transformer", None), "layer", None)
    if layers is None:
        return None
    block = layers[index].attention
    return (block.q_lin, block.k_lin, block.v_lin) if hasattr(block, "q_lin") else None


#: How to find the query/key/value projections in the architectures we know.
LOCATORS: tuple[Callable[[torch.nn.Module, int], tuple[torch.nn.Module, ...] | None], ...] = (
    _bert_style,
    _distilbert_style,
)


def projections(lm: LoadedModel, layer: int) -> Projections:
    """The query/key/value weights of 1-based ``layer``, copied to float64 on the CPU."""
    if lm.name.endswith(FAST_SUFFIX):
        raise UserError(
            f"`selfattn` rebuilds attention from float weights, and {lm.name} stores them in int8 (the fast "
            f"path); run it on `{lm.name.removesuffix(FAST_SUFFIX)}` instead."
        )
    for locate in LOCATORS:
        found = locate(lm.encoder, layer - 1)
        if found is not None:
            def grab(lin: torch.nn.Module) -> tuple[torch.Tensor, torch.Tensor | None]:
                bias = None if lin.bias is None else lin.bias.detach().double().cpu()
                return lin.weight.detach().double().cpu(), bias

            (wq, bq), (wk, bk), (wv, bv) = (grab(lin) for lin in found)
            return Projections(wq, bq, wk, bk, wv, bv)
    raise UserError(
        f"`selfattn` knows BERT-style layers (query/key/value projections); {lm.name} "
        f"({type(lm.encoder).__name__}) is built differently, so use `attend` for its attention."
    )


# --- the arithmetic -----------------------------------------------------------------------------

def _linear(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor | None) -> torch.Tensor:
    return x @ w.T + (b if b is not None else 0.0)


def split_heads(x: torch.Tensor, heads: int) -> torch.Tensor:
    """(T, heads * d) -> (heads, T, d)."""
    t, width = x.shape
    return x.reshape(t, heads, width // heads).transpose(0, 1)


def causal_mask(t: int) -> torch.Tensor:
    """True where a query may look: the key is at or before the query (lower triangle)."""
    return torch.tril(torch.ones(t, t, dtype=torch.bool))


def scaled_dot_product(q: torch.Tensor, k: torch.Tensor, causal: bool = False) -> torch.Tensor:
    """softmax(q k^T / sqrt(d)) over the key axis, per head; (H, T, d) x 2 -> (H, T, T).

    With ``causal``, scores above the diagonal become -inf before the softmax, so each
    query's weights on later keys are exactly 0 and its row still sums to 1.
    """
    scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    if causal:
        scores = scores.masked_fill(~causal_mask(scores.shape[-1]), float("-inf"))
    scores = scores - scores.max(dim=-1, keepdim=True).values  # key axis: the last one
    exp = torch.exp(scores)
    return exp / exp.sum(dim=-1, keepdim=True)


@dataclass(frozen=True)
class Rebuilt:
    """Hand-computed attention: weights (H, T, T) and context vectors (T, H * d)."""

    weights: torch.Tensor
    context: torch.Tensor
    q: torch.Tensor


def rebuild(hidden: torch.Tensor, proj: Projections, heads: int, causal: bool = False) -> Rebuilt:
    """Multi-head scaled dot-product attention from hidden states and projections."""
    x = hidden.double()
    q = split_heads(_linear(x, proj.wq, proj.bq), heads)
    k = split_heads(_linear(x, proj.wk, proj.bk), heads)
    v = split_heads(_linear(x, proj.wv, proj.bv), heads)
    weights = scaled_dot_product(q, k, causal)
    context = (weights @ v).transpose(0, 1).reshape(x.shape[0], -1)
    return Rebuilt(weights, context, q)


def toy_projections(hidden_size: int, heads: int, seed: int = TOY_SEED) -> Projections:
    """Random (untrained) projections that split ``hidden_size`` into ``heads`` heads."""
    g = torch.Generator().manual_seed(seed)
    scale = 1.0 / math.sqrt(hidden_size)
    wq, wk, wv = (torch.randn(hidden_size, hidden_size, generator=g, dtype=torch.float64) * scale
                  for _ in range(3))
    return Projections(wq, None, wk, None, wv, None)


def row_checks(weights: torch.Tensor, causal: bool) -> pd.DataFrame:
    """Per head: the largest weight above the diagonal and the worst row-sum error."""
    t = weights.shape[-1]
    above = weights.masked_fill(causal_mask(t), 0.0).amax(dim=(-1, -2))
    sums = (weights.sum(-1) - 1.0).abs().amax(-1)
    return pd.DataFrame({
        "head": range(1, weights.shape[0] + 1),
        "max weight above diagonal": above.numpy(),
        "max |row sum - 1|": sums.numpy(),
        "masked": "causal" if causal else "none",
    })


# --- the command ------------------------------------------------------------------------------------

def shapes(hidden: torch.Tensor, proj: Projections, rebuilt: Rebuilt) -> Shapes:
    """Every step's shape, read from the tensors themselves."""
    return Shapes(tuple(hidden.shape), tuple(proj.wq.shape), tuple(rebuilt.q.shape), tuple(rebuilt.weights.shape),
                  tuple(rebuilt.context.shape))


def rebuilt_attention(
    model: LoadedModel | str | None,
    texts: Sequence[str],
    layer: int | None = None,
    head: int | None = None,
    causal: bool = False,
    heads: int | None = None,
) -> RebuiltAttention | ToyAttention:
    """Rebuild a layer's self-attention by hand and compare it with the model's.

    Args:
        model: a loaded model or its name.
        texts: one text.
        layer: attention layer, 1-based (default: the last layer); it reads hidden state layer-1.
        head: the head drawn in the chart, 1-based (default 1); every head is in the tables.
        causal: also apply the lower-triangular (decoder) mask and show the masked weights.
        heads: a head count different from the model's: a TOY with random projections
            that splits the hidden size into that many heads (the model is not compared).

    Returns:
        The facts; ``selfattn`` (the same call) answers with a Result:
        Per-head largest difference from the model's weights (must be < 1e-5), the
        shapes of every step, causal checks, a heatmap; downloads: the rebuilt weights
        (``.npy``) and the chart spec.
    """
    lm = as_model(model)
    check_text(texts, "selfattn", most=1)
    layer = check_attention_layer(lm, layer) or lm.num_layers
    head = check_head(lm, head) if heads is None or heads == lm.num_heads else head
    if heads is not None and heads != lm.num_heads:
        _check_toy(lm, heads, head)
        return _toy(lm, texts, layer, causal, heads)
    head = head or 1
    enc, warnings = encode_one(lm, texts)
    hidden = enc.hidden_states[layer - 1]
    proj = projections(lm, layer)
    rebuilt = rebuild(hidden, proj, lm.num_heads)
    assert enc.attentions is not None, "encode_one refuses an encoding without them"
    model_w = enc.attentions[layer - 1].double()
    per_head = (rebuilt.weights - model_w).abs().amax(dim=(-1, -2)).numpy()
    panels = [({"weights": "rebuilt by hand"}, rebuilt.weights[head - 1].numpy()),
              ({"weights": "the model's"}, model_w[head - 1].numpy())]
    downloads, checks = rebuilt.weights, None
    if causal:
        masked = rebuild(hidden, proj, lm.num_heads, causal=True)
        checks = row_checks(masked.weights, causal=True)
        panels = [({"weights": "rebuilt, unmasked"}, rebuilt.weights[head - 1].numpy()),
                  ({"weights": "rebuilt, causal mask"}, masked.weights[head - 1].numpy())]
        downloads = torch.stack([rebuilt.weights, masked.weights])
    return RebuiltAttention(
        lm.name, layer, head, causal, lm.num_heads, lm.hidden_size, hidden.shape[0], per_head, per_head < TOLERANCE,
        shapes(hidden, proj, rebuilt), checks, chart_data(panels, token_labels(enc)), downloads.float().numpy(),
        warnings,
    )


#: The one-call tool: :func:`rebuilt_attention` answered as a Result by the family's formatter.
selfattn = answer(rebuilt_attention, replies.selfattn, "selfattn")


def _check_toy(lm: LoadedModel, heads: int, head: int | None) -> None:
    divisors = [n for n in range(1, lm.hidden_size + 1) if lm.hidden_size % n == 0 and n <= 64]
    if heads < 1 or lm.hidden_size % heads:
        raise UserError(
            f"--heads {heads} does not divide {lm.name}'s hidden size {lm.hidden_size}; use one of "
            f"{', '.join(map(str, divisors))}."
        )
    if heads > 64:
        raise UserError(f"--heads {heads} is too many for the toy; use one of {', '.join(map(str, divisors))}.")
    if head is not None and not 1 <= head <= heads:
        raise UserError(f"--head {head} is out of range: the toy has heads 1 to {heads} (numbered from 1).")


def _toy(lm: LoadedModel, texts: Sequence[str], layer: int, causal: bool, heads: int) -> ToyAttention:
    enc, warnings = encode_one(lm, texts)
    hidden = enc.hidden_states[layer - 1]
    proj = toy_projections(lm.hidden_size, heads)
    plain = rebuild(hidden, proj, heads)
    shown = rebuild(hidden, proj, heads, causal=True) if causal else plain
    panels = [({"toy head": i + 1}, shown.weights[i].numpy()) for i in range(min(heads, 12))]
    return ToyAttention(
        lm.name, lm.num_heads, layer, causal, heads, TOY_SEED, lm.hidden_size, hidden.shape[0],
        row_checks(shown.weights, causal), shapes(hidden, proj, plain), chart_data(panels, token_labels(enc)),
        shown.weights.float().numpy(), warnings,
    )
