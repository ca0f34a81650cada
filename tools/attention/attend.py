"""Attention maps: one head, one layer's heads, every layer x head, and what each head does.

Numbering: layers and heads are **1-based** everywhere in this toolkit's attention
commands (``--layer 1`` is the first transformer layer, ``--head 1`` its first
head), so "layer 2 head 5" in a reply is exactly ``--layer 2 --head 5``. Layer L's
attention is the one that turns hidden state L-1 into hidden state L, which matches
the hidden-state numbering of the other commands (0 = embeddings).
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum

import numpy as np
import pandas as pd

from tools import charts
from tools.attention.inputs import (
    check_attention_layer,
    check_head,
    check_text,
    encode_one,
    npy_artifact,
    positions,
    segments,
    spec_artifact,
    token_labels,
)
from tools.attention.patterns import ChartData, chart_data, describe_strongest, pattern_scores
from tools.core import cancel
from tools.core.results import Chart, Result, Table
from tools.core.timing import timed
from tools.models.hub import LoadedModel, as_model

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
