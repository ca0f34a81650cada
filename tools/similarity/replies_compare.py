"""The words of `compare`: cosines read against the model's own reference cosines on STS-B dev.

The first sentence answers "how similar are these?" for this model: where the cosine falls among unrelated
pairs and which gold band of STS-B dev it is typical of (:mod:`~tools.similarity.reference`), or that there is
no reference to read it against and why.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from tools import charts
from tools.core.results import Chart, Result, Table
from tools.core.text import layer_note, md, text_label
from tools.encoding.pooling import Pooling
from tools.similarity.facts import Comparison
from tools.similarity.reference import Reference, References, Verdict, verdict

#: What each STS-B gold band means, in the annotators' words (5 = the same meaning, 0 = different topics).
BAND_MEANINGS = {
    "4-5": "the same meaning, or nearly",
    "3-4": "roughly the same meaning, some details differ",
    "2-3": "not the same meaning, but sharing some details",
    "1-2": "different meanings on the same topic",
    "0-1": "different meanings, at most the same topic",
}
#: The verdict's opening words per band.
BAND_HEADS = {
    "4-5": "Paraphrases, by this model's scale",
    "3-4": "Close in meaning",
    "2-3": "Related",
    "1-2": "Same topic, different meaning",
    "0-1": "Different meanings",
}


def verdict_phrase(v: Verdict) -> str:
    """``higher than 98% of unrelated pairs, typical of pairs people rate 4-5: the same meaning, or nearly``."""
    band = f"typical of pairs people rate {v.band}: {BAND_MEANINGS[v.band]}"
    if v.like_unrelated:
        return f"like unrelated pairs, higher than only {v.unrelated_rank:.0f}% of them"
    share = (f"all {v.reference.unrelated.n:,}" if v.unrelated_rank >= 100.0 else
             f"{min(99, int(v.unrelated_rank))}%")
    return f"higher than {share} of unrelated pairs, {band}"


def verdict_head(v: Verdict) -> str:
    """The verdict's opening words: ``Unrelated`` or the band's (``Paraphrases, by this model's scale``)."""
    return "Unrelated, by this model's scale" if v.like_unrelated else BAND_HEADS[v.band]


def reference_note(r: Reference) -> str:
    """Which reference the verdict read the cosine against."""
    how = {"shipped": "shipped with the package", "cached": "computed here before", "computed": "computed just now",
           "full precision": "shipped with the package for full precision, which the fast path reads too"
           }.get(r.computed, r.computed)
    return (f"The verdict reads the cosine against {md(r.model)}'s own {r.pooling}-pooling cosines for {r.source} "
            f"by gold band and for {r.unrelated.n:,} unrelated (shuffled) pairs ({how}; the `reference` table).")


def missing_note(refs: References | None, pooling: str) -> str:
    """Why a cosine comes without a verdict."""
    if refs is None:
        return ""
    if refs.missing == "layer":
        return (f"There is no verdict: {md(refs.model)}'s reference cosines are for the last layer, not layer "
                f"{refs.layer}, so read this number against the same texts at other layers.")
    if refs.missing == "data":
        return (f"There is no verdict: {md(refs.model)} has no reference cosines here and STS-B dev "
                "(`sts-dev.tsv`) is not in a data folder (ASSISTANT_DATA_DIR) to compute them from.")
    return f"There is no verdict: {md(refs.model)} has no reference for {pooling} pooling."


def _reference(refs: References | None, pooling: Pooling) -> Reference | None:
    return refs.by_pooling.get(pooling.value) if refs is not None else None


def _headline_pooling(c: Comparison) -> Pooling:
    """The pooling the first sentence judges: the only one, else the model's recipe, else mean, else the first."""
    for p in (Pooling.SBERT, Pooling.MEAN):
        if len(c.poolings) > 1 and p in c.poolings:
            return p
    return c.poolings[0]


def _reference_table(ref: Reference) -> Table:
    rows = [{"pairs": f"people rate {name}", "n": d.n, "mean cosine": d.mean, "5th percentile": d.percentiles[5],
             "median": d.percentiles[50], "95th percentile": d.percentiles[95]} for name, d in ref.bands.items()]
    u = ref.unrelated
    rows.append({"pairs": "unrelated (shuffled)", "n": u.n, "mean cosine": u.mean, "5th percentile": u.percentiles[5],
                 "median": u.percentiles[50], "95th percentile": u.percentiles[95]})
    return Table("reference", pd.DataFrame(rows))


def compare(c: Comparison) -> Result:
    """Two texts: a verdict, one row per pooling and bars. More: the closest and farthest pairs judged, a matrix
    per pooling and a heatmap of the first; the reference table when there is one."""
    where = layer_note(c.layer, c.num_layers)
    settings = {"pool": c.asked_pool, "layer": c.layer}
    head = _headline_pooling(c)
    ref = _reference(c.references, head)
    if len(c.texts) == 2:
        cos = {p: float(c.cosines[p][0, 1]) for p in c.poolings}
        verdicts = {p: verdict(r, cos[p]) for p in c.poolings if (r := _reference(c.references, p)) is not None}
        frame = pd.DataFrame({"pooling": [p.value for p in c.poolings], "a": c.texts[0], "b": c.texts[1],
                              "cosine": [cos[p] for p in c.poolings]})
        if verdicts:
            frame["unrelated pairs below"] = [f"{verdicts[p].unrelated_rank:.0f}%" if p in verdicts else ""
                                              for p in c.poolings]
            frame["typical of gold"] = [verdicts[p].band if p in verdicts else "" for p in c.poolings]
        frame = frame[[k for k in frame.columns if k not in ("a", "b")] + ["a", "b"]]  # numbers first, texts last
        shape = f"{head.value} pooling, {where}, {c.model}"
        if ref is not None:
            v = verdicts[head]
            first = f"**{verdict_head(v)}** ({shape}): cosine **{cos[head]:.4f}**, {verdict_phrase(v)}."
        else:
            first = f"Cosine similarity **{cos[head]:.4f}** ({shape})."
        lines = [first]
        if len(c.poolings) > 1:
            lines.append(f"Cosine similarity by pooling ({where}): "
                         + ", ".join(f"{p.value} {cos[p]:.4f}" for p in c.poolings) + ".")
        lines.append(reference_note(ref) if ref is not None else missing_note(c.references, head.value))
        chart = charts.bars(frame, "pooling", "cosine", title="Cosine similarity by pooling",
                            domain=(min(0.0, float(frame["cosine"].min())), 1.0), sort=None)
        tables = [Table("similarity", frame)] + ([_reference_table(ref)] if ref is not None else [])
        return Result("compare", " ".join(s for s in lines if s), tables, [Chart("similarity", chart)],
                      c.warnings, c.model, settings=settings)
    labels = [text_label(i, t) for i, t in enumerate(c.texts)]
    tables, tidy = [], []
    for p in c.poolings:
        m = pd.DataFrame(c.cosines[p], index=labels, columns=labels).round(6)
        tables.append(Table(f"similarity ({p.value})", m.reset_index(names="text")))
        long = m.stack().rename("cosine").reset_index()
        long.columns = ["a", "b", "cosine"]
        tidy.append(long.assign(pooling=p.value))
    frame = pd.concat(tidy, ignore_index=True)
    pairs = frame[(frame["a"] < frame["b"]) & (frame["pooling"] == head.value)].sort_values("cosine", ascending=False)
    best, worst = pairs.iloc[0], pairs.iloc[-1]

    def judged(row: pd.Series) -> str:
        said = f"{row['cosine']:.4f}"
        return f"{said}, {verdict_phrase(verdict(ref, float(row['cosine'])))}" if ref is not None else said

    first_pooling = c.poolings[0].value
    heat = charts.heatmap(frame[frame["pooling"] == first_pooling], "b", "a", "cosine",
                          title=f"Cosine similarity ({first_pooling} pooling)",
                          x_order=labels, y_order=labels, domain=(min(0.0, float(frame["cosine"].min())), 1.0))
    text = (f"Similarity matrix of {len(c.texts)} texts ({head.value} pooling, {where}, {c.model}): the closest "
            f"pair is **{md(best['a'])}** and **{md(best['b'])}** at {judged(best)}"
            + (f"; the farthest, **{md(worst['a'])}** and **{md(worst['b'])}**, at {judged(worst)}"
               if len(pairs) > 1 else "") + ". "
            + (f"Matrices for {', '.join(p.value for p in c.poolings)} pooling are in the tables. "
               if len(c.poolings) > 1 else "")
            + (reference_note(ref) if ref is not None else missing_note(c.references, head.value)))
    if ref is not None:
        tables.append(_reference_table(ref))
    return Result("compare", text.strip(), tables, [Chart("similarity", heat)], c.warnings, c.model,
                  settings=settings)


def compare_difference(a: Comparison, b: Comparison, names: tuple[str, str]) -> str:
    """One sentence on where two models' comparisons of the same texts differ."""
    if len(a.texts) == 2:
        parts = [f"{p.value} {float(a.cosines[p][0, 1]):.4f} vs {float(b.cosines[p][0, 1]):.4f} "
                 f"({float(b.cosines[p][0, 1] - a.cosines[p][0, 1]):+.4f})" for p in a.poolings if p in b.cosines]
        return "cosine " + "; ".join(parts) + "."
    p = next((p for p in a.poolings if p in b.cosines), a.poolings[0])
    gap = float(np.abs(a.cosines[p] - b.cosines[p]).max())
    return (f"the similarity matrices differ by at most {gap:.4f} in a cell; "
            f"{_best_pair(a.cosines[p])} is the closest pair for {md(names[0])}, {_best_pair(b.cosines[p])} "
            f"for {md(names[1])}.")


def _best_pair(matrix: np.ndarray) -> str:
    values = np.asarray(matrix, dtype=float).copy()
    np.fill_diagonal(values, -np.inf)
    i, j = np.unravel_index(np.argmax(values), values.shape)
    return f"{i + 1}–{j + 1}"
