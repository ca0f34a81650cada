"""The words of `why`: its facts (an exact token-pair split, or integrated gradients) into a Result.

Part of the similarity family's one formatter (:mod:`~tools.similarity.replies` has the other
commands); :mod:`~tools.similarity.why` computes the facts and calls :func:`why`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from tools.charts import why as why_charts
from tools.core.results import Chart, Result, Table
from tools.core.text import code, layer_note, md
from tools.encoding.pooling import Pooling
from tools.similarity.facts import WhyExact, WhyGradients

#: Rows of the `pairs` table (the largest contributions by size); the chart shows at most 60 x 60 tokens.
MAX_PAIR_ROWS = 5000
MAX_HEAT_TOKENS = 60
SBERT_NOTE = "; this model's sbert recipe is a mean of token vectors, so the split is exact"


def why(f: WhyExact | WhyGradients) -> Result:
    """The exact split: the top word pairs, tables tokens/pairs/words, the pair heatmap and token bars.
    Integrated gradients: each text's top words, the completeness check, tables tokens/words/completeness."""
    return _why_exact(f) if isinstance(f, WhyExact) else _why_gradients(f)


def _why_exact(f: WhyExact) -> Result:
    where = layer_note(f.layer, f.num_layers)
    warnings = list(f.warnings)
    n, m = f.matrix.shape
    ranked = f.pairs.reindex(f.pairs["contribution"].sort_values(ascending=False).index)
    if len(f.pairs) > MAX_PAIR_ROWS:
        warnings.append(f"The pairs table holds the {MAX_PAIR_ROWS:,} largest of {len(f.pairs):,} pair "
                        "contributions (by size); the tokens table holds every token's total.")
        ranked = ranked.reindex(ranked["contribution"].abs().sort_values(ascending=False).index).head(MAX_PAIR_ROWS)
    shown = [Chart("pairs", _pair_heatmap(f, where)),
             Chart("tokens", why_charts.token_bars(f.tokens, title="Each token's share (row / column sums)"))]
    named = ", ".join(f"{code(wa, 30)} ↔ {code(wb, 30)} ({value:.4f})" for wa, wb, value in f.top_pairs)
    top_share = sum(value for _, _, value in f.top_pairs) / f.cosine if f.cosine else 0.0
    text = (f"Cosine similarity **{f.cosine:.4f}** ({f.pooling.value} pooling, {where}, {md(f.model)}) is exactly "
            f"the sum of {n} x {m} token-pair contributions (t_i · u_j / (n m |ā| |ū|))"
            f"{SBERT_NOTE if f.pooling is Pooling.SBERT else ''}. "
            f"{_named_pairs(named, top_share, f.cosine)} "
            f"Special tokens account for {_part(f.special_sum, f.cosine)} and punctuation for "
            f"{_part(f.punct_sum, f.cosine)}.")
    settings = {"pool": f.pooling.value, "layer": f.layer, "method": "exact token-pair decomposition",
                "cosine": round(f.cosine, 6)}
    tables = [Table("tokens", f.tokens.drop(columns=["label"])), Table("pairs", ranked.reset_index(drop=True)),
              Table("words", f.words)]
    return Result("why", text, tables, shown, warnings, f.model, settings=settings)


def _named_pairs(named: str, share: float, cosine: float) -> str:
    if not named:
        return "Every pair has a special token in it: a text holds nothing but special tokens."
    return f"The word pairs that carry most: {named}{f'; together {share:.0%} of it' if cosine > 0 else ''}."


def _part(value: float, total: float) -> str:
    return f"{value:+.4f} ({value / total:.0%} of it)" if total > 0 else f"{value:+.4f}"


def _pair_heatmap(f: WhyExact, where: str):
    """The heatmap of the pairs; long texts keep the tokens with the largest shares, in order."""
    keep_a = sorted(np.argsort(-np.abs(f.a_totals))[:MAX_HEAT_TOKENS].tolist())
    keep_b = sorted(np.argsort(-np.abs(f.b_totals))[:MAX_HEAT_TOKENS].tolist())
    la = [f"{i} {f.a_tokens[i]}" for i in keep_a]
    lb = [f"{j} {f.b_tokens[j]}" for j in keep_b]
    sub = f.matrix[np.ix_(keep_a, keep_b)]
    frame = pd.DataFrame({"a token": np.repeat(la, len(lb)), "b token": np.tile(lb, len(la)),
                          "contribution": sub.ravel(), "share": sub.ravel() / f.cosine if f.cosine else 0.0})
    cut = "" if len(keep_a) == len(f.a_tokens) and len(keep_b) == len(f.b_tokens) else \
        f" (the {MAX_HEAT_TOKENS} tokens with the largest shares per text)"
    title = f"Token pairs adding up to cosine {f.cosine:.4f} ({f.pooling.value}, {where}, {f.model}){cut}"
    return why_charts.pair_heatmap(frame, a_order=la, b_order=lb, title=title)


def _why_gradients(f: WhyGradients) -> Result:
    where = layer_note(f.layer, f.num_layers)
    parts = []
    for i, best in enumerate(f.top_words):
        named = ", ".join(f"{code(word, 30)} ({value:+.4f})" for word, value in best)
        parts.append(f"text {i + 1} most from {named}" if named else f"text {i + 1} has no word token")
    check = f.completeness
    used = sorted({int(s) for s in check["steps"]})  # doubled from 32 until completeness held
    worst = float(check["relative gap"].max())
    punct = float(f.tokens.loc[f.tokens["kind"] == "punctuation", "contribution"].sum())
    text = (f"Cosine similarity **{f.cosine:.4f}** ({f.pooling.value} pooling, {where}, {md(f.model)}) has no "
            f"exact split over tokens, so integrated gradients ({' and '.join(map(str, used))} steps; baseline: "
            f"{f.baseline}) show how much each token raises the similarity to the other text over the blanked-out "
            f"text: {'; '.join(parts)}. Punctuation adds {punct:+.4f}; special tokens are kept in the baseline, "
            f"so they get 0. Completeness: the attributions add up to the score minus the baseline score within "
            f"{worst:.1%} (table `completeness`).")
    settings = {"pool": f.pooling.value, "layer": f.layer, "method": "integrated gradients",
                "steps": int(check["steps"].max()), "tolerance": f.tolerance, "baseline": f.baseline,
                "cosine": round(f.cosine, 6)}
    shown = [Chart("tokens", why_charts.token_bars(f.tokens, title="Integrated gradients per token"))]
    tables = [Table("tokens", f.tokens.drop(columns=["label"])), Table("words", f.words),
              Table("completeness", check)]
    return Result("why", text, tables, shown, f.warnings, f.model, settings=settings)


def why_difference(a: WhyExact | WhyGradients, b: WhyExact | WhyGradients, names: tuple[str, str]) -> str:
    """The two cosines and, when both tokenizers agree, the largest gap between token contributions."""
    ta, tb = why(a).table("tokens"), why(b).table("tokens")
    ca, cb = round(a.cosine, 6), round(b.cosine, 6)  # as the replies state it
    text = f"cosine {ca:.4f} vs {cb:.4f} ({cb - ca:+.4f})"
    if list(ta["token"]) == list(tb["token"]):
        gaps = np.abs(ta["contribution"].to_numpy() - tb["contribution"].to_numpy())
        k = int(gaps.argmax())
        text += f"; token contributions differ by at most {float(gaps.max()):.4f} (at {code(ta['token'][k], 20)})"
    else:
        text += "; the two tokenizers split the texts differently"
    return text + "."
