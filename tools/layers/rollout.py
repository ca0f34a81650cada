"""Attention rollout and attention flow (Abnar & Zuidema 2020), beside the raw attention, and how well
the [CLS] row agrees with a gradient attribution.

Per attention layer l: A_l = 0.5·mean_heads(attention_l) + 0.5·I, rows renormalised to sum to 1
(the residual connection counted as attention to oneself). Rollout: R_1 = A_1, R_l = A_l·R_{l-1};
R_L[i, j] is how much output token i draws on input token j. Flow: the layered graph with a node
per token per hidden state 0..L and an edge from token i at hidden state l to token j at l-1 of
capacity A_l[i, j]; the flow from output i to input j is the maximum flow between those nodes
(networkx, one max-flow per pair, so the tokens are capped at :data:`MAX_FLOW_TOKENS`).

The attribution: a_j = |Σ_d e_jd · ∂‖h_[CLS]‖/∂e_jd|, the gradient of the norm of the last hidden
state's first token ([CLS]) with respect to the word-embedding row e_j the encoder reads for input
token j, times that row, summed over the hidden dimension.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from tools.core import cancel
from tools.core.errors import UserError
from tools.core.text import code
from tools.core.timing import answer
from tools.encoding.encode import encode
from tools.layers import replies_maps
from tools.layers.facts import AttentionRollout, RolloutMethod
from tools.layers.inputs import Progress, report
from tools.models.gpu import gpu
from tools.models.hub import LoadedModel, as_model, model_by_key
from tools.models.threads import threads_for

#: The most tokens (special ones included) rollout draws: two T x T heatmaps stay under the chart-row limit.
MAX_ROLLOUT_TOKENS = 48
#: The most tokens flow computes: one max-flow per (output, input) pair.
MAX_FLOW_TOKENS = 24


def residual_attention(attentions: np.ndarray) -> np.ndarray:
    """(L, H, T, T) attention -> (L, T, T): 0.5·mean over heads + 0.5·I, rows renormalised."""
    mean = np.asarray(attentions, dtype=np.float64).mean(axis=1)
    a = 0.5 * mean + 0.5 * np.eye(mean.shape[-1])
    return a / a.sum(axis=-1, keepdims=True)


def rollout_matrices(attentions: np.ndarray) -> np.ndarray:
    """(L, H, T, T) attention -> (L, T, T): the rollout up to each layer, R_l = A_l · R_{l-1}, R_1 = A_1."""
    a = residual_attention(attentions)
    out = np.empty_like(a)
    out[0] = a[0]
    for layer in range(1, len(a)):
        out[layer] = a[layer] @ out[layer - 1]
    return out


def flow_graph(matrices: np.ndarray):
    """The layered graph of (L, T, T) matrices: node (l, i) -> (l-1, j) with capacity matrices[l-1][i, j]."""
    import networkx as nx

    graph = nx.DiGraph()
    layers, t, _ = matrices.shape
    for layer in range(1, layers + 1):
        for i in range(t):
            for j in range(t):
                graph.add_edge((layer, i), (layer - 1, j), capacity=float(matrices[layer - 1][i, j]))
    return graph


def attention_flow(matrices: np.ndarray, progress: Progress | None = None) -> np.ndarray:
    """(T, T): the maximum flow from each output token (top layer) to each input token (layer 0)."""
    import networkx as nx
    from networkx.algorithms.flow import build_residual_network, shortest_augmenting_path

    graph = flow_graph(matrices)
    residual = build_residual_network(graph, "capacity")  # reused by every pair (networkx resets it)
    layers, t, _ = matrices.shape
    out = np.zeros((t, t))
    for i in range(t):
        cancel.check()
        report(progress, 0.2 + 0.75 * i / t, f"flow from output token {i}")
        for j in range(t):
            out[i, j] = nx.maximum_flow_value(graph, (layers, i), (0, j), flow_func=shortest_augmenting_path,
                                              residual=residual)
    return out


def _seconds_for(key: str, ids: np.ndarray) -> int:
    return 15 + len(ids) // 100


@gpu(duration=_seconds_for)  # small picklable arguments: the model's key and the token ids
def _cls_gradient_on_gpu(key: str, ids: np.ndarray) -> np.ndarray:
    """|gradient x input| of the last [CLS] vector's norm per input token (see the module's docstring)."""
    lm = model_by_key(key)
    embeddings = lm.encoder.get_input_embeddings()
    device = embeddings.weight.device
    with lm.lock, threads_for(len(ids)), torch.enable_grad():
        x = embeddings(torch.from_numpy(ids).to(device)).detach().float().requires_grad_(True)
        mask = torch.ones(1, len(ids), dtype=torch.long, device=device)
        out = lm.encoder(inputs_embeds=x.unsqueeze(0), attention_mask=mask)
        (grad,) = torch.autograd.grad(out.last_hidden_state[0, 0].float().norm(), x)
        return (grad * x).sum(dim=-1).abs().detach().cpu().numpy().astype(np.float64)


def cls_attribution(lm: LoadedModel, ids: np.ndarray) -> np.ndarray:
    """(T,) the [CLS] vector's gradient x input attribution per input token (full-precision models only)."""
    if any("quantized" in type(m).__module__ for m in lm.encoder.modules()):
        raise UserError(f"{lm.name} runs in int8, which has no gradients for the attribution that `rollout` "
                        "is compared with; use the full-precision model.")
    return _cls_gradient_on_gpu(lm.key, np.asarray(ids, dtype=np.int64))


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman's rank correlation (NaN when either side is constant)."""
    from scipy.stats import spearmanr

    if np.ptp(a) == 0 or np.ptp(b) == 0:
        return float("nan")
    return float(spearmanr(a, b).statistic)


def attention_rollout(
    model: LoadedModel | str | None,
    texts: Sequence[str],
    *,
    method: RolloutMethod | str = RolloutMethod.ROLLOUT,
    progress: Progress | None = None,
    max_tokens: int | None = None,
    limit_name: str = "",
    token: str | None = None,
) -> AttentionRollout:
    """Attention rollout or attention flow (Abnar & Zuidema 2020) beside the raw last-layer attention.

    Args:
        model: a loaded model or its name.
        texts: one text (at most 48 tokens for rollout, 24 for flow, [CLS] and [SEP] included).
        method: ``rollout`` (products of the residual-adjusted attention) or ``flow`` (maximum flow
            through the same matrices).
        progress: told the share of the work done and what runs.
        max_tokens: the most tokens read (default: 48 for rollout, 24 for flow); ``limit_name`` names the
            setting that gave it, in the refusal.
        token: the output token whose row the reply reads first: a word of the text (its first word piece, the
            first place it stands) or a position; [CLS] by default.

    Returns:
        The facts; ``rollout`` (the same call) answers with a Result:
        Heatmaps of the method's output -> input matrix and of the raw last-layer attention (heads
        averaged); the input tokens [CLS] draws on most, with the Spearman correlation against the
        gradient x input attribution of the [CLS] vector; tables also as CSV.
    """
    lm = as_model(model)
    chosen = RolloutMethod.parse(method, "--method")
    if len(texts) != 1 or not str(texts[0]).strip():
        raise UserError("`rollout` takes one text, like `rollout The cat sat on the mat`.")
    cap = max_tokens or (MAX_FLOW_TOKENS if chosen is RolloutMethod.FLOW else MAX_ROLLOUT_TOKENS)
    n_tokens = len(lm.tokenizer(texts[0], truncation=False)["input_ids"])
    if n_tokens <= lm.tokenizer.num_special_tokens_to_add():
        raise UserError(f"The tokenizer finds no token in {code(texts[0], 40)} besides [CLS] and [SEP]; give "
                        "`rollout` a text with words, like `rollout The cat sat on the mat`.")
    if n_tokens > cap:
        why = "one max-flow per token pair" if chosen is RolloutMethod.FLOW else "its heatmaps stay readable"
        setting = f", {limit_name}" if limit_name else ""
        raise UserError(f"The text is {n_tokens} tokens long; `rollout --method {chosen.value}` reads at most "
                        f"{cap} tokens ({why}{setting}), so shorten the text.")
    enc = encode(lm, [texts[0]], attentions=True)[0]
    if enc.attentions is None or enc.attentions.numel() == 0:
        raise UserError(f"{lm.name} returned no attention weights; load a BERT-style model with eager attention.")
    report(progress, 0.1, "encoded")
    attn = enc.attentions.numpy()
    if chosen is RolloutMethod.FLOW:
        relevance = attention_flow(residual_attention(attn), progress)
    else:
        relevance = rollout_matrices(attn)[-1]
    attribution = cls_attribution(lm, enc.input_ids)
    report(progress, 1.0, "done")
    labels = tuple(f"{i} {t}" for i, t in enumerate(enc.tokens))
    special = np.array([s is None for s in enc.sequence_ids])
    return AttentionRollout(lm.name, lm.num_layers, tuple(enc.tokens), labels, chosen, relevance,
                            attn[-1].astype(np.float64).mean(axis=0), attribution, tuple(bool(x) for x in special),
                            spearman(relevance[0][~special], attribution[~special]), [],
                            0 if token is None else row_of(lm, list(enc.tokens), token))


def row_of(lm: LoadedModel, tokens: list[str], token: str) -> int:
    """The position of ``token`` among ``tokens``: a position as written, or the first place a word's first word
    piece stands ("tired", "##ness" as typed)."""
    said = token.strip()
    if said.isdigit():
        if int(said) >= len(tokens):
            raise UserError(f"--token {said} is past the text's {len(tokens)} tokens (positions 0 to "
                            f"{len(tokens) - 1}, [CLS] at 0).")
        return int(said)
    pieces = lm.tokenizer.tokenize(said)
    wanted = [said.lower(), *(pieces[:1] if pieces else [])]
    found = next((i for i, t in enumerate(tokens) if t.lower() in wanted), None)
    if found is None:
        listed = " ".join(tokens[1:-1])
        raise UserError(f"--token {code(said, 30)} is none of the text's tokens ({code(listed, 80)}); give a word of "
                        "the text or a position ([CLS] is 0).")
    return found


#: The one-call tool: :func:`attention_rollout` answered as a Result by the family's formatter.
rollout = answer(attention_rollout, replies_maps.rollout, "rollout")
