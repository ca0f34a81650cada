"""Attention maps: one head, one layer's heads, every layer x head, and what each head does.

Numbering: layers and heads are **1-based** everywhere in this toolkit's attention
commands (``--layer 1`` is the first transformer layer, ``--head 1`` its first
head), so "layer 2 head 5" in a reply is exactly ``--layer 2 --head 5``. Layer L's
attention is the one that turns hidden state L-1 into hidden state L, which matches
the hidden-state numbering of the other commands (0 = embeddings).
"""

from __future__ import annotations

from collections.abc import Sequence

from tools.attention import replies
from tools.attention.facts import AttentionMaps, ChartData, View
from tools.attention.grids import head_grid
from tools.attention.inputs import (
    check_attention_layer,
    check_head,
    check_text,
    encode_one,
    positions,
    segments,
    token_labels,
)
from tools.attention.patterns import chart_data, pattern_rows, pattern_scores
from tools.core import cancel
from tools.core.timing import answer
from tools.models.hub import LoadedModel, as_model

# --- the command ----------------------------------------------------------------------------

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


def attention_maps(
    model: LoadedModel | str | None,
    texts: Sequence[str],
    layer: int | None = None,
    head: int | None = None,
) -> AttentionMaps:
    """Attention maps and per-head pattern scores for one text or a sentence pair.

    Args:
        model: a loaded model or its name.
        texts: one text, or two texts encoded as a pair (segments A and B).
        layer: attention layer, 1-based (default: every layer).
        head: head within a layer, 1-based (default: every head).

    Returns:
        The facts; ``attend`` (the same call) answers with a Result:
        A pattern table (one row per head: self, previous, next, to [CLS], to [SEP],
        [CLS] reads text, entropy), the tokens, and one head's heatmap (--layer and
        --head); for several heads (a layer's heads, one head in every layer, every
        layer x head) every weight of every drawn head as a raster the page draws, with
        its head view, and a chart of the drawn heads' pattern scores. Downloads: the
        raw attention tensor of the view (``.npy``) and the chart's Vega-Lite spec.
    """
    lm = as_model(model)
    check_text(texts, "attend")
    check_attention_layer(lm, layer)
    check_head(lm, head)
    enc, warnings = encode_one(lm, texts)
    cancel.check()  # the model view's chart of every layer x head is the long part of a long text
    assert enc.attentions is not None, "encode_one refuses an encoding without them"
    attn = enc.attentions.numpy()  # (L, H, T, T)
    scores = pattern_scores(attn, positions(lm, enc))
    view = pick_view(layer, head)
    pairs = view_panels(lm, view, layer, head)
    labels = token_labels(enc)
    grid = None
    if view is View.HEAD:
        data = chart_data([({"layer": lay, "head": hd}, attn[lay - 1, hd - 1]) for lay, hd in pairs], labels)
    else:  # every weight of every drawn head as a raster; the chart holds what each head does
        grid = head_grid(attn, enc.tokens, sorted({p[0] for p in pairs}), sorted({p[1] for p in pairs}))
        data = ChartData(pattern_rows(scores, pairs), [], "")
    tensor = attn[[lay - 1 for lay, _ in pairs], [hd - 1 for _, hd in pairs]]
    tensor = tensor.reshape(len({p[0] for p in pairs}), len({p[1] for p in pairs}), *attn.shape[2:])
    if view is View.HEAD:
        tensor = tensor[0, 0]
    return AttentionMaps(lm.name, lm.num_layers, lm.num_heads, tuple(enc.tokens), tuple(segments(enc)),
                         tuple(labels), enc.pair is not None, view, layer, head, scores, data, tensor, grid,
                         warnings)


#: The one-call tool: :func:`attention_maps` answered as a Result by the family's formatter.
attend = answer(attention_maps, replies.attend, "attend")
