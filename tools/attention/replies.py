"""The words of the attention family: each function turns one tool's facts into a Result.

This is the only place the family writes sentences, names tables, builds charts and packs
downloads; the tools in this package compute :mod:`~tools.attention.facts` and call these.
Layers and heads are numbered from 1 (see the package docstring).
"""

from __future__ import annotations

import io
import json

import altair as alt
import numpy as np
import pandas as pd

from tools import charts
from tools.attention.facts import (
    ARC_SHARE,
    DEP_TO_HEAD,
    ENTROPY,
    HEAD_TO_DEP,
    RHO,
    AttentionMaps,
    HeadGrid,
    Pattern,
    RebuiltAttention,
    Shapes,
    SyntaxAgreement,
    ToyAttention,
    View,
    strongest,
)
from tools.charts import pairs
from tools.charts import why as why_charts
from tools.core.results import Artifact, Chart, Drawing, Result, Table

#: How a reply describes a head that scores high on a pattern.
PHRASES: dict[Pattern, str] = {
    Pattern.SELF: "attends to the token itself",
    Pattern.PREVIOUS: "looks at the previous token",
    Pattern.NEXT: "looks at the next token",
    Pattern.CLS: "sends attention to [CLS]",
    Pattern.SEP: "sends attention to [SEP]",
    Pattern.CLS_READS: "tells [CLS] about the text (its [CLS] row goes to text tokens)",
}


# --- downloads ------------------------------------------------------------------------------

def npy_artifact(filename: str, array: np.ndarray) -> Artifact:
    """An array as ``.npy`` bytes (in memory; the renderer writes it)."""
    buffer = io.BytesIO()
    np.save(buffer, np.ascontiguousarray(array), allow_pickle=False)
    return Artifact(filename, buffer.getvalue(), "application/octet-stream")


def spec_artifact(filename: str, chart: alt.TopLevelMixin) -> Artifact:
    """A chart's Vega-Lite spec (data inlined) as JSON bytes."""
    return Artifact(filename, json.dumps(chart.to_dict()).encode(), "application/json")


# --- attend ---------------------------------------------------------------------------------

def describe_strongest(scores: pd.DataFrame) -> list[str]:
    """Sentences like "layer 2 head 5 looks at the previous token, 0.71 on average"."""
    lines = [f"layer {lay} head {hd} {PHRASES[p]}, {v:.2f} on average"
             for p, (lay, hd, v) in strongest(scores).items()]
    focused = scores.loc[scores[ENTROPY].idxmin()]
    broad = scores.loc[scores[ENTROPY].idxmax()]
    lines.append(f"layer {int(focused['layer'])} head {int(focused['head'])} is the most focused "
                 f"({focused[ENTROPY]:.2f} bits per row), layer {int(broad['layer'])} head "
                 f"{int(broad['head'])} the broadest ({broad[ENTROPY]:.2f} bits)")
    return lines


def attend(f: AttentionMaps) -> Result:
    """The pattern table, the weights of one head, the tokens, the view's chart, its raster and the downloads."""
    chart = _view_chart(f)
    tokens = pd.DataFrame({"position": range(len(f.tokens)), "token": f.tokens, "segment": f.segments})
    tables = [Table("patterns", f.scores), Table("tokens", tokens)]
    if f.view is View.HEAD:
        labels = list(f.labels)
        tables.insert(1, Table("weights", pd.DataFrame(np.round(f.weights, 6), index=labels, columns=labels)
                               .reset_index(names="query \\ key")))
    drawings = [heads_drawing(f, f.grid)] if f.grid is not None else []
    return Result(
        "attend", _attend_text(f), tables, [Chart("attention" if f.grid is None else "patterns", chart)],
        f.warnings, f.model,
        settings={"layer": f.layer, "head": f.head, "view": f.view.value, "numbering": "1-based",
                  "tokens": len(f.tokens), "chart": _drawn(f)},
        artifacts=[npy_artifact("attention.npy", f.weights.astype(np.float32)),
                   spec_artifact("attention-chart.vl.json", chart)],
        drawings=drawings,
    )


#: What each view draws, for titles.
VIEW_TITLES = {
    View.LAYER: "layer {layer}: all {heads} heads",
    View.HEAD_ACROSS_LAYERS: "head {head} in every layer",
    View.MODEL: "every layer x head",
}


def _title(f: AttentionMaps) -> str:
    return f"{f.model} " + VIEW_TITLES[f.view].format(layer=f.layer, head=f.head, heads=f.num_heads)


def _drawn(f: AttentionMaps) -> str:
    """How much of the attention the view shows."""
    if f.grid is None:
        return f.chart.note or "every weight"
    if f.grid.block == 1:
        return "every weight of every drawn head"
    return (f"tokens grouped into blocks of {f.grid.block} in the maps (attention summed over a block's keys, "
            "averaged over its queries)")


def heads_drawing(f: AttentionMaps, grid: HeadGrid) -> Drawing:
    """Every drawn head as uint8 weights, for the page's raster grid and head view (and the exports' image)."""
    n = len(grid.tokens)
    meta = {"title": f"{_title(f)} ({f.num_layers} layers x {f.num_heads} heads in all)" if f.view is View.MODEL
            else _title(f),
            "layers": list(grid.layers), "heads": list(grid.heads), "tokens": list(grid.tokens), "block": grid.block,
            "shape": [len(grid.layers), len(grid.heads), n, n], "scale": 255, "dtype": "uint8"}
    return Drawing("attention heads", "attention-heads", meta, grid.weights.tobytes())


def _view_chart(f: AttentionMaps) -> alt.TopLevelMixin:
    data = f.chart
    if f.view is View.HEAD:
        return charts.heatmap(
            data.frame, "key", "query", "weight", title=f"{f.model} layer {f.layer} head {f.head}",
            tooltip=["query", "key"], x_order=data.order, y_order=data.order, domain=(0.0, 1.0),
            size=min(720, max(320, 14 * len(data.order))),
        )
    return charts.head_patterns(data.frame, title=f"{_title(f)}: what each head does (share of each token's "
                                "attention on each pattern)")


#: The patterns a head's role is named after ([CLS] reads text is one row's share, not a per-token habit).
ROLE_PATTERNS = (Pattern.SELF, Pattern.PREVIOUS, Pattern.NEXT, Pattern.CLS, Pattern.SEP)
#: A head whose strongest pattern holds less than this share of each token's attention has no one role.
ROLE_SHARE = 0.3
#: Short names of the roles, for a list of several heads.
ROLE_SHORT = {Pattern.SELF: "itself", Pattern.PREVIOUS: "previous token", Pattern.NEXT: "next token",
              Pattern.CLS: "[CLS]", Pattern.SEP: "[SEP]"}


def head_role(scores: pd.DataFrame, layer: int, head: int) -> str:
    """``layer 3 head 5 looks at the previous token: 0.71 of each token's attention on average, the most of
    all 72 heads``, or that it spreads its attention with no one pattern."""
    row = scores[(scores["layer"] == layer) & (scores["head"] == head)].iloc[0]
    best = max(ROLE_PATTERNS, key=lambda p: float(row[p.value]))
    value = float(row[best.value])
    rank = int((scores[best.value] > value).sum()) + 1
    focus = int((scores[ENTROPY] < float(row[ENTROPY])).sum()) + 1
    n = len(scores)
    if value < ROLE_SHARE:
        return (f"layer {layer} head {head} has no one role: its strongest pattern ({best.value}) holds only "
                f"{value:.2f} of each token's attention, and it is the {_ordinal(focus)} most focused of {n} heads "
                f"({float(row[ENTROPY]):.2f} bits per row)")
    place = "the most of all" if rank == 1 else f"the {_ordinal(rank)} most of"
    return (f"layer {layer} head {head} {PHRASES[best]}: {value:.2f} of each token's attention on average, "
            f"{place} {n} heads")


def _roles(scores: pd.DataFrame, cells: list[tuple[int, int]], label: str) -> str:
    parts = []
    for layer, head in cells:
        row = scores[(scores["layer"] == layer) & (scores["head"] == head)].iloc[0]
        best = max(ROLE_PATTERNS, key=lambda p: float(row[p.value]))
        value = float(row[best.value])
        name = head if label == "head" else layer
        parts.append(f"{label} {name}: {ROLE_SHORT[best]} {value:.2f}" if value >= ROLE_SHARE else
                     f"{label} {name}: broad")
    return "; ".join(parts)


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _answer(f: AttentionMaps) -> str:
    """The first sentence: what the heads asked about do."""
    if f.view is View.HEAD and f.layer is not None and f.head is not None:
        role = head_role(f.scores, f.layer, f.head)
        return f"{role[0].upper()}{role[1:]} ({f.model}, over this text's {len(f.tokens)} tokens)."
    if f.view is View.LAYER and f.layer is not None:
        cells = [(f.layer, h) for h in range(1, f.num_heads + 1)]
        return (f"What each head of layer {f.layer} mostly attends to ({f.model}; the share of each token's "
                f"attention, 'broad' under {ROLE_SHARE:.1f}): {_roles(f.scores, cells, 'head')}.")
    if f.view is View.HEAD_ACROSS_LAYERS and f.head is not None:
        cells = [(layer, f.head) for layer in range(1, f.num_layers + 1)]
        return (f"What head {f.head} mostly attends to in each layer ({f.model}; the share of each token's "
                f"attention, 'broad' under {ROLE_SHARE:.1f}): {_roles(f.scores, cells, 'layer')}.")
    return ""


def _attend_text(f: AttentionMaps) -> str:
    what = {
        View.HEAD: f"layer {f.layer} head {f.head}",
        View.LAYER: f"the {f.num_heads} heads of layer {f.layer}",
        View.HEAD_ACROSS_LAYERS: f"head {f.head} in each of the {f.num_layers} layers",
        View.MODEL: f"every layer x head ({f.num_layers} x {f.num_heads})",
    }[f.view]
    parts = [_answer(f)] if _answer(f) else []
    parts += [(f"Attention of **{f.model}** over {len(f.tokens)} tokens, showing {what} "
              "(layers and heads numbered from 1; queries on rows, keys on columns).")]
    if f.pair:
        a = [i for i, s in enumerate(f.segments) if s == "A"]
        b = [i for i, s in enumerate(f.segments) if s == "B"]
        parts.append(f"Pair: segment A is positions {a[0]}–{a[-1]}, segment B {b[0]}–{b[-1]} "
                     "(labels end in ·A / ·B)." if a and b else "Pair input (labels end in ·A / ·B).")
    parts.append("Strongest heads: " + "; ".join(describe_strongest(f.scores)) + ".")
    if f.grid is not None:
        what = ("every weight" if f.grid.block == 1 else
                f"the tokens in blocks of {f.grid.block} (attention summed over a block's keys, averaged over its "
                "queries)")
        parts.append(f"The maps show {what} of each drawn head (click one to open it in the head view below "
                     "them, hover a token there for its lines); the chart shows what each head does.")
    else:
        parts.append(f"Chart: {f.chart.note}." if f.chart.note else "Chart: every weight is shown.")
    parts.append(f"Download: the attention tensor {tuple(f.weights.shape)} as .npy and the chart spec.")
    return " ".join(parts)


# --- selfattn -------------------------------------------------------------------------------

def selfattn(f: RebuiltAttention | ToyAttention) -> Result:
    """The rebuilt layer against the model's (or the toy): differences, shapes, checks, a chart, downloads."""
    if isinstance(f, ToyAttention):
        return _toy(f)
    h, d = f.heads, f.hidden_size // f.heads
    worst = float(f.differences.max())
    diffs = pd.DataFrame({"layer": f.layer, "head": range(1, h + 1), "max |rebuilt - model|": f.differences,
                          "within 1e-5": f.within})
    tables = [Table("difference from the model", diffs), Table("shapes", _shapes(f.shapes, f.layer))]
    causal_note = ""
    if f.checks is not None:
        tables.append(Table("causal check", f.checks))
        causal_note = (
            f" With the causal mask every weight above the diagonal is "
            f"{float(f.checks['max weight above diagonal'].max()):.1g} and every row sums to 1 (worst error "
            f"{float(f.checks['max |row sum - 1|'].max()):.1e}); the model itself is bidirectional, so only the "
            "unmasked weights are compared with it."
        )
    data = f.chart
    chart = charts.attention_grid(data.frame, order=data.order, row=None, column="weights",
                                  cell=min(320, max(160, 12 * len(data.order))),
                                  title=f"{f.model} layer {f.layer} head {f.head}")
    verdict = "match" if f.within.all() else "DO NOT match"
    text = (
        f"Rebuilt **layer {f.layer}** of **{f.model}** by hand (layers and heads numbered from 1): hidden state "
        f"{f.layer - 1} ({f.tokens} x {f.hidden_size}) times the layer's own query, key and value weights, split "
        f"into {h} heads of {d} dimensions, softmax(QK^T / sqrt({d})) over the keys. Largest difference from the "
        f"model's attention over all {h} heads: **{worst:.2e}**, so they {verdict} (tolerance 1e-5)."
        + causal_note
        + f" The chart shows head {f.head}" + (f" ({data.note})." if data.note else ".")
        + f" Download: the rebuilt weights {tuple(f.weights.shape)} as .npy and the chart spec."
    )
    return Result(
        "selfattn", text, tables, [Chart("selfattn", chart)], f.warnings, f.model,
        settings={"layer": f.layer, "head": f.head, "causal": f.causal, "heads": h, "numbering": "1-based",
                  "max_abs_diff": worst},
        artifacts=[npy_artifact("selfattn-weights.npy", f.weights),
                   spec_artifact("selfattn-chart.vl.json", chart)],
    )


def _shapes(s: Shapes, layer: int) -> pd.DataFrame:
    """Every step's shape as a table of step and shape."""
    def x(shape: tuple[int, ...]) -> str:
        return " x ".join(str(n) for n in shape)

    h, t, _ = s.split
    rows = [
        (f"input: hidden state {layer - 1}", x(s.hidden)),
        ("query / key / value weights (each, out x in)", x(s.weight)),
        ("Q, K, V split into heads", x(s.split)),
        ("attention weights softmax(Q K^T / sqrt(d))", x(s.weights)),
        ("per-head output (weights @ V)", f"{t} x {s.context[1] // h} (each of {h} heads)"),
        ("concatenated output", x(s.context)),
    ]
    return pd.DataFrame(rows, columns=["step", "shape"])


def _toy(f: ToyAttention) -> Result:
    t, width, d = f.tokens, f.hidden_size, f.hidden_size // f.heads
    per_head = f.checks.assign(**{
        "q/k/v weights": f"{width} x {d}",
        "output shape": f"{t} x {d}",
    })
    data = f.chart
    chart = charts.attention_grid(data.frame, order=data.order, row=None, column="toy head", cell=110,
                                  title=f"TOY: {f.heads} heads with random projections (not {f.model}'s weights)")
    text = (
        f"**TOY, not the model's attention:** hidden state {f.layer - 1} of **{f.model}** ({t} x {width}) "
        f"split into **{f.heads} heads** of {d} dimensions with *random* query/key/value projections "
        f"(seed {f.seed}; {f.model} itself has {f.model_heads} heads, so nothing here is compared with it). "
        f"Each head outputs {t} x {d}; concatenated, {t} x {f.heads * d}."
        + (" The causal mask is applied: zero above the diagonal, rows summing to 1." if f.causal else "")
        + f" The chart shows {'the first 12' if f.heads > 12 else 'all'} toy heads"
        + (f" ({data.note})." if data.note else ".")
    )
    return Result(
        "selfattn", text, [Table("toy heads", per_head), Table("shapes", _shapes(f.shapes, f.layer))],
        [Chart("selfattn toy", chart)], f.warnings, f.model,
        settings={"layer": f.layer, "causal": f.causal, "heads": f.heads, "toy": True, "seed": f.seed,
                  "numbering": "1-based"},
        artifacts=[npy_artifact("selfattn-toy-weights.npy", f.weights),
                   spec_artifact("selfattn-chart.vl.json", chart)],
    )


# --- syntax ---------------------------------------------------------------------------------

def syntax(f: SyntaxAgreement) -> Result:
    """The top heads, the relations, the parse, every head, a layer x head heatmap and the downloads."""
    best = f.top.iloc[0]
    closest = f.scores.sort_values(RHO).iloc[0]
    chart = charts.heatmap(
        f.scores, "head", "layer", ARC_SHARE,
        title=f"{f.model}: share of attention along dependency arcs (rows: layer, columns: head)",
        tooltip=["layer", "head", DEP_TO_HEAD, HEAD_TO_DEP, RHO],
        x_order=list(range(1, f.num_heads + 1)), y_order=list(range(1, f.num_layers + 1)),
        domain=(0.0, 1.0), size=300,
    )
    sample = (f" ρ is computed on a fixed random sample of {f.rho_sample:,} of the {f.rho_pairs:,} word pairs."
              if f.rho_pairs > f.rho_sample else "")
    text = (
        f"Parsed {f.words} words ({f.sentences} sentence{'s' if f.sentences != 1 else ''}) with spaCy "
        f"`{f.parser}` and aligned them to {f.pieces} word pieces of **{f.model}** by character "
        "offsets (word attention: summed over a word's pieces, averaged over its own, [CLS]/[SEP] left out; "
        "layers and heads numbered from 1). "
        f"**Layer {int(best['layer'])} head {int(best['head'])}** follows dependency arcs most: "
        f"{best[ARC_SHARE]:.0%} of a word's attention to other words goes to words it shares an arc with "
        f"(chance: {f.chance:.0%}). "
        + (f"Attention falls most with tree distance in layer {int(closest['layer'])} head "
           f"{int(closest['head'])} (Spearman ρ = {closest[RHO]:.2f}). " if pd.notna(closest[RHO]) else "")
        + "The relations table names the best head for each arc type."
        + sample
    )
    return Result(
        "syntax", text,
        [Table("top heads", f.top), Table("relations", f.relations), Table("parse", f.parse),
         Table("heads", f.scores)],
        [Chart("arc share", chart)], f.warnings, f.model,
        settings={"parser": f.parser, "numbering": "1-based", "words": f.words,
                  "word attention": "sum over key pieces, mean over query pieces, specials left out"},
        artifacts=[npy_artifact("syntax-word-attention.npy", f.word_attention.astype(np.float32)),
                   spec_artifact("syntax-chart.vl.json", chart)],
    )


# --- two models side by side (`--vs`) --------------------------------------------------------

def attend_difference(a: AttentionMaps, b: AttentionMaps, names: tuple[str, str]) -> str:
    """Where the strongest head of each pattern moves between two models, and the largest score gap."""
    sa, sb = attend(a).table("patterns"), attend(b).table("patterns")
    patterns = [c for c in sa.columns if c not in ("layer", "head") and not c.startswith("entropy")]
    moved = []
    for p in patterns:
        ra, rb = sa.loc[sa[p].idxmax()], sb.loc[sb[p].idxmax()]
        if (ra["layer"], ra["head"]) != (rb["layer"], rb["head"]):
            moved.append(f"{p}: layer {int(ra['layer'])} head {int(ra['head'])} ({ra[p]:.2f}) vs layer "
                         f"{int(rb['layer'])} head {int(rb['head'])} ({rb[p]:.2f})")
    text = ("the strongest head for each pattern is the same in both" if not moved
            else "the strongest head moves for " + "; ".join(moved))
    if sa.shape == sb.shape:
        gap = np.abs(sa[patterns].to_numpy(float) - sb[patterns].to_numpy(float))
        k = np.unravel_index(int(gap.argmax()), gap.shape)
        text += (f"; per-head pattern scores differ by at most {float(gap.max()):.4f} (layer "
                 f"{int(sa['layer'][k[0]])} head {int(sa['head'][k[0]])}, {patterns[k[1]]})")
    return text + "."


def attend_versus_charts(a: AttentionMaps, b: AttentionMaps, names: tuple[str, str]) -> list[Chart]:
    """Both models' pattern scores in one chart, then, for one head, both heatmaps side by side (views of
    several heads are rasters each model's own reply draws: twice is too much for one reply)."""
    ra, rb = attend(a), attend(b)
    frames = []
    for name, r in zip(names, (ra, rb)):
        scores = r.table("patterns")
        patterns = [c for c in scores.columns if c not in ("layer", "head", "entropy (bits)", "entropy")]
        long = scores.melt(id_vars=["layer", "head"], value_vars=patterns, var_name="pattern", value_name="score")
        frames.append(long.assign(model=name))
    chart = why_charts.pattern_heatmaps(pd.concat(frames, ignore_index=True),
                                        title="What each head does (mean attention on each pattern)")
    out = [Chart("patterns", chart)]
    if ra.settings.get("view") != View.HEAD.value:
        return out
    return out + pairs.side_by_side(ra.charts, rb.charts, names)
