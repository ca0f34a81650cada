"""The words of the similarity family: each function turns one tool's facts into a Result.

This is the only place the family writes sentences, names tables, builds charts and packs
downloads (with :mod:`~tools.similarity.replies_why`, which holds `why`'s); the tools in this
package compute :mod:`~tools.similarity.facts` and call these.
"""

from __future__ import annotations

import io
import itertools

import numpy as np
import pandas as pd

from tools import charts
from tools.core.results import Artifact, Chart, Result, Table, csv_text
from tools.core.text import code, md, text_label
from tools.encoding.pooling import Pooling
from tools.similarity.facts import (
    Embedding,
    Neighbours,
    StaticSentences,
    StaticWord,
    Strategy,
    WordInContext,
)
from tools.similarity.verdicts import (
    DIFFERENT_SHARE,
    LOOSE_PERCENTILE,
    SAME_SHARE,
    TIGHT_PERCENTILE,
    Sameness,
    Tightness,
    floor_of,
    percentile_in,
    sameness,
    tightness,
)

# --- word ----------------------------------------------------------------------------------

#: The heatmap and pair series stay readable up to this many pairs.
MAX_PAIR_SERIES = 6
#: What each layer strategy makes a token's vector of.
STRATEGY_WORDS: dict[Strategy, str] = {
    Strategy.FIRST: "the first encoder layer's output",
    Strategy.LAST: "the last layer's output",
    Strategy.SUM_ALL: "the sum of every hidden state, the embedding output included",
    Strategy.SUM_LAST4: "the sum of the last four layers",
    Strategy.CONCAT_LAST4: "the last four layers side by side (4 x hidden size)",
    Strategy.MEAN_LAST4: "the mean of the last four layers",
}


def word(w: WordInContext) -> Result:
    """The mean cosine between occurrences per strategy, with the baselines; tables strategies, pairs,
    occurrences (and random token); a heatmap for one strategy, grouped bars for several."""
    labels = [o.label for o in w.occurrences]
    occ_frame = pd.DataFrame([{
        "occurrence": o.label, "sentence": o.sentence + 1, "text": o.surface,
        "characters": f"{o.start}-{o.end}", "token positions": ", ".join(map(str, o.positions)),
        "pieces": " ".join(o.pieces), "sentence text": w.sentences[o.sentence],
    } for o in w.occurrences])
    tables = [Table("strategies", w.summary), Table("pairs", w.pairs), Table("occurrences", occ_frame)]
    if w.random_token is not None:
        s, pos = w.random_token
        tables.append(Table("random token", pd.DataFrame([{
            "seed": w.seed, "sentence": s + 1, "position": pos, "token": w.random_piece}])))
    settings = {"word": w.word, "strategy": "all" if len(w.strategies) > 1 else w.strategies[0].value,
                "seed": w.seed, "random token": w.random_piece}
    return Result("word", _word_text(w), tables, [_word_chart(w, labels)], w.warnings, w.model, settings=settings)


def _word_chart(w: WordInContext, labels: list[str]) -> Chart:
    if len(w.strategies) == 1:
        strat = w.strategies[0]
        shown = labels[: int(charts.MAX_ROWS ** 0.5)]
        n = len(shown)
        frame = pd.DataFrame([{"a": shown[i], "b": shown[j], "cosine": float(w.cosines[strat][i, j])}
                              for i in range(n) for j in range(n)])
        lo = min(0.0, float(frame["cosine"].min()))
        title = f"Cosine between occurrences ({strat.value})"
        if n < len(labels):
            title += f", first {n} of {len(labels)}"
        return Chart("occurrences", charts.heatmap(frame, "b", "a", "cosine", title=title,
                                                   x_order=shown, y_order=shown, domain=(lo, 1.0)))
    order = [s.value for s in w.strategies]
    pairs, summary = w.pairs, w.summary
    if len(pairs) // len(w.strategies) <= MAX_PAIR_SERIES:
        series = pairs.assign(series=pairs["a"] + " vs " + pairs["b"])[["strategy", "series", "cosine"]]
    else:
        series = summary.melt(id_vars="strategy", value_vars=["same-sentence mean", "cross-sentence mean"],
                              var_name="series", value_name="cosine").dropna()
    baselines = summary.melt(id_vars="strategy", value_vars=["context baseline", "random-token baseline"],
                             var_name="series", value_name="cosine").dropna()
    frame = pd.concat([series, baselines], ignore_index=True)
    lo = min(0.0, float(frame["cosine"].min()))
    chart = charts.grouped_bars(frame, "strategy", "cosine", "series", title="Cosine by layer strategy",
                                domain=(lo, 1.0), order=order)
    return Chart("strategies", chart)


def _word_text(w: WordInContext) -> str:
    occs, sentences = w.occurrences, w.sentences
    n_sent = len({o.sentence for o in occs})
    head = (f"**{md(w.word)}** occurs {len(occs)} times in {n_sent} of {len(sentences)} "
            f"sentence{'s' if len(sentences) > 1 else ''} ({w.model}; each occurrence is the mean of its "
            "word pieces).")
    if w.random_token is not None and w.random_piece is not None:  # drawn together, or neither
        s, p = w.random_token
        rand = f"the random token is {code(w.random_piece, 30)} (sentence {s + 1}, position {p}, seed {w.seed})"
    else:
        rand = "there is no other token to draw a random baseline from"
    if len(w.strategies) == 1:
        row = w.summary.iloc[0]
        strat = w.strategies[0]
        body = (f"Strategy **{strat.value}** ({STRATEGY_WORDS[strat]}): mean cosine between occurrences "
                f"**{row['mean cosine']:.4f}**"
                + (f" (from {row['min cosine']:.4f} to {row['max cosine']:.4f})" if len(occs) > 2 else "")
                + f"; baselines: the other tokens of its sentences {row['context baseline']:.4f}, "
                f"a random token {row['random-token baseline']:.4f}.")
    else:
        parts = ", ".join(f"{r['strategy']} {r['mean cosine']:.4f}" for _, r in w.summary.iterrows())
        body = (f"Mean cosine between occurrences by layer strategy: {parts}. The baselines (the word against "
                "the other tokens of its sentences, and against a random token) are in the `strategies` table.")
    return f"{_word_verdict(w)} {head} {body} For the baselines, {rand}."


#: How a verdict on two occurrences of a word reads.
SAMENESS_WORDS = {
    Sameness.SAME: "nearly the same vector",
    Sameness.RELATED: "related but not the same vector",
    Sameness.DIFFERENT: "different vectors, hardly closer to each other than to the baselines",
}


def _word_verdict(w: WordInContext) -> str:
    """The answer first: are the occurrences the same vector? Under the last layer (or the one strategy run)."""
    strat = Strategy.LAST if Strategy.LAST in w.strategies else w.strategies[0]
    row = w.summary[w.summary["strategy"] == strat.value].iloc[0]
    floor = floor_of(row["context baseline"], row["random-token baseline"])
    pairs = w.pairs[w.pairs["strategy"] == strat.value].sort_values("cosine", ascending=False)
    scale = (f"({strat.value} strategy, {md(w.model)}; read from the higher baseline, {floor:.2f}, to 1.0: "
             f"{SAME_SHARE:.0%} of the way or more counts as the same, under {DIFFERENT_SHARE:.0%} as different)")
    if pairs.empty:
        return ""
    if len(pairs) == 1:
        cos = float(pairs.iloc[0]["cosine"])
        same = SAMENESS_WORDS[sameness(cos, floor)]
        return f"Both occurrences of **{md(w.word)}** are **{same}**: cosine {cos:.4f} {scale}."
    top, low = pairs.iloc[0], pairs.iloc[-1]
    said = [f"{top['a']} and {top['b']}, are **{SAMENESS_WORDS[sameness(float(top['cosine']), floor)]}** "
            f"({top['cosine']:.4f})",
            f"{low['a']} and {low['b']}, **{SAMENESS_WORDS[sameness(float(low['cosine']), floor)]}** "
            f"({low['cosine']:.4f})"]
    return (f"Of the {len(w.occurrences)} occurrences of **{md(w.word)}**, the closest pair, "
            + "; the farthest, ".join(said) + f" {scale}.")


# --- embed ---------------------------------------------------------------------------------

def _state_name(index: int) -> str:
    return "embeddings" if index == 0 else f"layer {index}"


def embed(e: Embedding) -> Result:
    """Shapes and norms: tables sentence vectors, hidden states, token norms, vector; the norms heatmap of
    text 1; downloads .npy, .safetensors and CSV."""
    labels = [text_label(i, t) for i, t in enumerate(e.texts)]
    shapes = pd.DataFrame([{"text": name, "hidden state": index, "name": _state_name(index),
                            "shape": f"{states.shape[1]} x {vectors.shape[1]}", "mean token norm": float(mean[index])}
                           for name, states, vectors, mean in zip(labels, e.state_norms, e.token_vectors, e.mean_norms)
                           for index in range(states.shape[0])])
    tokens = pd.DataFrame([{"text": name, "position": pos, "token": token, "special": special[pos],
                            "norm": float(norms[pos])}
                           for name, toks, special, norms in zip(labels, e.tokens, e.special, e.token_norms)
                           for pos, token in enumerate(toks)])
    vector_table = pd.DataFrame(e.sentences.T, columns=labels).rename_axis("dimension").reset_index()
    sentence_norms = pd.DataFrame({"text": labels, "tokens": [len(t) for t in e.tokens],
                                   "pooling": e.pooling.value, "hidden state": _state_name(e.layer),
                                   "dims": e.sentences.shape[1], "norm": e.sentence_norms})
    chart, note = _norm_chart(e, labels[0])
    pool_note = "the model's sentence-transformers recipe, last layer" if e.pooling is Pooling.SBERT else (
        f"{e.pooling.value} pooling of {_state_name(e.layer)}")
    text = (
        f"Embedded {len(e.texts)} text{'s' if len(e.texts) > 1 else ''} with {e.model}: {e.num_layers + 1} hidden "
        f"states (the embedding output and {e.num_layers} layers) of shape tokens x {e.hidden_size}. "
        f"Token vectors come from **{_state_name(e.layer)}**; the sentence vector is {pool_note} "
        f"({e.sentences.shape[1]} dims, norm {float(e.sentence_norms[0]):.4f} for text 1). "
        "Downloads: `sentence_vectors.npy`, `embeddings.safetensors` (sentence and token vectors), and CSV. "
        + note
    ).strip()
    return Result(
        "embed", text,
        [Table("sentence vectors", sentence_norms), Table("hidden states", shapes),
         Table("token norms", tokens), Table("vector", vector_table)],
        [Chart("token norms", chart)], e.warnings, e.model,
        settings={"layer": e.layer, "pool": e.pooling.value},
        artifacts=_embed_downloads(e),
    )


def _norm_chart(e: Embedding, label: str) -> tuple[object, str]:
    """Token x hidden-state norms of the first text, capped below the chart row limit."""
    tokens, all_norms = e.tokens[0], e.state_norms[0]
    n_states = all_norms.shape[0]
    keep = min(len(tokens), charts.MAX_ROWS // n_states)
    norms = all_norms[:, :keep]  # (L+1, keep)
    names = [f"{p}: {t}" for p, t in enumerate(tokens[:keep])]
    frame = pd.DataFrame([{"token": names[p], "hidden state": _state_name(i), "norm": float(norms[i, p])}
                          for i in range(n_states) for p in range(keep)])
    order = [_state_name(i) for i in range(n_states)]
    note = ""
    title = f"Token vector norms by hidden state ({label})"
    if keep < len(tokens):
        note = f"The chart shows the first {keep} of {len(tokens)} tokens of text 1; the tables have all."
        title += f", first {keep} tokens"
    chart = charts.heatmap(frame, "token", "hidden state", "norm", title=title, x_order=names, y_order=order,
                           size=min(640, 24 * keep + 80))
    return chart, note


def _embed_downloads(e: Embedding) -> list[Artifact]:
    """The sentence vectors as .npy and CSV, and with every text's token vectors as .safetensors and CSV."""
    from safetensors.numpy import save as save_safetensors

    matrix = np.ascontiguousarray(e.sentences.astype(np.float32))
    npy = io.BytesIO()
    np.save(npy, matrix, allow_pickle=False)
    tensors = {"sentence_vectors": matrix}
    for i, vecs in enumerate(e.token_vectors):
        tensors[f"token_vectors_{i + 1}"] = np.ascontiguousarray(vecs.astype(np.float32))
    metadata = {"model": e.model, "hidden_state": str(e.layer), "pooling": e.pooling.value,
                "texts": str(len(e.texts)), "token_vectors": "token_vectors_N is text N's (tokens x hidden) matrix"}
    dims = [f"d{k}" for k in range(matrix.shape[1])]
    sent_csv = pd.DataFrame(matrix, columns=dims).assign(text=list(e.texts))[["text", *dims]]
    token_frames = []
    for i, (toks, vecs) in enumerate(zip(e.tokens, e.token_vectors)):
        frame = pd.DataFrame(vecs, columns=[f"d{k}" for k in range(vecs.shape[1])])
        frame.insert(0, "token", list(toks))
        frame.insert(0, "position", range(len(toks)))
        frame.insert(0, "text", i + 1)
        token_frames.append(frame)
    return [
        Artifact("sentence_vectors.npy", npy.getvalue()),
        Artifact("embeddings.safetensors", save_safetensors(tensors, metadata=metadata)),
        Artifact("sentence_vectors.csv", csv_text(sent_csv).encode(), "text/csv"),
        Artifact("token_vectors.csv", csv_text(pd.concat(token_frames, ignore_index=True)).encode(),
                 "text/csv"),
    ]


# --- static --------------------------------------------------------------------------------

#: Bars stay readable up to this many pairs; the tables always hold them all.
MAX_CHART_PAIRS = 30


def static(s: StaticWord | StaticSentences) -> Result:
    """Static beside contextual cosines for every pair: tables pairs and occurrences (word) or glove words
    (sentences), and grouped bars."""
    return _static_word(s) if isinstance(s, StaticWord) else _static_sentences(s)


def _static_word(s: StaticWord) -> Result:
    occs = s.occurrences
    model_col = f"{s.model} ({s.strategy.value})"
    pairs = pd.DataFrame([{"a": occs[i].label, "b": occs[j].label,
                           "same sentence": occs[i].sentence == occs[j].sentence,
                           s.static: float(s.static_cosines[i, j]), model_col: float(s.model_cosines[i, j])}
                          for i, j in itertools.combinations(range(len(occs)), 2)])
    occ_frame = pd.DataFrame([{"occurrence": o.label, "sentence": o.sentence + 1, "text": o.surface,
                               "pieces": " ".join(o.pieces), "sentence text": s.sentences[o.sentence]}
                              for o in occs])
    chart = _pair_bars(pairs, [s.static, model_col], f"{s.word}: static vs contextual")
    lo, hi = float(pairs[model_col].min()), float(pairs[model_col].max())
    spread = (f"have cosine **{lo:.4f}**" if len(pairs) == 1 else
              f"range from **{lo:.4f}** to **{hi:.4f}** (mean {pairs[model_col].mean():.4f})")
    text = (f"**{md(s.word)}** in {len(occs)} places: {s.static} gives it one vector whatever the context, so every "
            f"pair has cosine **1.0**; {s.model}'s contextual vectors ({s.strategy.value} strategy, pieces averaged) "
            f"{spread}.")
    return Result("static", text, [Table("pairs", pairs), Table("occurrences", occ_frame)], [chart], s.warnings,
                  s.model, settings={"mode": "word", "word": s.word, "strategy": s.strategy.value})


def _static_sentences(s: StaticSentences) -> Result:
    labels = [text_label(i, t) for i, t in enumerate(s.texts)]
    used_rows = [{"text": name, "words used": used, "unknown words": ", ".join(unknown)}
                 for name, used, unknown in zip(labels, s.words_used, s.unknown)]
    static_col, model_col = f"{s.static} (mean of words)", f"{s.model} ({s.pooling.value})"
    pairs = pd.DataFrame([{"a": labels[i], "b": labels[j], static_col: float(s.static_cosines[i, j]),
                           model_col: float(s.model_cosines[i, j])}
                          for i, j in itertools.combinations(range(len(s.texts)), 2)])
    warnings = list(s.warnings)
    oov = [r["text"] for r in used_rows if r["unknown words"]]
    if oov:
        warnings.append(f"{s.static} skipped words it does not know in {len(oov)} text(s); see the `glove words` "
                        "table.")
    chart = _pair_bars(pairs, [static_col, model_col], "Sentence similarity: static vs contextual")
    first = pairs.iloc[0]
    text = (f"Average-{s.static} cosine beside {s.model}'s ({s.pooling.value} pooling, last layer) for "
            f"{len(pairs)} pair{'s' if len(pairs) > 1 else ''}; first pair: GloVe "
            f"**{first[static_col]:.4f}**, {s.model} **{first[model_col]:.4f}**. "
            "GloVe words are lower-cased runs of letters and digits; unknown words are left out.")
    return Result("static", text, [Table("pairs", pairs), Table("glove words", pd.DataFrame(used_rows))], [chart],
                  warnings, s.model, settings={"mode": "sentences", "pool": s.pooling.value})


def _pair_bars(pairs: pd.DataFrame, columns: list[str], title: str) -> Chart:
    shown = pairs.head(MAX_CHART_PAIRS)
    if len(shown) < len(pairs):
        title += f" (first {len(shown)} of {len(pairs)} pairs)"
    frame = shown.assign(pair=shown["a"] + " vs " + shown["b"]).melt(
        id_vars="pair", value_vars=columns, var_name="vectors", value_name="cosine")
    lo = min(0.0, float(frame["cosine"].min()))
    return Chart("static vs contextual", charts.grouped_bars(
        frame, "pair", "cosine", "vectors", title=title, domain=(lo, 1.0), order=list(dict.fromkeys(frame["pair"]))))


# --- neighbors -----------------------------------------------------------------------------

def neighbors(n: Neighbours) -> Result:
    """The five nearest named, the ranked table `neighbours` and its bars."""
    frame = n.neighbours
    order = list(frame["rank"].astype(str) + ". " + frame["neighbour"])
    lo = min(0.0, float(frame["cosine"].min()))
    chart = charts.bars(frame.assign(label=order), "label", "cosine", title=f"Nearest to {n.word} ({n.space})",
                        tooltip=["neighbour", "rank"], domain=(lo, 1.0), sort=order)
    if n.space == "glove":
        query = f"the lower-cased word {code(n.query[0], 30)}"
        space = f"{n.source} ({n.rows:,} words, {n.dims} dims)"
    else:
        query = f"the token {code(n.query[0], 30)}" if len(n.query) == 1 else (
            f"the mean of its {len(n.query)} pieces {code(' '.join(n.query), 60)}")
        space = f"{n.source}'s input-embedding matrix ({n.rows:,} rows; special and [unused] rows skipped)"
    best = ", ".join(f"{md(r['neighbour'])} ({r['cosine']:.3f})" for r in frame.head(5).to_dict("records"))
    tight = _tightness(n)
    text = (f"{tight} They are measured by cosine in {space}, from {query}: {best}." if tight else
            f"The {len(frame)} nearest neighbours of **{md(n.word)}** by cosine in {space}, from {query}: {best}.")
    return Result("neighbors", text, [Table("neighbours", frame)], [Chart("neighbours", chart)], [], n.source,
                  settings={"space": n.space, "k": n.k})


TIGHTNESS_WORDS = {Tightness.TIGHT: "A tight neighbourhood", Tightness.TYPICAL: "An ordinary neighbourhood",
                   Tightness.LOOSE: "A loose neighbourhood"}


def _tightness(n: Neighbours) -> str:
    """The answer first: how close the neighbours are, against sampled words' neighbours in the same space."""
    if not len(n.sample) or n.neighbours.empty:
        return ""
    mean = float(n.neighbours["cosine"].mean())
    pct = percentile_in(mean, n.sample)
    return (f"**{TIGHTNESS_WORDS[tightness(pct)]}**: the {len(n.neighbours)} nearest neighbours of "
            f"**{md(n.word)}** average cosine {mean:.3f}, closer than those of {pct:.0f}% of {len(n.sample)} sampled "
            f"words of the same space (their median {float(np.median(n.sample)):.3f}; tight above "
            f"{TIGHT_PERCENTILE:.0f}%, loose below {LOOSE_PERCENTILE:.0f}%).")


# --- where two models' answers differ (`--vs`) ----------------------------------------------

def word_difference(a: WordInContext, b: WordInContext, names: tuple[str, str]) -> str:
    """One sentence on the layer strategy whose mean cosine between occurrences moves most between models."""
    fa, fb = word(a).table("strategies"), word(b).table("strategies")
    merged = fa.merge(fb, on="strategy", suffixes=(" a", " b"))
    if merged.empty:
        return "both answers are below, side by side in each table and chart."
    diff = merged["mean cosine b"] - merged["mean cosine a"]
    k = int(diff.abs().idxmax())
    row = merged.loc[k]
    return (f"mean cosine between occurrences differs most for the `{row['strategy']}` strategy: "
            f"{row['mean cosine a']:.4f} vs {row['mean cosine b']:.4f} ({diff[k]:+.4f}).")


def neighbors_difference(a: Neighbours, b: Neighbours, names: tuple[str, str]) -> str:
    """How many neighbours two models share."""
    na, nb = list(a.neighbours["neighbour"]), list(b.neighbours["neighbour"])
    shared = [w for w in na if w in set(nb)]
    only = [w for w in na if w not in set(nb)][:3]
    rest = f"; only {md(names[0])} has {', '.join(md(w) for w in only)}" if only else ""
    return f"{len(shared)} of {len(na)} neighbours are shared{rest}."
