"""Attention maps: one head, one layer's heads, every layer x head, and what each head does.

Numbering: layers and heads are **1-based** everywhere in this toolkit's attention
commands (``--layer 1`` is the first transformer layer, ``--head 1`` its first
head), so "layer 2 head 5" in a reply is exactly ``--layer 2 --head 5``. Layer L's
attention is the one that turns hidden state L-1 into hidden state L, which matches
the hidden-state numbering of the other commands (0 = embeddings).
"""

from __future__ import annotations

import io
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

import altair as alt
import numpy as np
import pandas as pd

from tools import cancel, charts
from tools.errors import UserError
from tools.hub import LoadedModel, as_model
from tools.results import Artifact, Chart, Result, Table
from tools.timing import timed
from tools.vectors import Encoded, encode

#: Top-k aggregation keeps at least this many keys per query; below that, blocks are averaged.
MIN_TOP_K = 3


# --- validation --------------------------------------------------------------------------

def check_attention_layer(lm: LoadedModel, layer: int | None) -> int | None:
    """Validate a 1-based attention layer number (None stays None)."""
    if layer is not None and not 1 <= layer <= lm.num_layers:
        raise UserError(
            f"--layer {layer} is out of range: {lm.name} has attention layers 1 to {lm.num_layers} "
            "(numbered from 1)."
        )
    return layer


def check_head(lm: LoadedModel, head: int | None) -> int | None:
    """Validate a 1-based head number (None stays None)."""
    if head is not None and not 1 <= head <= lm.num_heads:
        raise UserError(
            f"--head {head} is out of range: {lm.name} has heads 1 to {lm.num_heads} in each layer "
            "(numbered from 1)."
        )
    return head


def check_text(texts: Sequence[str], verb: str, most: int = 2) -> None:
    """One non-blank text (or a pair when ``most`` is 2)."""
    if not 1 <= len(texts) <= most:
        shape = "one text or a pair `a | b`" if most == 2 else "one text"
        raise UserError(f"`{verb}` takes {shape}; got {len(texts)} texts.")
    for i, t in enumerate(texts):
        if not t.strip():
            raise UserError(f"Text {i + 1} is empty: give `{verb}` a sentence, like `{verb} The cat sat on the mat`.")


def encode_one(lm: LoadedModel, texts: Sequence[str]) -> tuple[Encoded, list[str]]:
    """Encode one text (or pair) with attentions; a truncation warning when it was cut."""
    pair = [texts[1]] if len(texts) == 2 else None
    enc = encode(lm, [texts[0]], pair, attentions=True)[0]
    if enc.attentions is None or enc.attentions.numel() == 0:
        raise UserError(f"{lm.name} returned no attention weights; load a BERT-style model with eager attention.")
    warnings = []
    if enc.dropped:
        warnings.append(
            f"The input was truncated to {lm.max_tokens} tokens ({lm.name}'s limit): {enc.dropped} tokens "
            "at the end were dropped and are not in the attention maps."
        )
    return enc, warnings


# --- token positions and labels -------------------------------------------------------------

@dataclass(frozen=True)
class Positions:
    """Where the special tokens are: ``cls`` and ``sep`` positions, and every text token."""

    cls: list[int]
    sep: list[int]
    text: list[int]


def positions(lm: LoadedModel, enc: Encoded) -> Positions:
    """Find [CLS]/[SEP] (or <s>/</s>) and the text tokens of an encoding."""
    tok = lm.tokenizer
    cls_id = tok.cls_token_id if tok.cls_token_id is not None else tok.bos_token_id
    sep_id = tok.sep_token_id if tok.sep_token_id is not None else tok.eos_token_id
    ids = [int(i) for i in enc.input_ids]
    return Positions(
        cls=[i for i, t in enumerate(ids) if t == cls_id],
        sep=[i for i, t in enumerate(ids) if t == sep_id],
        text=[i for i, s in enumerate(enc.sequence_ids) if s is not None],
    )


def segments(enc: Encoded) -> list[str]:
    """``A`` / ``B`` per token of a pair ("" for special tokens and for single texts)."""
    if enc.pair is None:
        return [""] * len(enc.tokens)
    return ["" if s is None else "AB"[s] for s in enc.sequence_ids]


def token_labels(enc: Encoded) -> list[str]:
    """Unique axis labels: position, token and, for a pair, its segment (``3 cat ·A``)."""
    segs = segments(enc)
    return [f"{i} {t}" + (f" ·{s}" if s else "") for i, (t, s) in enumerate(zip(enc.tokens, segs))]


# --- pattern scores --------------------------------------------------------------------------

class Pattern(str, Enum):
    """What a head may do; each value is a column of the pattern table."""

    SELF = "self"
    PREVIOUS = "previous"
    NEXT = "next"
    CLS = "to [CLS]"
    SEP = "to [SEP]"
    CLS_READS = "[CLS] reads text"


#: How a reply describes a head that scores high on a pattern.
PHRASES: dict[Pattern, str] = {
    Pattern.SELF: "attends to the token itself",
    Pattern.PREVIOUS: "looks at the previous token",
    Pattern.NEXT: "looks at the next token",
    Pattern.CLS: "sends attention to [CLS]",
    Pattern.SEP: "sends attention to [SEP]",
    Pattern.CLS_READS: "tells [CLS] about the text (its [CLS] row goes to text tokens)",
}

ENTROPY = "entropy (bits)"


def pattern_scores(attn: np.ndarray, pos: Positions) -> pd.DataFrame:
    """One row per head: how much of each query's attention follows each pattern.

    Args:
        attn: attention weights (layers, heads, T, T), rows summing to 1.
        pos: special-token and text positions.

    Returns:
        Columns ``layer``, ``head`` (both 1-based), one column per :class:`Pattern`
        (mean weight over queries: on the diagonal, on position i-1, on i+1, summed
        over [CLS] / [SEP] keys, and the [CLS] row's total on text tokens), and the
        mean row entropy in bits (0 = every query looks at one key; log2 T = uniform).
    """
    n_layers, n_heads, t, _ = attn.shape
    idx = np.arange(t)
    scores = {
        Pattern.SELF: attn[..., idx, idx].mean(-1),
        Pattern.PREVIOUS: attn[..., idx[1:], idx[:-1]].mean(-1) if t > 1 else np.zeros((n_layers, n_heads)),
        Pattern.NEXT: attn[..., idx[:-1], idx[1:]].mean(-1) if t > 1 else np.zeros((n_layers, n_heads)),
        Pattern.CLS: attn[..., pos.cls].sum(-1).mean(-1) if pos.cls else np.zeros((n_layers, n_heads)),
        Pattern.SEP: attn[..., pos.sep].sum(-1).mean(-1) if pos.sep else np.zeros((n_layers, n_heads)),
        Pattern.CLS_READS: (attn[..., pos.cls[0], :][..., pos.text].sum(-1)
                            if pos.cls and pos.text else np.zeros((n_layers, n_heads))),
    }
    p = np.clip(attn, 1e-30, 1.0)
    entropy = -(attn * np.log2(p)).sum(-1).mean(-1)
    layer, head = np.meshgrid(np.arange(1, n_layers + 1), np.arange(1, n_heads + 1), indexing="ij")
    frame = pd.DataFrame({"layer": layer.ravel(), "head": head.ravel()})
    for pattern, values in scores.items():
        frame[pattern.value] = np.round(values.ravel().astype(float), 6)
    frame[ENTROPY] = np.round(entropy.ravel().astype(float), 4)
    return frame


def strongest(scores: pd.DataFrame) -> dict[Pattern, tuple[int, int, float]]:
    """For each pattern, the (layer, head, score) of the head that scores highest."""
    best = {}
    for pattern in Pattern:
        row = scores.loc[scores[pattern.value].idxmax()]
        best[pattern] = (int(row["layer"]), int(row["head"]), float(row[pattern.value]))
    return best


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


# --- chart data: exact, top-k or block-averaged ------------------------------------------------

@dataclass(frozen=True)
class ChartData:
    """Tidy rows for attention heatmaps, and how they were reduced to fit the row limit."""

    frame: pd.DataFrame
    order: list[str]
    note: str  # "" when every weight is shown


def chart_data(panels: Sequence[tuple[dict[str, object], np.ndarray]], labels: list[str],
               max_rows: int = charts.MAX_ROWS) -> ChartData:
    """Turn (T, T) attention matrices into one tidy frame under ``max_rows`` rows.

    Each panel is (its key columns, e.g. ``{"layer": 2, "head": 5}``, its matrix). When
    every weight fits, every weight is a row. Otherwise each query keeps its top-k keys
    (k >= 3), or, when even that is too many rows, tokens are grouped into equal blocks
    and each cell is the block's attention summed over its keys and averaged over its
    queries (so block rows still sum to 1).
    """
    t = len(labels)
    budget = max(1, max_rows // max(1, len(panels)))
    if t * t <= budget:
        return ChartData(_exact(panels, labels), labels, "")
    k = budget // t
    if k >= MIN_TOP_K:
        frame, covered = _top_k(panels, labels, k)
        note = (f"each query shows its top {k} keys of {t} (they hold {covered:.0%} of the attention on "
                f"average) to keep the chart under {max_rows:,} rows")
        return ChartData(frame, labels, note)
    blocks = max(1, math.isqrt(budget))
    size = math.ceil(t / blocks)
    frame, order = _blocks(panels, labels, size)
    note = (f"tokens are grouped into blocks of {size} (attention summed over a block's keys, averaged over "
            f"its queries) to keep the chart under {max_rows:,} rows")
    return ChartData(frame, order, note)


def _frame(panels, index: np.ndarray, q: np.ndarray, k: np.ndarray, w: np.ndarray,
           q_names: Sequence[str], k_names: Sequence[str]) -> pd.DataFrame:
    """One tidy frame from flat arrays: panel index, query index, key index, weight."""
    keys = [keys for keys, _ in panels]
    columns: dict[str, object] = {
        name: np.asarray([kv[name] for kv in keys])[index] for name in keys[0]
    }
    columns["query"] = np.asarray(q_names, dtype=object)[q]
    columns["key"] = np.asarray(k_names, dtype=object)[k]
    columns["weight"] = np.round(w.astype(float), 4)
    return pd.DataFrame(columns)


def _exact(panels, labels) -> pd.DataFrame:
    stack = np.stack([m for _, m in panels])  # (P, T, T)
    p, t, _ = stack.shape
    index, q, k = (a.ravel() for a in np.meshgrid(np.arange(p), np.arange(t), np.arange(t), indexing="ij"))
    return _frame(panels, index, q, k, stack.ravel(), labels, labels)


def _top_k(panels, labels, k) -> tuple[pd.DataFrame, float]:
    stack = np.stack([m for _, m in panels])  # (P, T, T)
    p, t, _ = stack.shape
    top = np.argsort(-stack, axis=-1, kind="stable")[..., :k]  # (P, T, k)
    w = np.take_along_axis(stack, top, axis=-1)
    covered = float(w.sum(-1).mean())
    index, q, _ = (a.ravel() for a in np.meshgrid(np.arange(p), np.arange(t), np.arange(k), indexing="ij"))
    return _frame(panels, index, q, top.ravel(), w.ravel(), labels, labels), covered


def _blocks(panels, labels, size) -> tuple[pd.DataFrame, list[str]]:
    t = len(labels)
    starts = list(range(0, t, size))
    names = [f"{s}–{min(s + size, t) - 1}" for s in starts]
    stack = np.stack([m for _, m in panels])  # (P, T, T)
    summed = np.add.reduceat(stack, starts, axis=2)  # attention to each key block
    counts = np.diff([*starts, t])
    averaged = np.add.reduceat(summed, starts, axis=1) / counts[None, :, None]  # (P, B, B)
    p, b, _ = averaged.shape
    index, q, k = (a.ravel() for a in np.meshgrid(np.arange(p), np.arange(b), np.arange(b), indexing="ij"))
    return _frame(panels, index, q, k, averaged.ravel(), names, names), names


# --- downloads ------------------------------------------------------------------------------

def npy_artifact(filename: str, array: np.ndarray) -> Artifact:
    """An array as ``.npy`` bytes (in memory; the renderer writes it)."""
    buffer = io.BytesIO()
    np.save(buffer, np.ascontiguousarray(array), allow_pickle=False)
    return Artifact(filename, buffer.getvalue(), "application/octet-stream")


def spec_artifact(filename: str, chart: alt.TopLevelMixin) -> Artifact:
    """A chart's Vega-Lite spec (data inlined) as JSON bytes."""
    return Artifact(filename, json.dumps(chart.to_dict()).encode(), "application/json")


# --- the command ----------------------------------------------------------------------------

class View(str, Enum):
    """Which heads a reply draws."""

    HEAD = "head"  # one heatmap
    LAYER = "layer"  # one layer's heads side by side
    HEAD_ACROSS_LAYERS = "head across layers"  # one head number in every layer
    MODEL = "model"  # every layer x head


def pick_view(layer: int | None, head: int | None) -> View:
    """--layer and --head -> the view (a dict-free, exhaustive mapping)."""
    if layer is not None:
        return View.HEAD if head is not None else View.LAYER
    return View.HEAD_ACROSS_LAYERS if head is not None else View.MODEL


def view_panels(lm: LoadedModel, view: View, layer: int | None, head: int | None) -> list[tuple[int, int]]:
    """The 1-based (layer, head) pairs a view draws."""
    layers = [layer] if layer is not None else list(range(1, lm.num_layers + 1))
    heads = [head] if head is not None else list(range(1, lm.num_heads + 1))
    return [(lay, hd) for lay in layers for hd in heads]


@timed("attend")
def attend(
    model: LoadedModel | str | None,
    texts: Sequence[str],
    layer: int | None = None,
    head: int | None = None,
) -> Result:
    """Attention maps and per-head pattern scores for one text or a sentence pair.

    Args:
        model: a loaded model or its name.
        texts: one text, or two texts encoded as a pair (segments A and B).
        layer: attention layer, 1-based (default: every layer).
        head: head within a layer, 1-based (default: every head).

    Returns:
        A pattern table (one row per head: self, previous, next, to [CLS], to [SEP],
        [CLS] reads text, entropy), the tokens, and one chart: one head's heatmap
        (--layer and --head), a layer's heads side by side (--layer), one head in
        every layer (--head) or every layer x head (neither). Downloads: the raw
        attention tensor of the view (``.npy``) and the chart's Vega-Lite spec.
    """
    lm = as_model(model)
    check_text(texts, "attend")
    check_attention_layer(lm, layer)
    check_head(lm, head)
    enc, warnings = encode_one(lm, texts)
    cancel.check()  # the model view's chart of every layer x head is the long part of a long text
    attn = enc.attentions.numpy()  # (L, H, T, T)
    pos = positions(lm, enc)
    scores = pattern_scores(attn, pos)
    view = pick_view(layer, head)
    pairs = view_panels(lm, view, layer, head)
    labels = token_labels(enc)
    data = chart_data([({"layer": lay, "head": hd}, attn[lay - 1, hd - 1]) for lay, hd in pairs], labels)
    chart = _view_chart(view, data, lm, layer, head)
    tensor = attn[[lay - 1 for lay, _ in pairs], [hd - 1 for _, hd in pairs]]
    tensor = tensor.reshape(len({p[0] for p in pairs}), len({p[1] for p in pairs}), *attn.shape[2:])
    if view is View.HEAD:
        tensor = tensor[0, 0]
    text = _summary(lm, enc, view, layer, head, scores, data, tensor.shape)
    tokens = pd.DataFrame({"position": range(len(enc.tokens)), "token": enc.tokens, "segment": segments(enc)})
    tables = [Table("patterns", scores), Table("tokens", tokens)]
    if view is View.HEAD:
        tables.insert(1, Table("weights", pd.DataFrame(np.round(tensor, 6), index=labels, columns=labels)
                               .reset_index(names="query \\ key")))
    return Result(
        "attend", text, tables, [Chart("attention", chart)], warnings, lm.name,
        settings={"layer": layer, "head": head, "view": view.value, "numbering": "1-based",
                  "tokens": len(enc.tokens), "chart": data.note or "every weight"},
        artifacts=[npy_artifact("attention.npy", tensor.astype(np.float32)),
                   spec_artifact("attention-chart.vl.json", chart)],
    )


def _view_chart(view: View, data: ChartData, lm: LoadedModel, layer: int | None, head: int | None):
    if view is View.HEAD:
        return charts.heatmap(
            data.frame, "key", "query", "weight", title=f"{lm.name} layer {layer} head {head}",
            tooltip=["query", "key"], x_order=data.order, y_order=data.order, domain=(0.0, 1.0),
            size=min(720, max(320, 14 * len(data.order))),
        )
    titles = {
        View.LAYER: f"{lm.name} layer {layer}: all {lm.num_heads} heads",
        View.HEAD_ACROSS_LAYERS: f"{lm.name} head {head} in every layer",
        View.MODEL: f"{lm.name}: every layer x head",
    }
    cell = 150 if view is not View.MODEL else 70
    return charts.attention_grid(data.frame, order=data.order, title=titles[view], cell=cell,
                                 row="layer" if view is not View.LAYER else None, column="head"
                                 if view is not View.HEAD_ACROSS_LAYERS else None)


def _summary(lm, enc, view, layer, head, scores, data, shape) -> str:
    what = {
        View.HEAD: f"layer {layer} head {head}",
        View.LAYER: f"the {lm.num_heads} heads of layer {layer}",
        View.HEAD_ACROSS_LAYERS: f"head {head} in each of the {lm.num_layers} layers",
        View.MODEL: f"every layer x head ({lm.num_layers} x {lm.num_heads})",
    }[view]
    parts = [f"Attention of **{lm.name}** over {len(enc.tokens)} tokens, showing {what} "
             "(layers and heads numbered from 1; queries on rows, keys on columns)."]
    if enc.pair is not None:
        segs = segments(enc)
        a = [i for i, s in enumerate(segs) if s == "A"]
        b = [i for i, s in enumerate(segs) if s == "B"]
        parts.append(f"Pair: segment A is positions {a[0]}–{a[-1]}, segment B {b[0]}–{b[-1]} "
                     "(labels end in ·A / ·B)." if a and b else "Pair input (labels end in ·A / ·B).")
    parts.append("Strongest heads: " + "; ".join(describe_strongest(scores)) + ".")
    parts.append(f"Chart: {data.note}." if data.note else "Chart: every weight is shown.")
    parts.append(f"Download: the attention tensor {tuple(shape)} as .npy and the chart spec.")
    return " ".join(parts)
