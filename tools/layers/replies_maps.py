"""The words of the layers family for ``rollout`` and ``lens``: facts -> a Result.

With :mod:`~tools.layers.replies` the only places the family writes sentences, builds charts and
packs downloads; the first sentence answers and states the paper's definition; every per-layer
table is also a CSV. Hidden states are numbered 0 (embeddings) to L.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from tools import charts
from tools.core.results import Chart, Result, Table
from tools.core.text import code
from tools.layers.facts import AttentionRollout, LogitLens, RolloutMethod

#: Input tokens named as the ones [CLS] draws on most.
TOP_INPUTS = 3

RESIDUAL = "A_l = 0.5·mean over heads of layer l's attention + 0.5·I, rows renormalised"
ATTRIBUTION = ("|Σ_d e_jd·∂‖h_[CLS]‖/∂e_jd|, the gradient of the norm of the last layer's [CLS] vector with "
               "respect to input token j's word-embedding row e_j, times that row, summed over the hidden dimension")


# --- rollout -----------------------------------------------------------------------------------

def rollout(f: AttentionRollout) -> Result:
    """The method's output -> input matrix beside the raw attention, and the [CLS] row against the attribution."""
    method = f.method.value
    labels = list(f.labels)
    t = len(labels)
    tidy = pd.DataFrame({
        "output": np.repeat(labels, t).tolist() * 2,
        "input": labels * t * 2,
        "weight": np.concatenate([f.relevance.ravel(), f.raw.ravel()]),
        "matrix": [method] * (t * t) + ["raw attention, last layer (heads averaged)"] * (t * t),
    })
    chart = charts.paired_heatmaps(tidy, x="input", y="output", value="weight", panel="matrix", order=labels,
                                   title=f"{f.model}: attention {method} (outputs at the top, inputs at layer 0) "
                                         "beside the raw last-layer attention", cell=min(420, max(220, 12 * t)))
    cls_row = pd.DataFrame({
        "position": range(t), "token": f.tokens, method: np.round(f.relevance[0], 6),
        "raw attention": np.round(f.raw[0], 6), "gradient x input": np.round(f.attribution, 6),
        f"{method} rank": pd.Series(f.relevance[0]).rank(ascending=False, method="min").astype(int),
        "gradient x input rank": pd.Series(f.attribution).rank(ascending=False, method="min").astype(int),
    })
    matrix = pd.DataFrame(np.round(f.relevance, 6), columns=labels)
    matrix.insert(0, "output \\ input", labels)
    tables = [Table("[CLS] row", cls_row), Table(f"{method} matrix", matrix)]
    if f.row:  # (`--token it`: that token's row first)
        tables.insert(0, Table(f"{f.tokens[f.row]} row", pd.DataFrame({
            "position": range(t), "token": f.tokens, method: np.round(f.relevance[f.row], 6),
            "raw attention": np.round(f.raw[f.row], 6),
            f"{method} rank": pd.Series(f.relevance[f.row]).rank(ascending=False, method="min").astype(int)})))
    return Result("rollout", _rollout_text(f, cls_row), tables, [Chart("rollout", chart)], f.warnings, f.model,
                  settings={"method": method, "tokens": t, "layers": f.num_layers, "row": f"{f.row} {f.tokens[f.row]}",
                            "residual": "0.5·attention + 0.5·I", "attribution": "|gradient x input| of ||h_CLS||"})


def _rollout_text(f: AttentionRollout, cls_row: pd.DataFrame) -> str:
    method = f.method.value
    text_row = cls_row[~np.asarray(f.special)]
    if f.method is RolloutMethod.ROLLOUT:
        definition = (f"attention rollout (Abnar & Zuidema 2020) multiplies the per-layer matrices {RESIDUAL}, "
                      "from the first layer up: R_L = A_L···A_1")
    else:
        definition = (f"attention flow (Abnar & Zuidema 2020) is the maximum flow from the output token at the top "
                      f"to the input token at layer 0 through the layered graph whose edge capacities are {RESIDUAL}")
    own = (f" (the special tokens take {float(cls_row[method][np.asarray(f.special)].sum()):.2f} of its row)"
           if f.method is RolloutMethod.ROLLOUT else "")
    first = (f"In **{f.model}**, of the text's tokens [CLS] at the top draws most on {_cls_draws_on(f)} by attention "
             f"{method}{own}; {definition}.")
    if f.row:  # (`--token it`: what that token draws on, first; then [CLS]'s, which the attribution is checked on)
        row = f.relevance[f.row]
        share = (f" (itself {row[f.row]:.2f} and the special tokens {float(row[np.asarray(f.special)].sum()):.2f} of "
                 "its row)" if f.method is RolloutMethod.ROLLOUT else "")
        first = (f"In **{f.model}**, {code(f.tokens[f.row], 30)} (position {f.row}) at the top draws most on "
                 f"{_cls_draws_on(f, row, skip=f.row)} of the text's other tokens by attention {method}{share}, "
                 f"and its raw last-layer attention (heads averaged) most on "
                 f"{_cls_draws_on(f, f.raw[f.row], skip=f.row)}; {definition}. [CLS] draws most on {_cls_draws_on(f)}.")
    raw_named = _cls_draws_on(f, f.raw[0], values=False)
    rho = "undefined (one side is constant)" if np.isnan(f.rho) else f"{f.rho:.2f}"
    parts = [
        first,
        f"Its agreement with the gradient x input attribution of [CLS], a_j = {ATTRIBUTION}: Spearman ρ = {rho} over "
        f"the text's {len(text_row)} tokens ([CLS] and [SEP] left out).",
        f"Of the text's tokens, the raw last-layer attention of [CLS] (heads averaged) goes most to {raw_named}.",
        "Rows of the matrix are output tokens at the top layer, columns input tokens;"
        + (" each rollout row sums to 1." if f.method is RolloutMethod.ROLLOUT
           else " a flow is at most 1 (the capacity out of each node)."),
    ]
    return " ".join(parts)


# --- lens --------------------------------------------------------------------------------------

def lens(f: LogitLens) -> Result:
    """Top predictions per hidden state, the final answer's rank per hidden state, and its chart."""
    layers = range(f.num_layers + 1)
    by_layer = pd.DataFrame({
        "layer": list(layers),
        "answer rank": f.answer_rank.astype(int),
        "answer probability": np.round(f.answer_probability, 6),
        **{f"top {k + 1}": [f"{f.words[layer][k]} ({f.probabilities[layer, k]:.3f})" for layer in layers]
           for k in range(f.top)},
    })
    candidates = pd.DataFrame([{"layer": layer, "rank": k + 1, "token": f.words[layer][k],
                                "probability": round(float(f.probabilities[layer, k]), 6), "id": int(f.ids[layer, k])}
                               for layer in layers for k in range(f.top)])
    curve = pd.DataFrame({"layer": list(layers), "rank": f.answer_rank.astype(int),
                          "series": f"rank of '{f.answer}'", "probability": f.answer_probability})
    chart = charts.layer_curves(curve, "rank", "series", log=True, reverse=True, y_title="rank (1 = top)",
                                title=f"{f.model}: where the final answer '{f.answer}' ranks, layer by layer")
    return Result("lens", _lens_text(f), [Table("lens by layer", by_layer), Table("lens candidates", candidates)],
                  [Chart("lens", chart)], f.warnings,
                  f.model, settings={"top": f.top, "mask position": f.position, "layers": f.num_layers,
                                     "special tokens": "left out of the ranking"})


def _settled(f: LogitLens) -> int:
    """The first hidden state from which the final answer stays the top prediction."""
    ranks = f.answer_rank
    return next((layer for layer in range(len(ranks)) if all(r == 1 for r in ranks[layer:])), len(ranks) - 1)


def _lens_text(f: LogitLens) -> str:
    ranks = f.answer_rank
    settled = _settled(f)
    first = (f"In **{f.model}** the answer {code(f.answer, 30)} (p = {f.answer_probability[-1]:.2f} at the last "
             f"layer) is the top prediction from hidden state **{settled}** on; the logit lens applies the model's "
             "own masked-LM head, unchanged, to the mask's hidden state at every layer instead of only the last.")
    path = ", ".join(f"{layer}: {code(f.words[layer][0], 20)}" for layer in range(len(ranks)))
    parts = [
        first,
        f"Its rank by hidden state: {', '.join(f'{layer}: {int(r)}' for layer, r in enumerate(ranks))}.",
        f"Top prediction by hidden state: {path}.",
        "Probabilities are the head's softmax over the whole vocabulary; special tokens are left out of the "
        "rankings, as in `mask`. Hidden state 0 is the embedding output.",
    ]
    return " ".join(parts)


# --- two models (--vs) -------------------------------------------------------------------------

def _cls_draws_on(f: AttentionRollout, row: np.ndarray | None = None, values: bool = True, skip: int = -1) -> str:
    """The text tokens [CLS]'s ``row`` (its rollout or flow row by default; another token's, without the token
    itself at ``skip``) weighs most, heaviest first, with their weights; a token the text holds twice is named with
    its position."""
    row = f.relevance[0] if row is None else row
    order = [i for i in np.argsort(-row, kind="stable") if not f.special[i] and i != skip][:TOP_INPUTS]
    named = [code(f.tokens[i], 30) + (f" at {i}" if f.tokens.count(f.tokens[i]) > 1 else "") for i in order]
    return ", ".join(f"{name} ({row[i]:.2f})" if values else name for name, i in zip(named, order, strict=True))


def rollout_difference(a: AttentionRollout, b: AttentionRollout, names: tuple[str, str]) -> str:
    """What [CLS] draws on most in each model, and each one's agreement with its gradient x input attribution."""
    rho = ["undefined" if np.isnan(f.rho) else f"{f.rho:.2f}" for f in (a, b)]
    return (f"by attention {a.method.value}, [CLS] draws most on {_cls_draws_on(a)} in {names[0]} and on "
            f"{_cls_draws_on(b)} in {names[1]}; Spearman ρ with gradient x input is {rho[0]} and {rho[1]}.")


def lens_difference(a: LogitLens, b: LogitLens, names: tuple[str, str]) -> str:
    """Each model's final answer and the hidden state from which it stays on top."""
    return (f"{names[0]} answers {code(a.answer, 30)}, on top from hidden state {_settled(a)} of {a.num_layers}; "
            f"{names[1]} answers {code(b.answer, 30)}, on top from hidden state {_settled(b)} of {b.num_layers}.")
