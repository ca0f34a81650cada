"""The words of the layers family for ``probe``, ``contextuality`` and ``cka``: facts -> a Result.

This and :mod:`~tools.layers.replies_maps` (``rollout``, ``lens``) are the only places the family
writes sentences, names tables, builds charts and packs downloads. Each reply's first sentence
answers the question and states the paper's definition; every per-layer table is also a CSV.
Hidden states are numbered 0 (embeddings) to L.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from tools import charts
from tools.core.results import Chart, Result, Table
from tools.core.text import code
from tools.layers.facts import CkaEstimator, CkaUnit, Contextuality, LayerSimilarity, Probing
from tools.layers.inputs import CORPUS_SOURCE, TEXTS_SOURCE

#: Words named as the most context-specific.
MOST_SPECIFIC = 5
#: The fewest sentences a picked word occurs in (as ``contextuality`` picks them).
MIN_CONTEXTS = 5


def source_note(source: str, sentences: int, seed: int) -> str:
    """Where the sentences came from, in words."""
    if source == TEXTS_SOURCE:
        return f"{sentences} sentences given"
    if source.startswith(CORPUS_SOURCE):
        return (f"{sentences} texts of corpus {code(source[len(CORPUS_SOURCE):], 40)} (drawn with seed {seed} when it "
                "holds more)")
    return f"{sentences} sentences of STS-B's training split (drawn with seed {seed})"


def _r(x: float | None, digits: int = 2) -> str:
    return "n/a" if x is None or (isinstance(x, float) and np.isnan(x)) else f"{x:.{digits}f}"


# --- probe -------------------------------------------------------------------------------------

def probe(f: Probing) -> Result:
    """Accuracy, control accuracy and selectivity per hidden state and task; the peak and expected layers."""
    rows = []
    for s in f.scores:
        for layer in range(len(s.accuracy)):
            rows.append({"task": s.task.value, "layer": layer, "accuracy": round(float(s.accuracy[layer]), 4),
                         "control accuracy": round(float(s.control[layer]), 4),
                         "selectivity": round(float(s.selectivity[layer]), 4),
                         "gain Δ": round(float(s.gains[layer]), 4)})
    by_layer = pd.DataFrame(rows)
    summary = pd.DataFrame([{
        "task": s.task.value, "labels": len(s.labels), "peak layer": s.peak,
        "peak accuracy": round(float(s.accuracy[s.peak]), 4),
        "most selective layer": int(np.argmax(s.selectivity)),
        "expected layer": None if s.expected_layer is None else round(s.expected_layer, 3),
        "majority baseline": round(s.majority, 4), "train words": s.train_words, "held-out words": s.test_words,
    } for s in f.scores])
    types = sorted({t for s in f.scores for t in s.control_labels})
    control = pd.DataFrame({"word type": types,
                            **{f"{s.task.value} control label": [s.control_labels.get(t, "") for t in types]
                               for s in f.scores}})
    curves = by_layer.melt(id_vars=["task", "layer"], value_vars=["accuracy", "control accuracy", "selectivity"],
                           var_name="measure", value_name="value")
    chart = charts.layer_curves(curves, "value", "task", dash="measure", domain=(min(0.0, curves["value"].min()), 1.0),
                                title=f"{f.model}: linear probes per hidden state (held-out sentences)")
    tables = [Table("probe by layer", by_layer), Table("probe summary", summary), Table("control task labels", control)]
    return Result("probe", _probe_text(f), tables, [Chart("probe", chart)], f.warnings, f.model,
                  settings={"task": "all" if len(f.scores) > 1 else f.scores[0].task.value,
                            "sentences": len(f.sentences), "source": f.source, "seed": f.seed,
                            "control_seed": f.control_seed, "test_share": f.test_share,
                            "regularization": f.regularization, "parser": f.parser, "words": f.words,
                            "held_out_sentences": len(f.test_sentences)})


def _probe_text(f: Probing) -> str:
    peaks = "; ".join(f"**{s.task.value}** is decoded best from hidden state **{s.peak}** (held-out accuracy "
                      f"{s.accuracy[s.peak]:.2f}, selectivity {s.selectivity[s.peak]:.2f})" for s in f.scores)
    first = (f"In **{f.model}**, {peaks}: a linear probe (multinomial logistic regression on one hidden state's "
             "word vectors) has selectivity = its accuracy minus the same probe's accuracy on the control task, "
             "where each word type gets a fixed random label (Hewitt & Liang 2019).")
    expected = "; ".join(f"{s.task.value} {_r(s.expected_layer)}" for s in f.scores)
    selective = "; ".join(f"{s.task.value} at hidden state {int(np.argmax(s.selectivity))} "
                          f"({s.selectivity.max():.2f})" for s in f.scores)
    parts = [
        first,
        f"Expected layer (after Tenney et al. 2019, without their scalar mix): E = Σ l·Δ_l / Σ Δ_l, where Δ_l is "
        f"the gain of hidden state l's probe accuracy over the best accuracy of the hidden states below it, clipped "
        f"at 0: {expected}.",
        f"Most selective: {selective}.",
        f"The labels are spaCy's automatic tags ({code(f.parser, 40)}: universal POS, and each word's dependency "
        "relation to its head), not gold annotations.",
        f"Data: {source_note(f.source, len(f.sentences), f.seed)}, {f.words:,} words; a word's vector is the mean of "
        f"its word pieces' vectors. {len(f.test_sentences)} sentences ({f.test_share:.0%}, seed {f.seed}) are held "
        f"out, so no held-out word was seen in training in that sentence. Probe: features standardised on the "
        f"training words, L2 with C = {f.regularization:g}. Control labels are drawn per word type (lower case) from "
        f"the training labels' distribution with seed {f.control_seed}.",
    ]
    return " ".join(parts)


# --- contextuality -----------------------------------------------------------------------------

def contextuality(f: Contextuality) -> Result:
    """The three measures per hidden state beside their baselines, per-word values and the most specific words."""
    layers = np.arange(f.num_layers + 1)
    self_mean = f.self_similarity.mean(axis=0)
    mev_mean = f.mev.mean(axis=0)
    by_layer = pd.DataFrame({
        "layer": layers, "self-similarity": self_mean, "intra-sentence similarity": f.intra_similarity,
        "MEV": mev_mean, "anisotropy baseline": f.baseline, "MEV baseline": f.mev_baseline,
        "adjusted self-similarity": self_mean - f.baseline,
        "adjusted intra-sentence similarity": f.intra_similarity - f.baseline,
        "adjusted MEV": mev_mean - f.mev_baseline,
    }).round(4)
    words = pd.DataFrame([{
        "word": w, "sentences": f.counts[k], "layer": int(layer),
        "self-similarity": f.self_similarity[k, layer], "adjusted self-similarity": f.self_similarity[k, layer]
        - f.baseline[layer], "MEV": f.mev[k, layer], "adjusted MEV": f.mev[k, layer] - f.mev_baseline[layer],
    } for k, w in enumerate(f.words) for layer in layers]).round(4)
    last = f.num_layers
    specific = pd.DataFrame({
        "word": f.words, "sentences": f.counts,
        f"self-similarity at {last}": f.self_similarity[:, last],
        f"adjusted at {last}": f.self_similarity[:, last] - f.baseline[last],
        f"drop from 0 to {last}": f.self_similarity[:, 0] - f.self_similarity[:, last],
    }).sort_values(f"adjusted at {last}", kind="stable").reset_index(drop=True).round(4)
    curves = pd.concat([
        pd.DataFrame({"layer": layers, "measure": name, "value": values, "kind": kind})
        for name, values, kind in (("self-similarity", self_mean, "measured"),
                                   ("intra-sentence similarity", f.intra_similarity, "measured"),
                                   ("MEV", mev_mean, "measured"),
                                   ("anisotropy baseline (random pairs)", f.baseline, "baseline"),
                                   ("MEV baseline (random matrices)", f.mev_baseline, "baseline"))])
    chart = charts.layer_curves(curves, "value", "measure", dash="kind",
                                title=f"{f.model}: contextuality per hidden state (Ethayarajh 2019)")
    tables = [Table("contextuality by layer", by_layer), Table("words by layer", words),
              Table("most context-specific words", specific)]
    return Result("contextuality", _contextuality_text(f, self_mean, specific), tables,
                  [Chart("contextuality", chart)], f.warnings, f.model,
                  settings={"words": ", ".join(f.words), "picked": f.chosen, "sentences": f.sentences,
                            "source": f.source, "seed": f.seed, "pairs": f.pairs})


def _contextuality_text(f: Contextuality, self_mean: np.ndarray, specific: pd.DataFrame) -> str:
    last = f.num_layers
    low = int(np.argmin(self_mean - f.baseline))
    adj = self_mean - f.baseline
    base_trend = "rises" if f.baseline[last] > f.baseline[0] else "falls"
    first = (f"In **{f.model}** words are most context-specific at hidden state **{low}**, where their "
             f"self-similarity, the mean cosine between a word's vectors in different sentences (Ethayarajh 2019), "
             f"is {self_mean[low]:.2f}, {adj[low]:.2f} above the anisotropy baseline (it is {self_mean[0]:.2f} at "
             f"the embeddings and {self_mean[last]:.2f} at the last layer).")
    named = ", ".join(code(w, 30) for w in specific["word"].head(MOST_SPECIFIC))
    picked = f"the {len(f.words)} found in the most sentences (at least {MIN_CONTEXTS} each)"
    peak_base = int(np.nanargmax(f.baseline))
    parts = [
        first,
        f"Anisotropy baseline, the mean cosine between {f.pairs:,} random pairs of word occurrences from different "
        f"sentences (seed {f.seed}): {f.baseline[0]:.2f} at the embeddings, highest at hidden state {peak_base} "
        f"({f.baseline[peak_base]:.2f}), {f.baseline[last]:.2f} at the last layer (it {base_trend} overall).",
        f"Intra-sentence similarity, the mean cosine between each word and its sentence's mean vector: "
        f"{f.intra_similarity[0]:.2f} at the embeddings, {f.intra_similarity[last]:.2f} at the last layer "
        f"({f.intra_similarity[last] - f.baseline[last]:.2f} above the baseline).",
        "Maximum explainable variance, σ₁² / Σσᵢ² of a word's occurrence matrix (how much one direction explains): "
        f"{f.mev.mean(axis=0)[0]:.2f} at the embeddings, {f.mev.mean(axis=0)[last]:.2f} at the last layer (random "
        f"matrices of the same sizes: {f.mev_baseline[last]:.2f}).",
        f"Most context-specific at the last layer (lowest adjusted self-similarity): {named}.",
        f"Words: {picked if f.chosen else 'as given'}"
        f"; each counts once per sentence, as the mean of its word pieces. Data: "
        f"{source_note(f.source, f.sentences, f.seed)}, {f.occurrences:,} word occurrences. Adjusted = measure - "
        "baseline.",
    ]
    return " ".join(parts)


# --- cka ---------------------------------------------------------------------------------------

def cka(f: LayerSimilarity) -> Result:
    """The CKA matrix as a heatmap and a table, and the estimator it used."""
    rows_name = f"{f.model} layer"
    cols_name = f"{f.other} layer" if f.other else "layer "
    n_rows, n_cols = f.matrix.shape
    tidy = pd.DataFrame([{rows_name: i, cols_name: j, "CKA": float(f.matrix[i, j])}
                         for i in range(n_rows) for j in range(n_cols)])
    chart = charts.heatmap(tidy, cols_name, rows_name, "CKA", title=_cka_title(f),
                           x_order=list(range(n_cols)), y_order=list(range(n_rows))[::-1], size=320)
    matrix = pd.DataFrame(np.round(f.matrix, 6), columns=[f"{cols_name.strip()} {j}" for j in range(n_cols)])
    matrix.insert(0, rows_name, range(n_rows))
    return Result("cka", _cka_text(f), [Table("cka matrix", matrix)], [Chart("cka", chart)], f.warnings, f.model,
                  settings={"with": f.other, "estimator": f.estimator.value, "asked": f.asked.value,
                            "unit": f.unit.value, "examples": f.examples, "sentences": f.sentences,
                            "source": f.source, "seed": f.seed})


def _cka_title(f: LayerSimilarity) -> str:
    against = f"{f.model} vs {f.other}" if f.other else f.model
    return f"{against}: linear CKA ({f.estimator.value}) between hidden states"


def _cka_text(f: LayerSimilarity) -> str:
    m = f.matrix
    definition = ("linear CKA (Kornblith et al. 2019) is HSIC(XXᵀ, YYᵀ) / √(HSIC(XXᵀ, XXᵀ)·HSIC(YYᵀ, YYᵀ)) "
                  "over "
                  "the same examples, 1 when two representations differ only by a rotation and a scale")
    if f.other is None:
        steps = np.array([m[i, i + 1] for i in range(len(m) - 1)])
        first = (f"In **{f.model}** each hidden state is most like its neighbours (CKA {steps.min():.2f} to "
                 f"{steps.max():.2f} between l and l+1) and the last layer is {m[0, -1]:.2f} like the embeddings; "
                 f"{definition}.")
    else:
        best = [int(np.nanargmax(m[:, j])) for j in range(m.shape[1])]
        pairs = ", ".join(f"{j}→{i}" for j, i in enumerate(best))
        first = (f"Each hidden state of **{f.other}** is most like these of **{f.model}** ({f.other}'s → "
                 f"{f.model}'s): {pairs}; {definition}.")
    if f.estimator is CkaEstimator.DEBIASED:
        why = (f"because {f.examples:,} examples are fewer than ten times the hidden size "
               f"({10 * max(f.hidden_sizes):,})"
               if f.asked is CkaEstimator.AUTO else "as asked")
        estimator = f"HSIC is the debiased (unbiased) estimator of Song et al. (2012), {why}."
    else:
        why = (f"since {f.examples:,} examples are at least ten times the hidden size"
               if f.asked is CkaEstimator.AUTO else "as asked")
        estimator = f"HSIC is the biased estimator tr(KHLH)/(n-1)², {why}."
    if f.unit is CkaUnit.TOKENS:
        unit = (f"One example is one word piece ({f.examples:,} tokens, [CLS] and [SEP] left out)"
                + (", read by both models with the same tokenizer" if f.other else "") + ".")
    else:
        unit = (f"One example is one sentence's mean-pooled vector (mean over all its tokens), because the two "
                f"tokenizers split the sentences differently ({f.examples:,} sentences).")
    return " ".join([first, estimator, unit, f"Data: {source_note(f.source, f.sentences, f.seed)}."])


# --- two models (--vs) -------------------------------------------------------------------------

def _depth(layer: int, num_layers: int) -> str:
    return f"hidden state {layer} of {num_layers}"


def probe_difference(a: Probing, b: Probing, names: tuple[str, str]) -> str:
    """Where each task's probe peaks in each model, and how accurate and selective it is there."""
    peaks = "; ".join(
        f"{sa.task.value} peaks at {_depth(sa.peak, a.num_layers)} in {names[0]} (accuracy "
        f"{sa.accuracy[sa.peak]:.2f}, selectivity {sa.selectivity[sa.peak]:.2f}) and at "
        f"{_depth(sb.peak, b.num_layers)} in {names[1]} ({sb.accuracy[sb.peak]:.2f}, {sb.selectivity[sb.peak]:.2f})"
        for sa, sb in zip(a.scores, b.scores))
    same = " on the same sentences" if a.sentences == b.sentences else ""
    return f"{peaks}{same}."


def _most_specific(f: Contextuality) -> tuple[int, float]:
    adjusted = f.self_similarity.mean(axis=0) - f.baseline
    layer = int(np.argmin(adjusted))
    return layer, float(adjusted[layer])


def contextuality_difference(a: Contextuality, b: Contextuality, names: tuple[str, str]) -> str:
    """Where words are most context-specific in each model, and each model's anisotropy at its last layer."""
    (la, va), (lb, vb) = _most_specific(a), _most_specific(b)
    return (f"words are most context-specific at {_depth(la, a.num_layers)} in {names[0]} (adjusted "
            f"self-similarity {va:.2f}) and at {_depth(lb, b.num_layers)} in {names[1]} ({vb:.2f}); the anisotropy "
            f"baseline at the last layer is {a.baseline[-1]:.2f} and {b.baseline[-1]:.2f}.")
